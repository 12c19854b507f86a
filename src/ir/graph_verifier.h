// Structural checks of a Graph: every value id is valid, every value that is
// neither an input nor a constant is produced by exactly one node, nodes read
// only values defined earlier (topological order, hence acyclic), and outputs
// exist. Type consistency is checked by reference::verify_types, which knows
// the operators' shape inference.
#pragma once

#include "ir/graph.h"

namespace orchid {

// Throws InternalError (an invariant of an Orchid pass broke) naming the node.
void verify_graph(const Graph& graph);

}  // namespace orchid
