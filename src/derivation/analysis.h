// Static facts about expressions that derivation rules need to prove their
// rewrites exact: value intervals of index expressions, where a body may be
// nonzero, whether accesses stay inside a scope's box; and the structural
// edits rules share (rewriting the accesses to a child, replacing a scope in
// a state, fresh names).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/expr.h"

namespace orchid::derivation {

using expr::Expr;

// Half-open integer interval [lo, hi); empty when lo >= hi.
struct Interval {
  int64_t lo = 0;
  int64_t hi = 0;
  bool empty() const { return lo >= hi; }
  int64_t extent() const { return empty() ? 0 : hi - lo; }
  // An empty interval is contained in everything.
  bool contains(const Interval& other) const { return other.empty() || (lo <= other.lo && other.hi <= hi); }
  Interval intersect(const Interval& other) const;
  Interval hull(const Interval& other) const;  // smallest interval holding both
  bool operator==(const Interval&) const = default;
};

// Iterator (IterNode) -> its range.
using RangeMap = std::unordered_map<Expr, Interval>;

// The ranges of a scope's loop and sum iterators; ranges_of for a scope
// about to be built.
RangeMap scope_ranges(const expr::ScopeNode& scope);
RangeMap ranges_of(const std::vector<expr::IterRange>& loops, const std::vector<expr::IterRange>& sums);

// The hull of the values `index` takes while its iterators range over
// `ranges`; nullopt if an iterator has no range there.
std::optional<Interval> index_interval(Expr index, const RangeMap& ranges);

// Where reads of `source` (a TensorNode or ScopeNode) can be nonzero along
// dimension `dim`: [0, dim) for a tensor, the loop range for a scope.
Interval source_box(Expr source, size_t dim);

// The hull of the values of `iter` at which the open expression `value` may
// be nonzero, while the other iterators range over `ranges` (the range of
// `iter` itself is not used). nullopt when nothing bounds it. Reasoning:
// a product is zero where a factor is; a sum where both terms are; f(x) with
// f(0) = 0 (relu, tanh, sqrt, neg, abs, erf) where x is; an access where one
// of its indices leaves the source's box.
std::optional<Interval> support(Expr value, Expr iter, const RangeMap& ranges);

// Whether `value` is 0 at every point where `iter` is outside `allowed`.
bool zero_outside(Expr value, Expr iter, const Interval& allowed, const RangeMap& ranges);

// `value` with its access indices simplified using iterator ranges: a
// floor-div or mod whose operand stays within one period becomes affine,
// e.g. floor(h2 / 2) -> 0 and h2 % 2 -> h2 when h2 in [0, 2). Nested scopes
// are left alone.
Expr simplify_indices(Expr value, const RangeMap& ranges);

// Every scope of a state: the nested ones innermost first (each after the
// scopes it reads), then the root.
std::vector<Expr> scopes_of(Expr state);

// Every access in an open expression (nested scopes are not entered), in
// order; and the distinct index expressions of those accesses.
std::vector<const expr::AccessNode*> accesses_in(Expr value);
std::vector<Expr> access_indices(Expr value);

// The scopes accessed directly in an open expression (nested scopes are not
// entered), in first-appearance order, each once.
std::vector<Expr> direct_children(Expr value);

// The accesses to `child` in an open expression, in order.
std::vector<const expr::AccessNode*> accesses_of(Expr value, Expr child);

// Whether every access to `child` in `value` reads inside the child's loop
// box at every point of `ranges` (so the child's values outside its box,
// which are 0, are never relied on).
bool accesses_within_box(Expr value, Expr child, const RangeMap& ranges);

// `value` with every access child[indices] replaced by rebuild(indices).
Expr rewrite_accesses(Expr value, Expr child, const std::function<Expr(const std::vector<Expr>&)>& rebuild);

// Replaces every occurrence of the scope `from` inside the state `root` (and
// root itself) by `to`, rebuilding the scopes above it.
Expr replace_scope(Expr root, Expr from, Expr to);

// An iterator whose name starts with `base` and is used nowhere in `scope`
// (bound or free, at any depth).
Expr fresh_iter(Expr scope, std::string_view base);

// A scope over the `loops` that `body` uses (in the given order; unused ones
// dropped), with `sums`; `kept` receives the kept loop ranges, from which the
// caller builds its access.
Expr scope_over_used(const std::vector<expr::IterRange>& loops, const std::vector<expr::IterRange>& sums, Expr body,
                     std::vector<expr::IterRange>* kept);

// Iterator expressions of ranges, in order.
std::vector<Expr> iters_of(const std::vector<expr::IterRange>& ranges);

}  // namespace orchid::derivation
