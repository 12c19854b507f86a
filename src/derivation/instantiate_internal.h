// Internals shared by the instantiation files: the graph values that stand
// for expression tensors and scopes, and the lowering entry points of
// instantiate_memory.cc (accesses and memory-bound scopes) and
// instantiate_linear.cc (library operators).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "derivation/iterator_table.h"
#include "fission/builder.h"

namespace orchid::derivation::inst {

// A graph value holding the box [lo, lo + shape) of a tensor or scope;
// reads outside the box are 0.
struct SourceValue {
  ValueId value = kNoValue;
  std::vector<int64_t> lo;
};

// Everything emitted so far: input tensors and instantiated scopes.
struct Emitter {
  fission::FissionBuilder& builder;
  std::map<Expr, SourceValue> sources;
};

// Above this many points, an access that needs a general index map (a
// Gather over a constant table) is refused.
inline constexpr int64_t kMaxGatherTable = int64_t(1) << 22;
// Sum iterators with at most this many points are unrolled into terms.
inline constexpr int64_t kMaxUnrolledTerms = 64;

int64_t num_points(const std::vector<expr::IterRange>& ranges);
std::vector<int64_t> extents_of(const std::vector<expr::IterRange>& ranges);

// The tensor over `targets` (shape = their extents) whose element at a point
// is source[indices] there (0 outside the source's box). Target iterators
// that no index uses get size 1 when `broadcast`, else are expanded.
// nullopt when every read is outside the box (the result is all zeros).
std::optional<ValueId> lower_access(Emitter& em, Expr source, const std::vector<Expr>& indices,
                                    const std::vector<expr::IterRange>& targets, bool broadcast);
// The same, never nullopt: zeros are materialized.
ValueId lower_access_full(Emitter& em, Expr source, const std::vector<Expr>& indices,
                          const std::vector<expr::IterRange>& targets);
// Whether lower_access takes the layout-primitive path (no Gather table).
bool access_is_layout(Expr source, const std::vector<Expr>& indices, const std::vector<expr::IterRange>& targets);

// `value` (dims = `order`, a subset of `loops`) rearranged to the loop order,
// expanded along the loops it lacks.
ValueId to_loop_order(Emitter& em, ValueId value, const std::vector<expr::IterRange>& order,
                      const std::vector<expr::IterRange>& loops);

// A memory-bound scope as layout, elementwise and reduce primitives.
ValueId emit_memory_scope(Emitter& em, const expr::ScopeNode& scope);
// Empty when emit_memory_scope can lower the scope, else why not.
std::string memory_scope_blocker(const expr::ScopeNode& scope);
// "offset sum (9 terms)", "index map", ...
std::string describe_memory_scope(const expr::ScopeNode& scope);

// A matched compute scope as its library operator plus operand layouts.
ValueId emit_linear_scope(Emitter& em, const expr::ScopeNode& scope, const LinearMatch& match);
// "MatMul [49x512]x[512x4608]", ...
std::string describe_linear_scope(const expr::ScopeNode& scope, const LinearMatch& match);

}  // namespace orchid::derivation::inst
