// Rewrites an ONNX node as read from a model of some opset into Orchid's
// canonical operator form (graph.h): the newest opset's inputs and semantics.
// One rule family per file (canonicalize_*.cc), collected in canonicalize.cc.
#pragma once

#include <functional>
#include <string>

#include "ir/graph.h"

namespace orchid::onnx_frontend {

// Adds a constant to the graph being built and returns its id.
using ConstantMaker = std::function<ValueId(const std::string& name_hint, Tensor value)>;

struct CanonicalizeContext {
  int opset;  // the model's opset for the node's domain
  const ConstantMaker& make_constant;
  const Graph& graph;  // the graph built so far: types and constants of the node's inputs
};

using CanonicalizeRule = std::function<void(Node& node, const CanonicalizeContext& ctx)>;

void canonicalize_node(Node& node, const CanonicalizeContext& ctx);

// Helpers for rules.
// Moves an integer-list attribute into input `index` as an int64 constant
// (padding the input list with omitted inputs as needed). Does nothing if the
// attribute is absent.
void move_ints_attribute_to_input(Node& node, const std::string& attribute, size_t index,
                                  const CanonicalizeContext& ctx);
// Sets input `index` (padding with omitted inputs) to a new constant.
void set_constant_input(Node& node, size_t index, Tensor value, const CanonicalizeContext& ctx);

}  // namespace orchid::onnx_frontend
