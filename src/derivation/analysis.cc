// Static facts about expressions for derivation rules (analysis.h).
#include "derivation/analysis.h"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_set>

#include "ir/expr_affine.h"
#include "ir/expr_utils.h"

namespace orchid::derivation {

using namespace expr;

Interval Interval::intersect(const Interval& other) const {
  return {std::max(lo, other.lo), std::min(hi, other.hi)};
}

Interval Interval::hull(const Interval& other) const {
  if (empty()) return other;
  if (other.empty()) return *this;
  return {std::min(lo, other.lo), std::max(hi, other.hi)};
}

RangeMap ranges_of(const std::vector<IterRange>& loops, const std::vector<IterRange>& sums) {
  RangeMap ranges;
  for (const auto* list : {&loops, &sums}) {
    for (const IterRange& r : *list) ranges[r.iter] = {r.lo, r.hi};
  }
  return ranges;
}

RangeMap scope_ranges(const ScopeNode& scope) { return ranges_of(scope.loops(), scope.sums()); }

namespace {

// Inclusive bounds, for arithmetic; an empty interval never reaches here.
struct Bounds {
  int64_t min, max;
};

std::optional<Bounds> bounds_of(Expr index, const RangeMap& ranges);

std::optional<Bounds> atom_bounds(Expr atom, const RangeMap& ranges) {
  if (atom->is<IterNode>()) {
    auto it = ranges.find(atom);
    if (it == ranges.end() || it->second.empty()) return std::nullopt;
    return Bounds{it->second.lo, it->second.hi - 1};
  }
  const auto& dm = atom->as<DivModNode>();
  std::optional<Bounds> operand = bounds_of(dm.operand(), ranges);
  if (!operand) return std::nullopt;
  int64_t d = dm.divisor();
  int64_t q_min = floor_div_int(operand->min, d), q_max = floor_div_int(operand->max, d);
  if (atom->kind() == NodeKind::FloorDiv) return Bounds{q_min, q_max};
  if (q_min == q_max) return Bounds{operand->min - q_min * d, operand->max - q_min * d};
  return Bounds{0, d - 1};
}

std::optional<Bounds> bounds_of(Expr index, const RangeMap& ranges) {
  AffineForm form = affine_form(index);
  Bounds total{form.constant, form.constant};
  for (const AffineTerm& term : form.terms) {
    std::optional<Bounds> b = atom_bounds(term.atom, ranges);
    if (!b) return std::nullopt;
    int64_t x = term.coef * b->min, y = term.coef * b->max;
    total.min += std::min(x, y);
    total.max += std::max(x, y);
  }
  return total;
}


// Values of x with lo <= coef * x + rest < hi for some rest in `rest`.
Interval solve_in_box(int64_t coef, Bounds rest, Interval box) {
  int64_t low = box.lo - rest.max, high = box.hi - 1 - rest.min;  // coef * x in [low, high]
  if (coef > 0) return {ceil_div_int(low, coef), floor_div_int(high, coef) + 1};
  return {ceil_div_int(high, coef), floor_div_int(low, coef) + 1};  // dividing by a negative flips
}

bool mentions(Expr index, Expr iter) {
  if (index == iter) return true;
  for (Expr f : free_iterators(index)) {
    if (f == iter) return true;
  }
  return false;
}

std::optional<Interval> access_support(const AccessNode& access, Expr iter, const RangeMap& ranges) {
  std::optional<Interval> result;
  for (size_t dim = 0; dim < access.indices().size(); ++dim) {
    AffineForm form = affine_form(access.indices()[dim]);
    int64_t coef = 0;
    AffineForm rest{{}, form.constant};
    bool usable = true;
    for (const AffineTerm& term : form.terms) {
      if (term.atom == iter) {
        coef = term.coef;
      } else {
        if (mentions(term.atom, iter)) usable = false;
        rest.terms.push_back(term);
      }
    }
    if (coef == 0 || !usable) continue;
    std::optional<Bounds> rest_bounds = bounds_of(make_affine(rest), ranges);
    if (!rest_bounds) continue;
    Interval here = solve_in_box(coef, *rest_bounds, source_box(access.source(), dim));
    result = result ? result->intersect(here) : here;
  }
  return result;
}

bool is_zero_preserving(Func f) {
  switch (f) {
    case Func::Relu:
    case Func::Tanh:
    case Func::Sqrt:
    case Func::Neg:
    case Func::Abs:
    case Func::Erf: return true;
    default: return false;
  }
}

}  // namespace

std::optional<Interval> index_interval(Expr index, const RangeMap& ranges) {
  std::optional<Bounds> b = bounds_of(index, ranges);
  if (!b) return std::nullopt;
  return Interval{b->min, b->max + 1};
}

Interval source_box(Expr source, size_t dim) {
  if (const auto* t = source->try_as<TensorNode>()) return {0, t->shape().at(dim)};
  const IterRange& r = source->as<ScopeNode>().loops().at(dim);
  return {r.lo, r.hi};
}

std::optional<Interval> support(Expr value, Expr iter, const RangeMap& ranges) {
  switch (value->kind()) {
    case NodeKind::Const:
      if (value->as<ConstNode>().value() == 0) return Interval{0, 0};
      return std::nullopt;
    case NodeKind::Access: return access_support(value->as<AccessNode>(), iter, ranges);
    case NodeKind::Call: {
      const auto& call = value->as<CallNode>();
      if (!is_zero_preserving(call.func())) return std::nullopt;
      return support(call.arg(), iter, ranges);
    }
    case NodeKind::Binary: {
      const auto& bin = value->as<BinaryNode>();
      std::optional<Interval> l = support(bin.lhs(), iter, ranges);
      if (bin.op() == BinaryOp::Div) return l;
      std::optional<Interval> r = support(bin.rhs(), iter, ranges);
      if (bin.op() == BinaryOp::Mul) {
        if (l && r) return l->intersect(*r);
        return l ? l : r;
      }
      if (l && r) return l->hull(*r);
      return std::nullopt;
    }
    default: return std::nullopt;  // an index used as a value, or anything unbounded
  }
}

bool zero_outside(Expr value, Expr iter, const Interval& allowed, const RangeMap& ranges) {
  std::optional<Interval> s = support(value, iter, ranges);
  return s && allowed.contains(*s);
}

Expr simplify_indices(Expr value, const RangeMap& ranges) {
  std::function<Expr(Expr)> simplify_index = [&](Expr e) -> Expr {
    if (!e->is_index()) return e;
    Expr mapped = map_children(e, simplify_index);
    const auto* dm = mapped->try_as<DivModNode>();
    if (!dm) return mapped;
    std::optional<Bounds> b = bounds_of(dm->operand(), ranges);
    if (!b) return mapped;
    int64_t d = dm->divisor(), q = floor_div_int(b->min, d);
    if (q != floor_div_int(b->max, d)) return mapped;
    if (mapped->kind() == NodeKind::FloorDiv) return integer(q);
    return sub(dm->operand(), integer(q * d));
  };
  std::function<Expr(Expr)> go = [&](Expr e) -> Expr {
    if (e->is<ScopeNode>() || e->is<TensorNode>()) return e;
    if (const auto* a = e->try_as<AccessNode>()) {
      std::vector<Expr> indices;
      for (Expr i : a->indices()) indices.push_back(simplify_index(i));
      return access(a->source(), indices);
    }
    if (e->is_index()) return e;
    return map_children(e, go);
  };
  return go(value);
}

namespace {

void collect_accesses(Expr e, std::vector<const AccessNode*>& out) {
  if (const auto* a = e->try_as<AccessNode>()) {
    out.push_back(a);
    return;  // indices are index expressions: no accesses inside
  }
  if (const auto* b = e->try_as<BinaryNode>()) {
    collect_accesses(b->lhs(), out);
    collect_accesses(b->rhs(), out);
  } else if (const auto* c = e->try_as<CallNode>()) {
    collect_accesses(c->arg(), out);
  }
}

}  // namespace

std::vector<Expr> scopes_of(Expr state) {
  std::vector<Expr> scopes = nested_scopes(state);
  scopes.push_back(state);
  return scopes;
}

std::vector<const AccessNode*> accesses_in(Expr value) {
  std::vector<const AccessNode*> out;
  collect_accesses(value, out);
  return out;
}

std::vector<Expr> access_indices(Expr value) {
  std::vector<Expr> out;
  for (const AccessNode* a : accesses_in(value)) {
    for (Expr i : a->indices()) {
      if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
    }
  }
  return out;
}

std::vector<Expr> direct_children(Expr value) {
  std::vector<Expr> out;
  for (const AccessNode* a : accesses_in(value)) {
    if (a->source()->is<ScopeNode>() && std::find(out.begin(), out.end(), a->source()) == out.end()) {
      out.push_back(a->source());
    }
  }
  return out;
}

std::vector<const AccessNode*> accesses_of(Expr value, Expr child) {
  std::vector<const AccessNode*> out;
  for (const AccessNode* a : accesses_in(value)) {
    if (a->source() == child) out.push_back(a);
  }
  return out;
}

bool accesses_within_box(Expr value, Expr child, const RangeMap& ranges) {
  const auto& scope = child->as<ScopeNode>();
  for (const AccessNode* a : accesses_of(value, child)) {
    for (size_t dim = 0; dim < a->indices().size(); ++dim) {
      std::optional<Interval> i = index_interval(a->indices()[dim], ranges);
      if (!i || !Interval{scope.loops()[dim].lo, scope.loops()[dim].hi}.contains(*i)) return false;
    }
  }
  return true;
}

Expr rewrite_accesses(Expr value, Expr child, const std::function<Expr(const std::vector<Expr>&)>& rebuild) {
  std::function<Expr(Expr)> go = [&](Expr e) -> Expr {
    if (const auto* a = e->try_as<AccessNode>()) return a->source() == child ? rebuild(a->indices()) : e;
    if (e->is<ScopeNode>() || e->is_index()) return e;
    return map_children(e, go);
  };
  return go(value);
}

Expr replace_scope(Expr root, Expr from, Expr to) {
  std::unordered_map<Expr, Expr> memo;
  std::function<Expr(Expr)> go = [&](Expr e) -> Expr {
    if (e == from) return to;
    auto it = memo.find(e);
    if (it != memo.end()) return it->second;
    Expr out = e;
    if (e->is<ScopeNode>() || e->is<AccessNode>() || e->is<BinaryNode>() || e->is<CallNode>()) out = map_children(e, go);
    memo[e] = out;
    return out;
  };
  return go(root);
}

namespace {

void collect_names(Expr e, std::unordered_set<std::string>& names) {
  std::unordered_set<Expr> seen;
  std::function<void(Expr)> go = [&](Expr n) {
    if (!seen.insert(n).second) return;
    switch (n->kind()) {
      case NodeKind::Iter: names.insert(n->as<IterNode>().name()); return;
      case NodeKind::Affine:
        for (const AffineTerm& t : n->as<AffineNode>().terms()) go(t.atom);
        return;
      case NodeKind::FloorDiv:
      case NodeKind::Mod: go(n->as<DivModNode>().operand()); return;
      case NodeKind::Binary:
        go(n->as<BinaryNode>().lhs());
        go(n->as<BinaryNode>().rhs());
        return;
      case NodeKind::Call: go(n->as<CallNode>().arg()); return;
      case NodeKind::Access:
        go(n->as<AccessNode>().source());
        for (Expr i : n->as<AccessNode>().indices()) go(i);
        return;
      case NodeKind::Scope:
        for (const IterRange& r : iterators(n->as<ScopeNode>())) names.insert(r.name());
        go(n->as<ScopeNode>().body());
        return;
      default: return;
    }
  };
  go(e);
}

}  // namespace

Expr fresh_iter(Expr scope, std::string_view base) {
  std::unordered_set<std::string> names;
  collect_names(scope, names);
  std::string name(base);
  for (int k = 1; names.count(name) || !is_valid_name(name); ++k) name = std::string(base) + std::to_string(k);
  return iter(name);
}

Expr scope_over_used(const std::vector<IterRange>& loops, const std::vector<IterRange>& sums, Expr body,
                     std::vector<IterRange>* kept) {
  std::vector<Expr> free = free_iterators(body);
  std::vector<IterRange> used;
  for (const IterRange& r : loops) {
    if (std::find(free.begin(), free.end(), r.iter) != free.end()) used.push_back(r);
  }
  if (kept) *kept = used;
  return scope(used, sums, body);
}

std::vector<Expr> iters_of(const std::vector<IterRange>& ranges) {
  std::vector<Expr> out;
  for (const IterRange& r : ranges) out.push_back(r.iter);
  return out;
}

}  // namespace orchid::derivation
