// Instantiation: a derivation state becomes primitives. Compute scopes
// (sums of products of two operands) become library operators (MatMul,
// Conv, ai.orchid G2BMM / GBMM) with their operands laid out by layout
// primitives; memory-bound scopes (index maps, offset sums, reductions of
// single terms) become layout, elementwise and reduce primitives that
// orchestration fuses like any other. Layout work on constant operands
// (weights) is folded at compile time by the builder.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "derivation/iterator_table.h"
#include "fission/builder.h"

namespace orchid::derivation {

// A scope needs a library operator when it sums, over its Sum iterators, a
// product of two factors that both vary with them (the O(n^3) work);
// otherwise it is memory-bound.
bool is_compute_scope(const expr::ScopeNode& scope);
// The compute scopes of a state, innermost first.
std::vector<const expr::ScopeNode*> compute_scopes(Expr state);

// Whether `state` can be instantiated with every compute scope as a library
// operator: the derivation search's goal. *why_not says what blocks it.
bool instantiable(Expr state, std::string* why_not = nullptr);

// The operators `state` instantiates to, one line per scope (innermost
// first): "MatMul [49x512]x[512x4608]", "memory-bound offset sum (9 terms)".
std::vector<std::string> describe_instantiation(Expr state);

// Emits `state` into the graph behind `builder`. `inputs` binds the state's
// tensors (by name) to graph values of the same shape. Returns the value of
// the root scope: shape = the root's loop extents (its loops must start at
// 0), dtype float32. orchid::Error when not instantiable.
ValueId instantiate(Expr state, const std::map<std::string, ValueId, std::less<>>& inputs,
                    fission::FissionBuilder& builder);

}  // namespace orchid::derivation
