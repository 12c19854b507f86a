// Re-runs every node's shape inference and checks it agrees with the types
// recorded in the graph: a pass that changes a node must keep its types right.
#pragma once

#include "ir/graph.h"

namespace orchid::reference {

// Throws InternalError naming the node and both types on a mismatch.
void verify_types(const Graph& graph);

}  // namespace orchid::reference
