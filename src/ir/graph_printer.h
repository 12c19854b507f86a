// The textual form of a Graph, for debugging dumps and golden tests:
//   graph NAME
//     input %x: float32[1x3x8x8]
//     const %w: float32[4x3x3x3]
//     %y: float32[1x4x8x8] = Conv(%x, %w) {pads=[1,1,1,1]}  # conv1
//     output %y
#pragma once

#include <string>

#include "ir/graph.h"

namespace orchid {

std::string print_graph(const Graph& graph);
std::string print_attribute(const AttributeValue& value);

}  // namespace orchid
