// The content hash of a kernel group: what decides its running time and
// nothing else. Covers the ops, attributes and edges of its nodes (values
// renumbered locally), the types of its inputs and outputs, the values of
// small constants (indices, pads, shapes: up to 64 elements; large weights
// by shape only), the implementation (library, or generated: then the
// generated code itself, prelude included) and Orchid's version. Two models with the same layer share it.
#pragma once

#include <string>

#include "ir/graph.h"
#include "runtime/kernel.h"

namespace orchid::cost {

std::string kernel_key(const Graph& graph, const runtime::KernelGroup& group);

}  // namespace orchid::cost
