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
  std::string why_not;
};

// Matches `scope` against MatMul (with batch dimensions), Conv (any stride,
// dilation, padding, groups; spatial dims formed by a loop iterator and a
// tap iterator: A[.., s*o + d*t - p, ..]), G2BMM and GBMM.
PatternMatch match_operator(const expr::ScopeNode& scope);

}  // namespace orchid::derivation
