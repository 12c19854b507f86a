// Small structural utilities over the expr IR for later stages (derivation
// rules, instantiation, code generation).
#pragma once

#include <functional>
#include <unordered_map>
#include <vector>

#include "ir/expr.h"

namespace orchid::expr {

// The iterators a scope binds: loop iterators in order, then sum iterators.
std::vector<IterRange> iterators(const ScopeNode& scope);

// Iterators referenced but not bound, in first-appearance order. Nested
// scopes are closed, so they are not entered.
std::vector<Expr> free_iterators(Expr e);

// Input tensors (TensorNodes) read anywhere in `e`, nested scopes included,
// in first-appearance order (depth first, left to right).
std::vector<Expr> free_tensors(Expr e);

// Scopes accessed as tensors anywhere below `e` (not `e` itself), innermost
// first: every scope comes after the scopes it reads.
std::vector<Expr> nested_scopes(Expr e);

// Rebuilds `e` with `fn` applied to each direct child, through the factories
// (so the result is interned and canonical). Children: affine atoms, the
// div/mod operand, binary operands, the call argument, the access source and
// indices, the scope body. Float division keeps float semantics even if both
// new operands are index expressions.
Expr map_children(Expr e, const std::function<Expr(Expr)>& fn);

// Simultaneous substitution of iterators by expressions (usually index
// expressions) in an open expression. Nested scopes are closed and left as
// they are; substituting into a scope itself is refused: substitute into its
// body and build a new scope.
Expr substitute(Expr e, const std::unordered_map<Expr, Expr>& replacements);
Expr substitute(Expr e, Expr iterator, Expr replacement);

}  // namespace orchid::expr
