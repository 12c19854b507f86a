// Small whole-graph transformations and queries shared by passes.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace orchid {

// A copy holding only the values that graph inputs, outputs and nodes use,
// renumbered densely in their original order; nodes unchanged otherwise.
Graph remove_unused_values(const Graph& graph);

// Per value: the index of the node that writes it, or kNoNode for graph
// inputs and constants.
constexpr size_t kNoNode = size_t(-1);
std::vector<size_t> producer_nodes(const Graph& graph);

// Per value: how many node inputs read it, plus one for each use as a graph
// output.
std::vector<int> use_counts(const Graph& graph);

// The constant value of a node's input i, or nullptr when it is omitted or
// computed.
const Tensor* constant_input(const Graph& graph, const Node& node, size_t i);

// A value that is neither a graph input, a graph output nor a constant: one
// that nodes compute and only nodes read (the executor's arena holds it).
bool is_intermediate(const Graph& graph, ValueId id);

// Bytes of data held by the graph's constants (its weights).
size_t constant_bytes(const Graph& graph);

// After a pass that rebuilt `after` from a copy of `before` (same value ids
// for the old values), graph outputs keep the model's names when a rewrite
// replaced the value computing them (not when an output is now a graph
// input: feeds are by name). The replaced value is renamed "#replaced".
void keep_output_names(const Graph& before, Graph& after);

}  // namespace orchid
