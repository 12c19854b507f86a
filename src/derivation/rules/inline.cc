// Derivation rules: inline family (rules/rules.h).
//
//  inline_scope  (OLLIE's traversal merging) a direct child C = L<loops> body
//                without Sum iterators is substituted into its accesses:
//                C[idx] -> body[loops := idx], removing the intermediate.
//                C[idx] is body[loops := idx] inside C's box and 0 outside,
//                so this is exact when every access stays inside the box,
//                or, for each dimension d an access may leave, when C's body
//                is itself 0 outside C's range along loop d whatever the
//                other loops are (support with no ranges only bounds loop d
//                through indices that depend on it alone, so it proves
//                exactly that).
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "derivation/analysis.h"
#include "derivation/rules/rules.h"
#include "ir/expr_utils.h"

namespace orchid::derivation::rules {

namespace {

using namespace expr;

// Whether C's body, substituted for every access of C in `body` (ranges: the
// parent's), gives C's value: inside C's box it does; outside, along every
// dimension an access may leave, the body must be 0 itself.
bool inlining_exact(Expr body, const ScopeNode& child, const RangeMap& ranges) {
  Expr c = &child;
  if (accesses_within_box(body, c, ranges)) return true;
  std::vector<bool> checked(child.rank(), false), zero(child.rank(), false);
  for (const AccessNode* a : accesses_of(body, c)) {
    for (size_t d = 0; d < child.rank(); ++d) {
      const IterRange& loop = child.loops()[d];
      Interval box{loop.lo, loop.hi};
      std::optional<Interval> i = index_interval(a->indices()[d], ranges);
      if (i && box.contains(*i)) continue;
      if (!checked[d]) {
        checked[d] = true;
        zero[d] = zero_outside(child.body(), loop.iter, box, RangeMap{});
      }
      if (!zero[d]) return false;
    }
  }
  return true;
}

class InlineScope final : public Rule {
 public:
  std::string_view name() const override { return "inline_scope"; }

  std::vector<Rewrite> apply(const RuleSite& site) const override {
    const auto& s = site.scope->as<ScopeNode>();
    RangeMap ranges = scope_ranges(s);
    std::vector<Rewrite> out;
    for (Expr c : direct_children(s.body())) {
      const auto& child = c->as<ScopeNode>();
      if (!child.sums().empty() || !inlining_exact(s.body(), child, ranges)) continue;
      Expr body = rewrite_accesses(s.body(), c, [&](const std::vector<Expr>& idx) {
        std::unordered_map<Expr, Expr> at;
        for (size_t d = 0; d < child.rank(); ++d) at[child.loops()[d].iter] = idx[d];
        return substitute(child.body(), at);
      });
      body = simplify_indices(body, ranges);
      std::string loops;
      for (const IterRange& r : child.loops()) loops += (loops.empty() ? "" : ", ") + r.name();
      out.push_back({scope(s.loops(), s.sums(), body, s.pads()), "inline child L<" + loops + ">"});
    }
    return out;
  }
};

}  // namespace

std::vector<RulePtr> inline_rules() {
  std::vector<RulePtr> rules;
  rules.push_back(std::make_unique<InlineScope>());
  return rules;
}

}  // namespace orchid::derivation::rules
