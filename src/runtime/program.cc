#include "runtime/program.h"

#include "support/error.h"

namespace orchid::runtime {

void verify_program(const Program& program) {
  const Graph& graph = program.graph;
  // A node may be in several kernels (an orchestrated plan can recompute an
  // intermediate inside two kernels rather than store it), or in none when
  // nothing reads its outputs; each value is still written once.
  std::vector<int> covered(graph.nodes().size(), 0);
  std::vector<bool> written(graph.num_values(), false);
  std::vector<bool> ready(graph.num_values(), false);
  for (size_t id = 0; id < graph.num_values(); ++id) ready[id] = graph.value(ValueId(id)).is_constant();
  for (ValueId id : graph.inputs()) ready[size_t(id)] = true;
  for (const KernelGroup& group : program.kernels) {
    ORCHID_CHECK(!group.nodes.empty()) << "kernel '" << group.name << "' has no nodes";
    for (ValueId id : group.inputs) {
      ORCHID_CHECK(id >= 0 && size_t(id) < graph.num_values() && ready[size_t(id)])
          << "kernel '" << group.name << "' reads "
          << (id >= 0 && size_t(id) < graph.num_values() ? "'" + graph.value(id).name + "'" : "a value")
          << ", which no earlier kernel computes";
    }
    for (size_t index : group.nodes) {
      ORCHID_CHECK(index < covered.size()) << "kernel '" << group.name << "' names node " << index;
      ++covered[index];
    }
    for (ValueId id : group.outputs) {
      ORCHID_CHECK(!written[size_t(id)]) << "kernel '" << group.name << "' writes '" << graph.value(id).name
                                         << "' again (each value has one writer)";
      written[size_t(id)] = ready[size_t(id)] = true;
    }
  }
  for (ValueId id : graph.outputs()) {
    ORCHID_CHECK(ready[size_t(id)]) << "graph output '" << graph.value(id).name << "' is never computed";
  }
}

}  // namespace orchid::runtime
