// The exactness check of derivation: two expressions are compared by the
// reference evaluator (ir/expr_eval.h) on the same random inputs. Tests run
// it on every rule's rewrites; debug builds of the search run it on every
// step it takes.
#pragma once

#include <cstdint>
#include <string>

#include "ir/expr.h"

namespace orchid::derivation {

// Empty when `before` and `after` (scopes reading the same input tensors by
// name) denote the same function on random inputs drawn from `seed`, within
// `tolerance` relative to the largest magnitude; else what differs and where.
// Both must fit the evaluator (small shapes).
std::string check_equivalent(expr::Expr before, expr::Expr after, uint64_t seed = 1, double tolerance = 1e-9);

// Whether the loop boxes match too (what a rewrite of the root must keep).
bool same_loop_box(expr::Expr before, expr::Expr after);

}  // namespace orchid::derivation
