// The elementwise kernel factory: a single-node group whose node is an
// elementwise primitive becomes a MapKernel (elementwise_kernel.h) built by
// the unary, binary/Pow, or Cast/Where factory; anything they do not handle
// (float16/bfloat16 arithmetic, unusual Pow dtypes) is left to the reference
// kernel by returning nullptr.
#include <optional>
#include <string>

#include "ir/op_traits.h"
#include "runtime/kernels/cpu/elementwise_kernel.h"
#include "runtime/kernels/cpu/registry.h"

namespace orchid::runtime::cpu {

namespace {

// An elementwise primitive of `arity` operands (ir/op_traits.h).
bool is_elementwise(const std::string& op, int arity) {
  const OpTraits* t = op_traits(op);
  return t != nullptr && t->kind == PrimitiveKind::Elementwise && t->arity == arity;
}

// Index of `id` in `ids`, or ids.size().
size_t position(const std::vector<ValueId>& ids, ValueId id) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == id) return i;
  }
  return ids.size();
}

// The node's view for the factories, or nullopt when its form is not
// elementwise (an omitted input, several outputs).
std::optional<ElementwiseNode> describe(const Graph& graph, const KernelGroup& group) {
  const Node& node = graph.nodes()[group.nodes[0]];
  if (node.outputs.size() != 1 || node.outputs[0] == kNoValue || group.outputs.size() > 1) return std::nullopt;
  ElementwiseNode view{graph, node, {}, graph.type(node.outputs[0]), {}, !group.outputs.empty()};
  for (ValueId id : node.inputs) {
    if (id == kNoValue) return std::nullopt;
    // A value read twice (Mul(x, x)) is one group input.
    const size_t index = position(group.inputs, id);
    if (index == group.inputs.size()) return std::nullopt;
    view.input_types.push_back(graph.type(id));
    view.arg_index.push_back(index);
  }
  return view;
}

}  // namespace

const Tensor* ElementwiseNode::constant(size_t i) const {
  const Value& value = graph.value(node.inputs.at(i));
  return value.is_constant() ? &*value.constant : nullptr;
}

std::unique_ptr<Kernel> make_elementwise_kernel(const Graph& graph, const KernelGroup& group) {
  if (group.nodes.size() != 1) return nullptr;
  const std::string& op = graph.nodes()[group.nodes[0]].op;
  // Pow, Where and Cast have factories of their own.
  const bool unary = is_elementwise(op, 1) && op != "Cast";
  const bool binary = is_elementwise(op, 2) && op != "Pow";
  if (!unary && !binary && op != "Pow" && op != "Where" && op != "Cast") return nullptr;
  std::optional<ElementwiseNode> node = describe(graph, group);
  if (!node) return nullptr;
  if (unary) return make_unary_kernel(*node);
  if (binary) return make_binary_kernel(*node);
  if (op == "Pow") return make_pow_kernel(*node);
  if (op == "Where") return make_where_kernel(*node);
  return make_cast_kernel(*node);
}

}  // namespace orchid::runtime::cpu
