// Derivation rules: summation family (rules/rules.h).
//
//  sum_split  (OLLIE's summation splitting) S = L<loops> Sum<sums> body with
//             at least two Sum iterators becomes
//               L<loops> Sum<OUT> { L<loops, OUT> Sum<IN> body }[loops, OUT]
//             for a nonempty proper subset OUT of the sums (IN the rest).
//             Exact: a sum over a product space is the iterated sum, and the
//             child is read exactly at its own loop points (inside its box).
//             The child keeps only the loop iterators its body uses.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "derivation/analysis.h"
#include "derivation/rules/rules.h"
#include "ir/expr_utils.h"

namespace orchid::derivation::rules {

namespace {

using namespace expr;

// Above this many Sum iterators only subsets of size 1 and n - 1 go out, so
// that the proposals stay linear in n instead of 2^n.
constexpr size_t kAllSubsetsUpTo = 5;

std::string names_of(const std::vector<IterRange>& ranges) {
  std::string out;
  for (const IterRange& r : ranges) out += (out.empty() ? "" : ", ") + r.name();
  return out;
}

// S with the sums selected by `out_mask` moved to an outer Sum.
Rewrite split(const ScopeNode& s, uint64_t out_mask) {
  std::vector<IterRange> out, in;
  for (size_t k = 0; k < s.sums().size(); ++k) ((out_mask >> k) & 1 ? out : in).push_back(s.sums()[k]);
  std::vector<IterRange> child_loops = s.loops();
  child_loops.insert(child_loops.end(), out.begin(), out.end());
  std::vector<IterRange> kept;
  Expr child = scope_over_used(child_loops, in, s.body(), &kept);
  Expr result = scope(s.loops(), out, access(child, iters_of(kept)), s.pads());
  return {result, "Sum<" + names_of(out) + "> outer, Sum<" + names_of(in) + "> inner"};
}

class SumSplit final : public Rule {
 public:
  std::string_view name() const override { return "sum_split"; }

  std::vector<Rewrite> apply(const RuleSite& site) const override {
    const auto& s = site.scope->as<ScopeNode>();
    size_t n = s.sums().size();
    if (n < 2 || n > 63) return {};
    std::vector<uint64_t> masks;
    uint64_t full = (uint64_t{1} << n) - 1;
    if (n <= kAllSubsetsUpTo) {
      for (uint64_t mask = 1; mask < full; ++mask) masks.push_back(mask);
    } else {
      for (size_t k = 0; k < n; ++k) masks.push_back(uint64_t{1} << k);
      for (size_t k = 0; k < n; ++k) masks.push_back(full ^ (uint64_t{1} << k));
    }
    std::vector<Rewrite> rewrites;
    for (uint64_t mask : masks) rewrites.push_back(split(s, mask));
    return rewrites;
  }
};

}  // namespace

std::vector<RulePtr> summation_rules() {
  std::vector<RulePtr> rules;
  rules.push_back(std::make_unique<SumSplit>());
  return rules;
}

}  // namespace orchid::derivation::rules
