#include "runtime/kernel.h"

#include <algorithm>
#include <set>

#include "runtime/kernels/cpu/registry.h"
#include "support/error.h"

namespace orchid::runtime {

KernelGroup make_group(const Graph& graph, std::vector<size_t> nodes) {
  KernelGroup group;
  std::set<ValueId> produced;
  for (size_t index : nodes) {
    const Node& node = graph.nodes().at(index);
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
  std::set<ValueId> needed(graph.outputs().begin(), graph.outputs().end());
  std::set<size_t> members(nodes.begin(), nodes.end());
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    if (members.count(i)) continue;
    for (ValueId id : graph.nodes()[i].inputs) needed.insert(id);
  }
  for (size_t index : nodes) {
    for (ValueId id : graph.nodes()[index].outputs) {
      if (id != kNoValue && needed.count(id)) group.outputs.push_back(id);
    }
  }
  group.nodes = std::move(nodes);
  return group;
}

std::unique_ptr<Kernel> make_cpu_kernel(const Graph& graph, const KernelGroup& group) {
  ORCHID_CHECK(!group.nodes.empty()) << "empty kernel group";
  using Factory = std::unique_ptr<Kernel> (*)(const Graph&, const KernelGroup&);
  for (Factory factory : {&cpu::make_linear_kernel, &cpu::make_elementwise_kernel, &cpu::make_reduce_kernel,
                          &cpu::make_layout_kernel, &cpu::make_reference_kernel}) {
    if (std::unique_ptr<Kernel> kernel = factory(graph, group)) return kernel;
  }
  const Node& anchor = graph.nodes()[group.nodes[0]];
  ORCHID_FAIL() << "no CPU kernel for the group '" << group.name << "' anchored at " << anchor.describe();
}

}  // namespace orchid::runtime
