#include "ir/graph_utils.h"

#include <algorithm>
#include <vector>

namespace orchid {

Graph remove_unused_values(const Graph& graph) {
  std::vector<bool> used(graph.num_values(), false);
  auto mark = [&](ValueId id) {
    if (id != kNoValue) used[size_t(id)] = true;
  };
  for (ValueId id : graph.inputs()) mark(id);
  for (ValueId id : graph.outputs()) mark(id);
  for (const Node& node : graph.nodes()) {
    for (ValueId id : node.inputs) mark(id);
    for (ValueId id : node.outputs) mark(id);
  }
  Graph out;
  out.name = graph.name;
  std::vector<ValueId> remap(graph.num_values(), kNoValue);
  for (size_t i = 0; i < graph.num_values(); ++i) {
    if (!used[i]) continue;
    const Value& value = graph.value(ValueId(i));
    remap[i] = value.constant ? out.add_constant(value.name, *value.constant) : out.add_value(value.name, value.type);
  }
  auto mapped = [&](ValueId id) { return id == kNoValue ? kNoValue : remap[size_t(id)]; };
  for (ValueId id : graph.inputs()) out.inputs().push_back(mapped(id));
  for (ValueId id : graph.outputs()) out.outputs().push_back(mapped(id));
  for (const Node& node : graph.nodes()) {
    Node copy = node;
    for (ValueId& id : copy.inputs) id = mapped(id);
    for (ValueId& id : copy.outputs) id = mapped(id);
    out.add_node(std::move(copy));
  }
  return out;
}

const Tensor* constant_input(const Graph& graph, const Node& node, size_t i) {
  if (i >= node.inputs.size() || node.inputs[i] == kNoValue) return nullptr;
  const Value& value = graph.value(node.inputs[i]);
  return value.is_constant() ? &*value.constant : nullptr;
}

bool is_intermediate(const Graph& graph, ValueId id) {
  const auto is_one_of = [id](const std::vector<ValueId>& ids) { return std::find(ids.begin(), ids.end(), id) != ids.end(); };
  return !graph.value(id).is_constant() && !is_one_of(graph.inputs()) && !is_one_of(graph.outputs());
}

size_t constant_bytes(const Graph& graph) {
  size_t bytes = 0;
  for (size_t id = 0; id < graph.num_values(); ++id) {
    const Value& value = graph.value(ValueId(id));
    if (value.constant) bytes += value.constant->nbytes();
  }
  return bytes;
}

std::vector<int> use_counts(const Graph& graph) {
  std::vector<int> uses(graph.num_values(), 0);
  for (const Node& node : graph.nodes()) {
    for (ValueId id : node.inputs) {
      if (id != kNoValue) ++uses[size_t(id)];
    }
  }
  for (ValueId id : graph.outputs()) ++uses[size_t(id)];
  return uses;
}

std::vector<size_t> producer_nodes(const Graph& graph) {
  std::vector<size_t> producer(graph.num_values(), kNoNode);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    for (ValueId id : graph.nodes()[n].outputs) {
      if (id != kNoValue) producer[size_t(id)] = n;
    }
  }
  return producer;
}

// Graph outputs keep the model's names when a rule replaced the value that
// computes them (not when an output is now a graph input: feeds are by name).
void keep_output_names(const Graph& before, Graph& after) {
  for (size_t i = 0; i < after.outputs().size(); ++i) {
    ValueId id = after.outputs()[i];
    ValueId old_id = before.outputs()[i];  // same id in `after`, which started as a copy
    bool is_input = std::find(after.inputs().begin(), after.inputs().end(), id) != after.inputs().end();
    if (id == old_id || is_input) continue;
    std::string name = before.value(old_id).name;
    after.value(old_id).name += "#replaced";  // dead: the node computing it was rewritten
    after.value(id).name = name;
  }
}

}  // namespace orchid
