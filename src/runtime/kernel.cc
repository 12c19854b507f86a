#include "runtime/kernel.h"

#include <algorithm>
#include <set>

#include "runtime/kernels/cpu/registry.h"
#include "support/error.h"

namespace orchid::runtime {

GroupMaker::GroupMaker(const Graph& graph, const std::vector<ValueId>& live) : graph_(graph) {
  readers_.resize(graph.num_values());
  graph_output_.assign(graph.num_values(), false);
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    for (ValueId id : graph.nodes()[i].inputs) {
      if (id != kNoValue) readers_[size_t(id)].push_back(i);
    }
  }
  for (ValueId id : graph.outputs()) graph_output_[size_t(id)] = true;
  for (ValueId id : live) graph_output_[size_t(id)] = true;
}

KernelGroup GroupMaker::operator()(std::vector<size_t> nodes) const {
  KernelGroup group;
  std::set<ValueId> produced;
  for (size_t index : nodes) {
    const Node& node = graph_.nodes().at(index);
    for (ValueId id : node.inputs) {
      if (id == kNoValue || produced.count(id)) continue;
      if (std::find(group.inputs.begin(), group.inputs.end(), id) == group.inputs.end()) group.inputs.push_back(id);
    }
    for (ValueId id : node.outputs) {
      if (id != kNoValue) produced.insert(id);
    }
    group.name += (group.name.empty() ? "" : "+") + node.name;
  }
  // Produced values read by a node outside the group or returned by the graph.
  const std::set<size_t> members(nodes.begin(), nodes.end());
  for (size_t index : nodes) {
    for (ValueId id : graph_.nodes()[index].outputs) {
      if (id == kNoValue) continue;
      bool needed = graph_output_[size_t(id)];
      for (size_t reader : readers_[size_t(id)]) needed |= !members.count(reader);
      if (needed) group.outputs.push_back(id);
    }
  }
  group.nodes = std::move(nodes);
  return group;
}

size_t input_slot(const KernelGroup& group, ValueId id) {
  auto it = std::find(group.inputs.begin(), group.inputs.end(), id);
  ORCHID_CHECK(it != group.inputs.end()) << "value " << id << " is not an input of the kernel group '" << group.name
                                         << "'";
  return size_t(it - group.inputs.begin());
}

KernelGroup make_group(const Graph& graph, std::vector<size_t> nodes) {
  return GroupMaker(graph)(std::move(nodes));
}

std::unique_ptr<Kernel> make_cpu_kernel(const Graph& graph, const KernelGroup& group) {
  ORCHID_CHECK(!group.nodes.empty()) << "empty kernel group";
  using Factory = std::unique_ptr<Kernel> (*)(const Graph&, const KernelGroup&);
  for (Factory factory : {&cpu::make_attention_kernel, &cpu::make_linear_kernel, &cpu::make_banded_kernel,
                          &cpu::make_elementwise_kernel, &cpu::make_reduce_kernel, &cpu::make_concat_kernel,
                          &cpu::make_pool_kernel, &cpu::make_channels_last_transpose_kernel, &cpu::make_layout_kernel, &cpu::make_reference_kernel}) {
    if (std::unique_ptr<Kernel> kernel = factory(graph, group)) return kernel;
  }
  const Node& anchor = graph.nodes()[group.nodes[0]];
  ORCHID_FAIL() << "no CPU kernel for the group '" << group.name << "' anchored at " << anchor.describe();
}

}  // namespace orchid::runtime
