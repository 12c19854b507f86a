// Small whole-graph transformations and queries shared by passes.
#pragma once

#include "ir/graph.h"

namespace orchid {

// A copy holding only the values that graph inputs, outputs and nodes use,
// renumbered densely in their original order; nodes unchanged otherwise.
Graph remove_unused_values(const Graph& graph);

// Bytes of data held by the graph's constants (its weights).
size_t constant_bytes(const Graph& graph);

}  // namespace orchid
