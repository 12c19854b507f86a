// Derivation rules: boundary tightening and relaxing (rules/rules.h).
//
//  tighten_loop  a nested scope's loop range shrinks to where its body may be
//                nonzero (support). The dropped points held 0, and reads
//                outside a scope's box are 0, so the function is unchanged.
//                Never at the root, whose box is the output's shape.
//  tighten_sum   a Sum range shrinks to the body's support: the dropped
//                terms are 0.
//  relax_sum     a Sum range [lo, hi) grows to [lo, lo + p*ceil(R/p)),
//                p in {2, 3}, where the body is provably 0 outside [lo, hi),
//                so that the range splits into p-sized pieces (a 5x5 kernel
//                relaxed to 6x6 splits into 3x3 ones).
#include <algorithm>
#include <optional>
#include <string>

#include "derivation/analysis.h"
#include "derivation/rules/rules.h"
#include "ir/expr_utils.h"

namespace orchid::derivation::rules {

namespace {

using namespace expr;

std::string range_text(const IterRange& r, const Interval& to) {
  return r.name() + ":" + std::to_string(r.lo) + ":" + std::to_string(r.hi) + " -> " + std::to_string(to.lo) + ":" +
         std::to_string(to.hi);
}

// The body's support along `r`, intersected with r's range, when that is a
// nonempty strict subrange.
std::optional<Interval> tighter(const ScopeNode& s, const IterRange& r, const RangeMap& ranges) {
  std::optional<Interval> sup = support(s.body(), r.iter, ranges);
  if (!sup) return std::nullopt;
  Interval range{r.lo, r.hi};
  Interval n = sup->intersect(range);
  if (n.empty() || n == range) return std::nullopt;
  return n;
}

// `s` with the range at `pos` of its loops (or sums) set to `to`; indices
// simplified for the new (narrower) ranges.
Expr with_range(const ScopeNode& s, bool loop, size_t pos, const Interval& to, bool simplify) {
  std::vector<IterRange> loops = s.loops(), sums = s.sums();
  IterRange& r = loop ? loops[pos] : sums[pos];
  r.lo = to.lo;
  r.hi = to.hi;
  Expr result = scope(loops, sums, s.body(), s.pads());
  if (!simplify) return result;
  Expr body = simplify_indices(s.body(), scope_ranges(result->as<ScopeNode>()));
  return scope(loops, sums, body, s.pads());
}

// One rewrite per loop (or sum) range of `s` that the support tightens.
std::vector<Rewrite> tighten_ranges(const ScopeNode& s, bool loops) {
  RangeMap ranges = scope_ranges(s);
  const std::vector<IterRange>& list = loops ? s.loops() : s.sums();
  std::vector<Rewrite> out;
  for (size_t pos = 0; pos < list.size(); ++pos) {
    std::optional<Interval> n = tighter(s, list[pos], ranges);
    if (!n) continue;
    out.push_back({with_range(s, loops, pos, *n, true), range_text(list[pos], *n)});
  }
  return out;
}

class TightenLoop final : public Rule {
 public:
  std::string_view name() const override { return "tighten_loop"; }

  std::vector<Rewrite> apply(const RuleSite& site) const override {
    if (site.is_root) return {};  // the root's box is the output
    return tighten_ranges(site.scope->as<ScopeNode>(), true);
  }
};

class TightenSum final : public Rule {
 public:
  std::string_view name() const override { return "tighten_sum"; }

  std::vector<Rewrite> apply(const RuleSite& site) const override {
    return tighten_ranges(site.scope->as<ScopeNode>(), false);
  }
};

class RelaxSum final : public Rule {
 public:
  std::string_view name() const override { return "relax_sum"; }

  std::vector<Rewrite> apply(const RuleSite& site) const override {
    const auto& s = site.scope->as<ScopeNode>();
    RangeMap ranges = scope_ranges(s);
    std::vector<Rewrite> out;
    for (size_t pos = 0; pos < s.sums().size(); ++pos) {
      const IterRange& r = s.sums()[pos];
      int64_t extent = r.extent();
      if (extent <= 1 || !zero_outside(s.body(), r.iter, {r.lo, r.hi}, ranges)) continue;
      std::vector<int64_t> his;  // distinct new upper bounds
      for (int64_t p : {2, 3}) {
        if (extent % p == 0) continue;
        int64_t hi = r.lo + p * ((extent + p - 1) / p);
        if (std::find(his.begin(), his.end(), hi) == his.end()) his.push_back(hi);
      }
      for (int64_t hi : his) {
        Interval to{r.lo, hi};
        // Wider ranges can only undo simplifications, so the body stays as is.
        out.push_back({with_range(s, false, pos, to, false), range_text(r, to)});
      }
    }
    return out;
  }
};

}  // namespace

std::vector<RulePtr> boundary_rules() {
  std::vector<RulePtr> rules;
  rules.push_back(std::make_unique<TightenLoop>());
  rules.push_back(std::make_unique<TightenSum>());
  rules.push_back(std::make_unique<RelaxSum>());
  return rules;
}

}  // namespace orchid::derivation::rules
