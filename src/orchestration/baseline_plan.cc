#include "orchestration/baseline_plan.h"

#include <algorithm>
#include <optional>
#include <set>

#include "fission/primitive.h"
#include "runtime/kernels/cpu/registry.h"

namespace orchid::orchestration {

namespace {

struct Uses {
  std::vector<std::vector<size_t>> consumers;  // per value: nodes reading it (once per read)
  std::set<ValueId> graph_outputs;
};

Uses find_uses(const Graph& graph) {
  Uses uses;
  uses.consumers.resize(graph.num_values());
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    for (ValueId id : graph.nodes()[i].inputs) {
      if (id != kNoValue) uses.consumers[size_t(id)].push_back(i);
    }
  }
  uses.graph_outputs.insert(graph.outputs().begin(), graph.outputs().end());
  return uses;
}

// The node that reads `value` as the only reader (once). A chain grown this
// way can run at its last node's place: every value it reads from outside
// is computed by then, and only its last value is read outside it.
std::optional<size_t> sole_consumer(const Uses& uses, ValueId value) {
  if (value == kNoValue || uses.graph_outputs.count(value) || uses.consumers[size_t(value)].size() != 1) {
    return std::nullopt;
  }
  return uses.consumers[size_t(value)][0];
}

// SiLU after `value`: the Sigmoid and Mul nodes when `value` is read by
// exactly a Sigmoid and a Mul of it with the Sigmoid's output (and nothing
// else reads the Sigmoid's output).
std::optional<std::vector<size_t>> silu_after(const Graph& graph, const Uses& uses, ValueId value) {
  if (value == kNoValue || uses.graph_outputs.count(value) || uses.consumers[size_t(value)].size() != 2) {
    return std::nullopt;
  }
  auto [a, b] = std::pair(uses.consumers[size_t(value)][0], uses.consumers[size_t(value)][1]);
  if (graph.nodes()[a].op != "Sigmoid") std::swap(a, b);
  const Node& sigmoid = graph.nodes()[a];
  if (sigmoid.op != "Sigmoid" || graph.nodes()[b].op != "Mul" || sigmoid.outputs.size() != 1) return std::nullopt;
  const ValueId s = sigmoid.outputs[0];
  if (uses.graph_outputs.count(s) || uses.consumers[size_t(s)] != std::vector<size_t>{b}) return std::nullopt;
  return std::vector<size_t>{a, b};
}

// The nodes that would extend a chain ending in `value`: SiLU's pair, or the
// sole reader when it has one output.
std::optional<std::vector<size_t>> next_epilogue(const Graph& graph, const Uses& uses, ValueId value) {
  if (std::optional<std::vector<size_t>> silu = silu_after(graph, uses, value)) return silu;
  std::optional<size_t> next = sole_consumer(uses, value);
  if (!next || graph.nodes()[*next].outputs.size() != 1) return std::nullopt;
  return std::vector<size_t>{*next};
}

bool is_linear(const Node& node, const Graph& graph) {
  return fission::primitive_kind(node, graph) == fission::PrimitiveKind::Linear;
}

}  // namespace

std::vector<runtime::KernelGroup> plan_baseline(const Graph& graph) {
  const Uses uses = find_uses(graph);
  const runtime::GroupMaker make_group(graph);
  std::vector<bool> absorbed(graph.nodes().size(), false);
  std::vector<runtime::KernelGroup> kernels;
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    if (absorbed[i]) continue;
    std::vector<size_t> members = {i};
    const Node& anchor = graph.nodes()[i];
    if (is_linear(anchor, graph) && anchor.outputs.size() == 1) {
      ValueId current = anchor.outputs[0];
      // Grow the chain while the oneDNN kernel computes the longer group.
      while (std::optional<std::vector<size_t>> next = next_epilogue(graph, uses, current)) {
        std::vector<size_t> extended = members;
        extended.insert(extended.end(), next->begin(), next->end());
        const bool free = std::none_of(next->begin(), next->end(), [&](size_t n) { return absorbed[n]; });
        if (!free || !runtime::cpu::linear_group_supported(graph, make_group(extended))) break;
        members = std::move(extended);
        for (size_t n : *next) absorbed[n] = true;
        current = graph.nodes()[next->back()].outputs[0];
      }
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
