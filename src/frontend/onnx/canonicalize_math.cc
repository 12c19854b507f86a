// Operators whose attributes became inputs or whose semantics changed.
#include "frontend/onnx/canonicalize_rules.h"

namespace orchid::onnx_frontend {

void add_math_rules(RuleTable& table) {
  // Clip: min/max attributes until opset 10, optional inputs from 11.
  table.add("Clip", [](Node& node, const CanonicalizeContext& ctx) {
    if (ctx.opset >= 11) return;
    if (node.attrs.has("min")) set_constant_input(node, 1, Tensor::scalar_f32(float(node.attrs.get_float("min", 0))), ctx);
    if (node.attrs.has("max")) set_constant_input(node, 2, Tensor::scalar_f32(float(node.attrs.get_float("max", 0))), ctx);
    node.attrs.erase("min");
    node.attrs.erase("max");
  });
  // Softmax family before opset 13: the input is coerced to 2-D at `axis`
  // (default 1). The implementations honour "_legacy_2d".
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    table.add(op, [](Node& node, const CanonicalizeContext& ctx) {
      if (ctx.opset >= 13) return;
      node.attrs.set("_legacy_2d", int64_t(1));
      if (!node.attrs.has("axis")) node.attrs.set("axis", int64_t(1));
    });
  }
  // Dropout: ratio attribute until opset 11, input from 12. Inference ignores
  // it, so dropping the attribute is exact.
  table.add("Dropout", [](Node& node, const CanonicalizeContext&) {
    node.attrs.erase("ratio");
    node.attrs.erase("is_test");
  });
  // GroupNormalization before opset 21: scale and bias are per group.
  table.add("GroupNormalization", [](Node& node, const CanonicalizeContext& ctx) {
    if (ctx.opset < 21) node.attrs.set("_per_group_affine", int64_t(1));
  });
  // PRelu before opset 7: a 1-D slope of C values applies per channel (axis
  // 1), not along the last axis as numpy broadcasting would. A constant slope
  // is reshaped to [C, 1, ..., 1].
  table.add("PRelu", [](Node& node, const CanonicalizeContext& ctx) {
    if (ctx.opset >= 7 || node.inputs.size() < 2 || node.inputs[1] == kNoValue) return;
    const Value& x = ctx.graph.value(node.inputs[0]);
    const Value& slope = ctx.graph.value(node.inputs[1]);
    if (!slope.is_constant() || slope.type.rank() != 1 || x.type.rank() < 3) return;
    Shape shape(x.type.rank() - 1, 1);
    shape[0] = slope.type.shape[0];
    set_constant_input(node, 1, slope.constant->reshaped(shape), ctx);
  });
  // DFT from opset 20 takes the axis as input 2, default -2; before, an
  // attribute with default 1. The implementation reads input 2 when present.
  table.add("DFT", [](Node& node, const CanonicalizeContext& ctx) {
    bool has_axis_input = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
    if (ctx.opset >= 20 && !has_axis_input) set_constant_input(node, 2, Tensor::scalar_i64(-2), ctx);
  });
  // Opsets before 7 carried attributes that no longer mean anything.
  for (const char* op : {"BatchNormalization", "Add", "Sub", "Mul", "Div", "Relu", "Sum", "Max", "Min"}) {
    table.add(op, [](Node& node, const CanonicalizeContext&) { node.attrs.erase("consumed_inputs"); });
  }
}

}  // namespace orchid::onnx_frontend
