#include "orchestration/assembly.h"

#include <map>

#include "ir/graph_utils.h"

namespace orchid::orchestration {

KeptForms keep_chosen_forms(const Graph& graph, const std::vector<Alternative>& alternatives,
                            const std::vector<ChosenKernel>& chosen, const std::set<size_t>& chosen_aliases) {
  const size_t n = graph.nodes().size();
  std::vector<bool> computed(n, false), in_a_form(n, false);
  std::set<ValueId> written;
  for (const ChosenKernel& kernel : chosen) {
    for (size_t node : kernel.nodes) computed[node] = true;
    written.insert(kernel.outputs.begin(), kernel.outputs.end());
  }
  KeptForms kept;
  std::map<ValueId, ValueId> renamed;
  for (size_t a = 0; a < alternatives.size(); ++a) {
    const Alternative& alternative = alternatives[a];
    for (const auto* nodes : {&alternative.original_nodes, &alternative.derived_nodes}) {
      for (size_t node : *nodes) in_a_form[node] = true;
    }
    if (chosen_aliases.count(a) && !written.count(alternative.original)) {
      renamed[alternative.derived] = alternative.original;
      kept.derived_nodes_chosen.push_back(graph.nodes()[alternative.original_nodes.back()].name);
    }
  }
  const auto rename = [&](std::vector<ValueId>& ids) {
    for (ValueId& id : ids) {
      if (auto it = renamed.find(id); it != renamed.end()) id = it->second;
    }
  };
  Graph result = graph;
  result.nodes().clear();
  std::vector<size_t> new_index(n, kNoNode);
  for (size_t node = 0; node < n; ++node) {
    if (in_a_form[node] && !computed[node]) continue;
    Node copy = graph.nodes()[node];
    rename(copy.inputs);
    rename(copy.outputs);
    new_index[node] = result.nodes().size();
    result.add_node(std::move(copy));
  }
  kept.graph = remove_unused_values(result);
  const runtime::GroupMaker make_group(kept.graph);
  for (const ChosenKernel& kernel : chosen) {
    std::vector<size_t> nodes;
    for (size_t node : kernel.nodes) nodes.push_back(new_index[node]);
    runtime::KernelGroup group = make_group(std::move(nodes));
    group.variant = kernel.variant;
    kept.groups.push_back(std::move(group));
  }
  return kept;
}

}  // namespace orchid::orchestration
