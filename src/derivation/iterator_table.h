// OLLIE's iterator mapping table: for a compute scope whose body is a
// product of two accesses (times a constant), every iterator is classified by
// the operands it appears in (A, B, the output) and by how: alone in one
// index dimension, or combined with other iterators in one dimension (as in
// A[n, c, h + r - 1]). Operator patterns are rows of this table; a match
// gives the operator's parameters, a mismatch tells guided derivation which
// rule moves the scope towards the pattern.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "derivation/analysis.h"

namespace orchid::derivation {

struct IteratorRow {
  Expr iter = nullptr;
  Interval range;
  bool is_sum = false;       // a Sum iterator (else a loop iterator: in the output)
  bool in_a = false, in_b = false;
  bool combined_a = false;   // appears in A inside a dimension with other iterators
  bool combined_b = false;
};

struct IteratorTable {
  const expr::AccessNode* a = nullptr;  // the two factors of the body, in body order
  const expr::AccessNode* b = nullptr;
  double scale = 1;                     // the constant factor, if any
  std::vector<IteratorRow> rows;        // loops in order, then sums
};

// The table of `scope`, or nullopt when the body is not (c *) A[...] * B[...].
std::optional<IteratorTable> iterator_table(const expr::ScopeNode& scope);

// The library operators derivation instantiates.
enum class LinearOp { MatMul, Conv, G2BMM, GBMM };
const char* linear_op_name(LinearOp op);

// The result of matching a scope against the operator patterns.
struct PatternMatch {
  std::optional<LinearOp> op;  // the operator matched, if any
  // When no operator matched: the mismatched rows (iterator names) and a
  // short reason per pattern, for guided derivation and reports.
  std::vector<std::string> mismatched_iters;
  // Mismatched rows summed over the patterns (each at least 1): the distance
  // guided derivation lowers; fixing any pattern's row shows.
  size_t pattern_rows = 0;
  std::string why_not;
};

// Matches `scope` against MatMul (with batch dimensions), Conv (any stride,
// dilation, padding, groups; spatial dims formed by a loop iterator and a
// tap iterator: A[.., s*o + d*t - p, ..]), G2BMM and GBMM.
PatternMatch match_operator(const expr::ScopeNode& scope);

// One spatial dimension of a Conv match: A's index stride*out + dilation*tap
// + constant in dimension a_dim; tap alone in B.
struct ConvSpatial {
  expr::IterRange out, tap;
  int64_t stride = 1, dilation = 1;
  size_t a_dim = 0;
};

// A match with the operator's parameters: the iterators of each role, in
// the order they are flattened into the operator's dimension. Roles:
//   MatMul  out[batch, rows, cols]  = Sum_reduce a[batch, rows, reduce] * b[batch, reduce, cols]
//   Conv    out[batch, groups, cols, o...]
//                                   = Sum_{reduce, taps} a[batch, groups, reduce, x...] * b[groups, cols, reduce, taps]
//           (a grouped Conv when `groups` is not empty: loop iterators in both operands, in A alone or
//           as g*C + c with c a reduce iterator of extent C)
//   G2BMM   out[batch, m, band]     = Sum_reduce a[batch, m, reduce] * b[batch, m + d*band + c, reduce]
//   GBMM    out[batch, m, cols]     = Sum_band a[batch, m, band] * b[batch, m + d*band + c, cols]
// Loop iterators in neither operand (the output is constant along them) are
// in `broadcast`. a and b are the operands in the operator's order (which
// may differ from the body's).
struct LinearMatch {
  LinearOp op = LinearOp::MatMul;
  const expr::AccessNode* a = nullptr;
  const expr::AccessNode* b = nullptr;
  double scale = 1;
  std::vector<expr::IterRange> batch, rows, cols, reduce, broadcast;
  std::vector<expr::IterRange> groups;  // Conv
  std::vector<ConvSpatial> spatial;  // Conv
  expr::IterRange band;              // G2BMM / GBMM: w
  int64_t dilation = 1;              // G2BMM / GBMM
  size_t b_band_dim = 0;             // G2BMM / GBMM: B's dimension m + d*w + c
};

// The first operator `scope` matches, with its parameters; nullopt (and the
// mismatch in *report when given) otherwise.
std::optional<LinearMatch> match_linear(const expr::ScopeNode& scope, PatternMatch* report = nullptr);

}  // namespace orchid::derivation
