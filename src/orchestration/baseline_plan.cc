#include "orchestration/baseline_plan.h"

#include <optional>
#include <set>

#include "fission/primitive.h"
#include "runtime/kernels/cpu/registry.h"

namespace orchid::orchestration {

namespace {

struct Uses {
  std::vector<std::vector<size_t>> consumers;  // per value: nodes reading it (once per read)
  std::vector<int64_t> producer;               // per value: producing node, -1 if none
  std::set<ValueId> graph_outputs;
};

Uses find_uses(const Graph& graph) {
  Uses uses;
  uses.consumers.resize(graph.num_values());
  uses.producer.assign(graph.num_values(), -1);
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    for (ValueId id : graph.nodes()[i].inputs) {
      if (id != kNoValue) uses.consumers[size_t(id)].push_back(i);
    }
    for (ValueId id : graph.nodes()[i].outputs) {
      if (id != kNoValue) uses.producer[size_t(id)] = int64_t(i);
    }
  }
  uses.graph_outputs.insert(graph.outputs().begin(), graph.outputs().end());
  return uses;
}

// The node that reads `value` as the only reader, when every other input of
// that node is available before `anchor` runs (the group runs at the anchor's
// place in the order).
std::optional<size_t> sole_consumer(const Graph& graph, const Uses& uses, ValueId value, size_t anchor) {
  if (value == kNoValue || uses.graph_outputs.count(value) || uses.consumers[size_t(value)].size() != 1) {
    return std::nullopt;
  }
  const size_t next = uses.consumers[size_t(value)][0];
  for (ValueId id : graph.nodes()[next].inputs) {
    if (id == kNoValue || id == value) continue;
    if (uses.producer[size_t(id)] >= int64_t(anchor)) return std::nullopt;
  }
  return next;
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
      while (std::optional<size_t> next = sole_consumer(graph, uses, current, i)) {
        const Node& node = graph.nodes()[*next];
        if (node.outputs.size() != 1 ||
            !runtime::cpu::linear_can_absorb(graph, make_group(members), node)) {
          break;
        }
        members.push_back(*next);
        absorbed[*next] = true;
        current = node.outputs[0];
      }
    }
    kernels.push_back(make_group(members));
  }
  return kernels;
}

}  // namespace orchid::orchestration
