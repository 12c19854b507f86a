#include "orchestration/epilogue_pricing.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

#include "ir/op_traits.h"

namespace orchid::orchestration {

namespace {

// Whether `group` reads no runtime value but `values` (constants aside).
bool reads_only(const Graph& graph, const runtime::KernelGroup& group, const std::vector<ValueId>& values) {
  return std::all_of(group.inputs.begin(), group.inputs.end(), [&](ValueId id) {
    return graph.value(id).is_constant() || std::find(values.begin(), values.end(), id) != values.end();
  });
}

// Whether a tail of `candidate` (its nodes from `first` on) computes nothing
// costly per element: no transcendental operator.
bool cheap_tail(const Graph& graph, const Candidate& candidate, size_t first) {
  return std::none_of(candidate.nodes.begin() + first, candidate.nodes.end(), [&](size_t node) {
    const OpTraits* traits = op_traits(graph.nodes()[node].op);
    return traits != nullptr && traits->transcendental;
  });
}

}  // namespace

std::vector<double> price_epilogue_chains(const Graph& graph, const std::vector<Candidate>& candidates,
                                          const std::vector<runtime::KernelGroup>& groups,
                                          const std::vector<double>& costs, const std::vector<bool>& timed) {
  std::vector<double> price = costs;
  std::map<std::vector<size_t>, size_t> unfused;  // a non-linear candidate's nodes -> its index
  std::map<size_t, std::vector<size_t>> chains;   // a linear candidate's first node -> the candidates
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].kind == CandidateKind::Linear) {
      chains[candidates[i].nodes[0]].push_back(i);
    } else {
      unfused.emplace(candidates[i].nodes, i);
    }
  }
  // Shorter chains first: a split's linear half is priced before the chains that extend it.
  std::vector<size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return candidates[a].nodes.size() < candidates[b].nodes.size(); });
  for (size_t i : order) {
    const Candidate& fused = candidates[i];
    if (fused.kind != CandidateKind::Linear || fused.nodes.size() < 2 || !timed[i]) continue;
    std::optional<double> best;
    for (size_t j : chains.at(fused.nodes[0])) {
      const std::vector<size_t>& prefix = candidates[j].nodes;
      if (!timed[j] || candidates[j].variant != fused.variant || prefix.size() >= fused.nodes.size() ||
          !std::equal(prefix.begin(), prefix.end(), fused.nodes.begin())) {
        continue;
      }
      const auto tail = unfused.find(std::vector<size_t>(fused.nodes.begin() + prefix.size(), fused.nodes.end()));
      if (tail == unfused.end() || !timed[tail->second] || !cheap_tail(graph, fused, prefix.size()) ||
          !reads_only(graph, groups[tail->second], groups[j].outputs)) {
        continue;
      }
      const double split = price[j] + price[tail->second];
      best = best ? std::min(*best, split) : split;
    }
    if (best && price[i] <= kEpilogueNoise * *best) price[i] = std::min(price[i], 0.999 * *best);
  }
  return price;
}

}  // namespace orchid::orchestration
