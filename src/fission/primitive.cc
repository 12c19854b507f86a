#include "fission/primitive.h"

#include "reference/ops/banded.h"

namespace orchid::fission {

namespace {

bool is_constant_input(const Node& node, const Graph& graph, size_t i) {
  return i >= node.inputs.size() || node.inputs[i] == kNoValue || graph.value(node.inputs[i]).is_constant();
}

// Forms of a listed operator that fission still rewrites.
bool has_primitive_form(const Node& node, const Graph& graph) {
  // Pad: constant mode only; edge/reflect/wrap become Gathers.
  if (node.op == "Pad") return node.attrs.get_string("mode", "constant") == "constant";
  // Max/Min: binary only; other arities become chains.
  if (node.op == "Max" || node.op == "Min") return node.inputs.size() == 2;
  // Reductions: explicit, non-empty constant axes, so that "reduce all" and
  // "no-op on empty axes" are spelled out by fission.
  if (node.op == "ReduceSum" || node.op == "ReduceMax" || node.op == "ReduceMin" || node.op == "ReduceProd") {
    if (node.inputs.size() < 2 || node.inputs[1] == kNoValue) return false;
    if (node.attrs.get_int("noop_with_empty_axes", 0) != 0) return false;
    return graph.value(node.inputs[1]).type.numel() > 0;
  }
  return true;
}

}  // namespace

const char* primitive_kind_name(PrimitiveKind kind) {
  switch (kind) {
    case PrimitiveKind::Elementwise: return "elementwise";
    case PrimitiveKind::Reduce: return "reduce";
    case PrimitiveKind::Layout: return "layout";
    case PrimitiveKind::Linear: return "linear";
    case PrimitiveKind::Opaque: return "opaque";
  }
  return "?";
}

std::optional<PrimitiveKind> primitive_kind(const Node& node, const Graph& graph) {
  // Outside the default domain only Orchid's own banded matmuls (made by
  // derivation) are primitives; any other custom operator is not.
  if (!node.domain.empty()) {
    if (reference::is_banded_op(node)) return PrimitiveKind::Linear;
    return std::nullopt;
  }
  const OpTraits* traits = op_traits(node.op);
  if (traits == nullptr) return std::nullopt;
  for (size_t i : traits->constant_inputs) {
    if (is_constant_input(node, graph, i)) continue;
    // A scan whose axis is only known at run time has no index map to
    // rewrite into; it stays whole, as an opaque primitive.
    if (node.op == "CumSum" && i == 1) return PrimitiveKind::Opaque;
    return std::nullopt;
  }
  if (!has_primitive_form(node, graph)) return std::nullopt;
  return traits->kind;
}

}  // namespace orchid::fission
