#include "orchestration/assembly.h"

#include <algorithm>
#include <map>

#include "ir/graph_utils.h"

namespace orchid::orchestration {

namespace {

// Overlapping kernels: a value one chosen kernel writes may be computed only
// inside the nodes it shares with another chosen kernel that reads it. In the
// graph before assembly the writer listed it because the unchosen form also
// read it; made again without that reader, its group would not, and the
// reader would find it unwritten. Each group keeps writing what it wrote
// before assembly (under its new id: a derived result may have taken the
// original's) where another chosen kernel reads it.
void keep_outputs_other_kernels_read(const Graph& graph, const std::vector<ChosenKernel>& chosen,
                                     const std::vector<size_t>& new_index, KeptForms& kept) {
  const std::vector<size_t> producer = producer_nodes(graph);
  std::set<ValueId> read;
  for (const runtime::KernelGroup& group : kept.groups) read.insert(group.inputs.begin(), group.inputs.end());
  for (size_t k = 0; k < chosen.size(); ++k) {
    runtime::KernelGroup& group = kept.groups[k];
    for (ValueId id : chosen[k].outputs) {
      const size_t node = producer[size_t(id)];
      if (node == kNoNode || new_index[node] == kNoNode) continue;
      const std::vector<ValueId>& written = graph.nodes()[node].outputs;
      const size_t slot = size_t(std::find(written.begin(), written.end(), id) - written.begin());
      const ValueId now = kept.graph.nodes()[new_index[node]].outputs[slot];
      if (read.count(now) && std::find(group.outputs.begin(), group.outputs.end(), now) == group.outputs.end()) {
        group.outputs.push_back(now);
      }
    }
  }
}

}  // namespace

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
  keep_outputs_other_kernels_read(graph, chosen, new_index, kept);
  return kept;
}

}  // namespace orchid::orchestration
