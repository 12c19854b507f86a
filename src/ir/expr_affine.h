// Affine index expressions: the canonical form behind hash-consing of index
// arithmetic, and the coefficient view later stages read (strides of an
// iterator in an access, the iterator mapping table).
//
// Canonical form (what the factories in expr.h produce):
//   sum_i coef_i * atom_i + constant
// with atoms (iterators, floor-div and mod nodes) distinct and sorted by
// compare_index, coefficients nonzero. Floor-div and mod by c > 0 are
// normalized by integer identities valid for every integer point:
//   floor((c*Q + R) / c) = Q + floor(R / c)      (Q, R integer affine)
//   (c*Q + R) mod c      = R mod c
// so the operand kept under the division has coefficients and constant in
// [0, c); then a common factor g of c and all coefficients is divided out:
//   floor((g*X + k) / (g*c)) = floor((X + floor(k/g)) / c)
//   (g*X + k) mod (g*c)      = g*((X + floor(k/g)) mod c) + (k mod g)
// and floor(floor(x / a) / b) = floor(x / (a*b)).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/expr.h"

namespace orchid::expr {

struct AffineForm {
  std::vector<AffineTerm> terms;  // not necessarily canonical
  int64_t constant = 0;
};

// The affine view of an index expression (an atom is 1*atom + 0).
AffineForm affine_form(Expr index);

// Builds the canonical node for sum(terms) + constant. Terms whose atom is
// itself affine are expanded; equal atoms are merged.
Expr make_affine(AffineForm form);

// Coefficient of `atom` (usually an iterator) in `index`; 0 when absent.
int64_t coefficient_of(Expr index, Expr atom);

// Canonical floor(index / divisor) and index mod divisor, divisor > 0.
Expr floor_div_index(Expr index, int64_t divisor);
Expr mod_index(Expr index, int64_t divisor);

// A deterministic total order on index expressions (names and structure, not
// addresses): negative, zero or positive like strcmp. Zero iff identical.
int compare_index(Expr a, Expr b);

// Floor division, floor modulo and ceiling division on integers (divisor > 0).
int64_t floor_div_int(int64_t a, int64_t b);
int64_t floor_mod_int(int64_t a, int64_t b);
int64_t ceil_div_int(int64_t a, int64_t b);

}  // namespace orchid::expr
