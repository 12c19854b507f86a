// Reductions whose axes became an input, and TopK's k.
#include "frontend/onnx/canonicalize_rules.h"

namespace orchid::onnx_frontend {

void add_reduce_rules(RuleTable& table) {
  // ReduceSum took axes as input 1 from opset 13; the other reductions from 18.
  for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                         "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}) {
    table.add(op, [](Node& node, const CanonicalizeContext& ctx) {
      if (ctx.opset < 18) move_ints_attribute_to_input(node, "axes", 1, ctx);
    });
  }
  table.add("ReduceSum", [](Node& node, const CanonicalizeContext& ctx) {
    if (ctx.opset < 13) move_ints_attribute_to_input(node, "axes", 1, ctx);
  });
  // TopK: k attribute until opset 9, input 1 (a 1-element tensor) from 10.
  table.add("TopK", [](Node& node, const CanonicalizeContext& ctx) {
    if (ctx.opset >= 10 || !node.attrs.has("k")) return;
    int64_t k = node.attrs.get_int("k", 0);
    node.attrs.erase("k");
    set_constant_input(node, 1, Tensor::vector_i64({k}), ctx);
  });
}

}  // namespace orchid::onnx_frontend
