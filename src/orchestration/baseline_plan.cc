#include "orchestration/baseline_plan.h"

#include <algorithm>

#include "fission/primitive.h"
#include "orchestration/epilogue_chains.h"
#include "runtime/kernels/cpu/registry.h"

namespace orchid::orchestration {

namespace {

bool is_linear(const Node& node, const Graph& graph) {
  return fission::primitive_kind(node, graph) == fission::PrimitiveKind::Linear;
}

}  // namespace

std::vector<runtime::KernelGroup> plan_baseline(const Graph& graph) {
  const EpilogueChains chains_of(graph);
  const runtime::GroupMaker make_group(graph);
  std::vector<bool> absorbed(graph.nodes().size(), false);
  std::vector<runtime::KernelGroup> kernels;
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    if (absorbed[i]) continue;
    std::vector<size_t> members = {i};
    if (is_linear(graph.nodes()[i], graph)) {
      // The longest chain of free nodes the oneDNN kernel computes.
      const auto accepts = [&](const std::vector<size_t>& group) {
        const bool free = std::none_of(group.begin() + 1, group.end(), [&](size_t n) { return absorbed[n]; });
        return free && runtime::cpu::linear_group_supported(graph, make_group(group));
      };
      std::vector<std::vector<size_t>> chains = chains_of.prefixes(i, accepts);
      if (!chains.empty()) members = chains.back();
      for (size_t n : members) absorbed[n] = true;
    }
    kernels.push_back(make_group(members));
  }
  // Each kernel runs where its last node was: kernels only read values of
  // nodes before that (see sole_consumer), so this order is topological.
  std::stable_sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) {
    return a.nodes.back() < b.nodes.back();
  });
  return kernels;
}

}  // namespace orchid::orchestration
