// Derivation rules: expression family (rules/rules.h), OLLIE's
// inter-expression rules.
//
//  split_terms  (expression splitting) S = L<loops> Sum<sums> t1 +/- t2 ...
//               becomes L<loops> C1[..] +/- C2[..] ... with
//               Ci = L<loops used by ti> Sum<sums> ti. Exact: a sum is
//               linear. Every Ci keeps all of S's sums, since a sum iterator
//               a term does not use still multiplies it by its extent.
//  batch_merge  (merging independent expressions, batching) two direct
//               children C1 = L<I> Sum<K> c1 * X1[..] * Y1[..] and C2 with the
//               same ranges and the same index expressions (up to the names
//               of its iterators), reading sources of equal boxes, become one
//               child M = L<b:0:2, I> Sum<K> c * SX[b, ..] * SY[b, ..], where
//               SX stacks X1 and X2 along a new leading dimension (or is X1
//               itself when X1 and X2 read the same source); C1[idx] ->
//               M[0, idx] and C2[idx] -> M[1, idx]. Exact: M[0, .] = C1 and
//               M[1, .] = C2 at every point, boxes included. Different scale
//               factors are folded into a stacked operand.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "derivation/analysis.h"
#include "derivation/rules/rules.h"
#include "ir/expr_utils.h"

namespace orchid::derivation::rules {

namespace {

using namespace expr;

// ---- split_terms ----

struct Term {
  Expr value;
  bool negative;
};

// The terms of a chain of float + and -, with their signs.
void flatten_terms(Expr e, bool negative, std::vector<Term>& out) {
  if (const auto* b = e->try_as<BinaryNode>(); b && (b->op() == BinaryOp::Add || b->op() == BinaryOp::Sub)) {
    flatten_terms(b->lhs(), negative, out);
    flatten_terms(b->rhs(), b->op() == BinaryOp::Sub ? !negative : negative, out);
    return;
  }
  out.push_back({e, negative});
}

class SplitTerms final : public Rule {
 public:
  std::string_view name() const override { return "split_terms"; }

  std::vector<Rewrite> apply(const RuleSite& site) const override {
    const auto& s = site.scope->as<ScopeNode>();
    if (s.sums().empty()) return {};  // nothing to distribute the sum over
    std::vector<Term> terms;
    flatten_terms(s.body(), false, terms);
    if (terms.size() < 2) return {};
    Expr body = nullptr;
    for (const Term& t : terms) {
      std::vector<IterRange> kept;
      Expr child = scope_over_used(s.loops(), s.sums(), t.value, &kept);
      Expr read = access(child, iters_of(kept));
      if (!body) {
        body = t.negative ? neg(read) : read;
      } else {
        body = t.negative ? sub(body, read) : add(body, read);
      }
    }
    return {{scope(s.loops(), {}, body, s.pads()), "split " + std::to_string(terms.size()) + " terms"}};
  }
};

// ---- batch_merge ----

// A body c * X[..] * Y[..] (factors in any order, c a folded constant).
struct Product {
  double scale = 1.0;
  std::vector<Expr> accesses;  // X, Y
};

bool collect_factors(Expr e, Product& p) {
  if (const auto* b = e->try_as<BinaryNode>(); b && b->op() == BinaryOp::Mul) {
    return collect_factors(b->lhs(), p) && collect_factors(b->rhs(), p);
  }
  if (const auto* c = e->try_as<ConstNode>()) {
    p.scale *= c->value();
    return true;
  }
  if (e->is<AccessNode>()) {
    p.accesses.push_back(e);
    return true;
  }
  return false;
}

std::optional<Product> as_product(Expr body) {
  Product p;
  if (!collect_factors(body, p) || p.accesses.size() != 2) return std::nullopt;
  return p;
}

bool same_ranges(const std::vector<IterRange>& a, const std::vector<IterRange>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k].lo != b[k].lo || a[k].hi != b[k].hi) return false;
  }
  return true;
}

// Sources that can be stacked: same source, or equal boxes in every dimension.
bool stackable(Expr s1, Expr s2) {
  if (s1 == s2) return true;
  size_t r1 = s1->is<TensorNode>() ? s1->as<TensorNode>().rank() : s1->as<ScopeNode>().rank();
  size_t r2 = s2->is<TensorNode>() ? s2->as<TensorNode>().rank() : s2->as<ScopeNode>().rank();
  if (r1 != r2) return false;
  for (size_t d = 0; d < r1; ++d) {
    if (source_box(s1, d) != source_box(s2, d)) return false;
  }
  return true;
}

const AccessNode& acc(Expr e) { return e->as<AccessNode>(); }

// x1 and x2 (x2 with C2's iterators already renamed to C1's) read equal
// indices of stackable sources.
bool operands_match(Expr x1, Expr x2) {
  return acc(x1).indices() == acc(x2).indices() && stackable(acc(x1).source(), acc(x2).source());
}

// {L<b:0:2, d..> {L<q:0:1> 1.0}[b] * c1 * S1[d..] + {L<q:1:2> 1.0}[b] * c2 * S2[d..]}:
// S1 at b = 0 and S2 at b = 1, over S1's box.
Expr stack(Expr s1, Expr s2, double c1, double c2) {
  size_t rank = s1->is<TensorNode>() ? s1->as<TensorNode>().rank() : s1->as<ScopeNode>().rank();
  Expr b = iter("b"), q = iter("q");
  std::vector<IterRange> loops{{b, 0, 2}};
  std::vector<Expr> d;
  for (size_t k = 0; k < rank; ++k) {
    Interval box = source_box(s1, k);
    d.push_back(iter("d" + std::to_string(k)));
    loops.push_back({d.back(), box.lo, box.hi});
  }
  auto part = [&](int64_t at, Expr source, double c) {
    Expr indicator = access(scope({{q, at, at + 1}}, {}, constant(1.0)), {b});
    Expr scaled = c == 1.0 ? indicator : mul(indicator, constant(c));
    return mul(scaled, access(source, d));
  };
  return scope(loops, {}, add(part(0, s1, c1), part(1, s2, c2)));
}

class BatchMerge final : public Rule {
 public:
  std::string_view name() const override { return "batch_merge"; }

  std::vector<Rewrite> apply(const RuleSite& site) const override {
    const auto& s = site.scope->as<ScopeNode>();
    std::vector<Expr> children = direct_children(s.body());
    std::vector<Rewrite> out;
    for (size_t i = 0; i < children.size(); ++i) {
      for (size_t j = i + 1; j < children.size(); ++j) {
        if (std::optional<Expr> m = merge(site.scope, children[i], children[j])) {
          out.push_back({*m, "merge 2 children into a batch of 2"});
        }
      }
    }
    return out;
  }

 private:
  // The site with c1 and c2 merged, when they match.
  static std::optional<Expr> merge(Expr site, Expr c1, Expr c2) {
    const auto& s1 = c1->as<ScopeNode>();
    const auto& s2 = c2->as<ScopeNode>();
    if (!same_ranges(s1.loops(), s2.loops()) || !same_ranges(s1.sums(), s2.sums()) || s1.pads() != s2.pads()) {
      return std::nullopt;
    }
    std::optional<Product> p1 = as_product(s1.body()), p2 = as_product(s2.body());
    if (!p1 || !p2) return std::nullopt;
    std::unordered_map<Expr, Expr> rename;
    for (size_t k = 0; k < s1.loops().size(); ++k) rename[s2.loops()[k].iter] = s1.loops()[k].iter;
    for (size_t k = 0; k < s1.sums().size(); ++k) rename[s2.sums()[k].iter] = s1.sums()[k].iter;
    Expr x2 = substitute(p2->accesses[0], rename), y2 = substitute(p2->accesses[1], rename);
    Expr x1 = p1->accesses[0], y1 = p1->accesses[1];
    if (!(operands_match(x1, x2) && operands_match(y1, y2))) std::swap(x2, y2);
    if (!(operands_match(x1, x2) && operands_match(y1, y2))) return std::nullopt;
    bool same_x = acc(x1).source() == acc(x2).source(), same_y = acc(y1).source() == acc(y2).source();
    if (same_x && same_y) return std::nullopt;  // not two computations to batch

    Expr b = fresh_iter(site, "b");
    double scale = p1->scale;
    bool fold = p1->scale != p2->scale;  // folded into the first stacked operand
    auto operand = [&](Expr a1, Expr a2, bool same) {
      if (same) return a1;
      Expr stacked = stack(acc(a1).source(), acc(a2).source(), fold ? p1->scale : 1.0, fold ? p2->scale : 1.0);
      fold = false;
      std::vector<Expr> idx{b};
      idx.insert(idx.end(), acc(a1).indices().begin(), acc(a1).indices().end());
      return access(stacked, idx);
    };
    if (fold) scale = 1.0;
    Expr x = operand(x1, x2, same_x);
    Expr y = operand(y1, y2, same_y);
    Expr body = mul(x, y);
    if (scale != 1.0) body = mul(constant(scale), body);

    std::vector<IterRange> loops{{b, 0, 2}};
    loops.insert(loops.end(), s1.loops().begin(), s1.loops().end());
    std::vector<int64_t> pads{0};
    pads.insert(pads.end(), s1.pads().begin(), s1.pads().end());
    Expr merged = scope(loops, s1.sums(), body, pads);

    auto at = [&](int64_t which) {
      return [merged, which](const std::vector<Expr>& idx) {
        std::vector<Expr> full{integer(which)};
        full.insert(full.end(), idx.begin(), idx.end());
        return access(merged, full);
      };
    };
    const auto& parent = site->as<ScopeNode>();
    Expr new_body = rewrite_accesses(parent.body(), c1, at(0));
    new_body = rewrite_accesses(new_body, c2, at(1));
    return scope(parent.loops(), parent.sums(), new_body, parent.pads());
  }
};

}  // namespace

std::vector<RulePtr> expression_rules() {
  std::vector<RulePtr> rules;
  rules.push_back(std::make_unique<SplitTerms>());
  rules.push_back(std::make_unique<BatchMerge>());
  return rules;
}

}  // namespace orchid::derivation::rules
