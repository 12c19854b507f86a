// Small whole-graph transformations shared by passes.
#pragma once

#include "ir/graph.h"

namespace orchid {

// A copy holding only the values that graph inputs, outputs and nodes use,
// renumbered densely in their original order; nodes unchanged otherwise.
Graph remove_unused_values(const Graph& graph);

}  // namespace orchid
