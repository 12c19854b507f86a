// Structural utilities over the expr IR.
#include "ir/expr_utils.h"

#include <unordered_set>

#include "ir/expr_affine.h"

namespace orchid::expr {

namespace {

// Direct children in a fixed order; a Scope's child is its body.
std::vector<Expr> children(Expr e) {
  switch (e->kind()) {
    case NodeKind::Affine: {
      std::vector<Expr> out;
      for (const AffineTerm& t : e->as<AffineNode>().terms()) out.push_back(t.atom);
      return out;
    }
    case NodeKind::FloorDiv:
    case NodeKind::Mod: return {e->as<DivModNode>().operand()};
    case NodeKind::Binary: return {e->as<BinaryNode>().lhs(), e->as<BinaryNode>().rhs()};
    case NodeKind::Call: return {e->as<CallNode>().arg()};
    case NodeKind::Access: {
      const auto& a = e->as<AccessNode>();
      std::vector<Expr> out{a.source()};
      out.insert(out.end(), a.indices().begin(), a.indices().end());
      return out;
    }
    case NodeKind::Scope: return {e->as<ScopeNode>().body()};
    default: return {};
  }
}

// Depth-first, left to right, each node once. `enter_scopes` decides whether
// the walk descends into scopes below the root.
template <typename Visit>
void walk(Expr root, bool enter_scopes, Visit&& visit) {
  std::unordered_set<Expr> seen;
  std::function<void(Expr)> go = [&](Expr e) {
    if (!seen.insert(e).second) return;
    visit(e);
    if (e != root && e->is<ScopeNode>() && !enter_scopes) return;
    for (Expr c : children(e)) go(c);
  };
  go(root);
}

Expr float_value(Expr e) {
  if (const auto* a = e->try_as<AffineNode>(); a && a->is_constant()) {
    return constant(static_cast<double>(a->constant()));
  }
  return e;
}

}  // namespace

std::vector<IterRange> iterators(const ScopeNode& scope) {
  std::vector<IterRange> out = scope.loops();
  out.insert(out.end(), scope.sums().begin(), scope.sums().end());
  return out;
}

std::vector<Expr> free_iterators(Expr e) {
  std::vector<Expr> out;
  if (e->is<ScopeNode>()) return out;  // scopes are closed
  walk(e, false, [&](Expr n) {
    if (n->is<IterNode>()) out.push_back(n);
  });
  return out;
}

std::vector<Expr> free_tensors(Expr e) {
  std::vector<Expr> out;
  walk(e, true, [&](Expr n) {
    if (n->is<TensorNode>()) out.push_back(n);
  });
  return out;
}

std::vector<Expr> nested_scopes(Expr e) {
  std::vector<Expr> out;
  std::unordered_set<Expr> seen;
  std::function<void(Expr)> go = [&](Expr n) {
    if (!seen.insert(n).second) return;
    for (Expr c : children(n)) go(c);
    if (n != e && n->is<ScopeNode>()) out.push_back(n);
  };
  go(e);
  return out;
}

Expr map_children(Expr e, const std::function<Expr(Expr)>& fn) {
  switch (e->kind()) {
    case NodeKind::Const:
    case NodeKind::Iter:
    case NodeKind::Tensor: return e;
    case NodeKind::Affine: {
      const auto& a = e->as<AffineNode>();
      AffineForm form{{}, a.constant()};
      for (const AffineTerm& t : a.terms()) form.terms.push_back({t.coef, fn(t.atom)});
      return make_affine(std::move(form));
    }
    case NodeKind::FloorDiv: return floor_div_index(fn(e->as<DivModNode>().operand()), e->as<DivModNode>().divisor());
    case NodeKind::Mod: return mod_index(fn(e->as<DivModNode>().operand()), e->as<DivModNode>().divisor());
    case NodeKind::Binary: {
      const auto& b = e->as<BinaryNode>();
      Expr lhs = fn(b.lhs());
      Expr rhs = fn(b.rhs());
      switch (b.op()) {
        case BinaryOp::Add: return add(lhs, rhs);
        case BinaryOp::Sub: return sub(lhs, rhs);
        case BinaryOp::Mul: return mul(lhs, rhs);
        case BinaryOp::Div: return div(lhs, float_value(rhs));
      }
      return e;
    }
    case NodeKind::Call: return call(e->as<CallNode>().func(), fn(e->as<CallNode>().arg()));
    case NodeKind::Access: {
      const auto& a = e->as<AccessNode>();
      std::vector<Expr> indices;
      for (Expr i : a.indices()) indices.push_back(fn(i));
      return access(fn(a.source()), std::move(indices));
    }
    case NodeKind::Scope: {
      const auto& s = e->as<ScopeNode>();
      return scope(s.loops(), s.sums(), fn(s.body()), s.pads());
    }
  }
  return e;
}

Expr substitute(Expr e, const std::unordered_map<Expr, Expr>& replacements) {
  ORCHID_CHECK(!e->is<ScopeNode>()) << "substitute into a scope's body, then build a new scope";
  std::unordered_map<Expr, Expr> memo;
  std::function<Expr(Expr)> go = [&](Expr n) -> Expr {
    if (n->is<ScopeNode>()) return n;
    if (auto it = memo.find(n); it != memo.end()) return it->second;
    Expr out = n;
    if (n->is<IterNode>()) {
      if (auto it = replacements.find(n); it != replacements.end()) out = it->second;
    } else {
      out = map_children(n, go);
    }
    memo.emplace(n, out);
    return out;
  };
  return go(e);
}

Expr substitute(Expr e, Expr iterator, Expr replacement) { return substitute(e, {{iterator, replacement}}); }

}  // namespace orchid::expr
