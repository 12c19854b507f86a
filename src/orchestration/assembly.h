// Assembly of a chosen plan's graph when derived forms were alternatives
// (ir/alternatives.h): only the chosen form of each is kept. Pure: the
// orchestrator calls it after the last BLP solve.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/alternatives.h"
#include "ir/graph.h"
#include "runtime/kernel.h"

namespace orchid::orchestration {

// A chosen kernel: the nodes it computes and its groups' variant.
struct ChosenKernel {
  std::vector<size_t> nodes;
  std::string variant;
  std::vector<ValueId> outputs;  // what its group writes, in the graph before assembly
};

struct KeptForms {
  Graph graph;
  std::vector<runtime::KernelGroup> groups;      // per chosen kernel, in order, made on `graph`
  std::vector<std::string> derived_nodes_chosen;  // the original primitive of each derived form kept
};

// The graph with the chosen form of each alternative: nodes of a form no
// chosen kernel computes go; a derived form chosen (its alias in
// `chosen_aliases`) has its result take the original value's place, unless
// a chosen kernel writes the original too; values nothing uses any more (an
// unchosen form's weights) go. The chosen kernels' groups are made again on
// that graph.
KeptForms keep_chosen_forms(const Graph& graph, const std::vector<Alternative>& alternatives,
                            const std::vector<ChosenKernel>& chosen, const std::set<size_t>& chosen_aliases);

}  // namespace orchid::orchestration
