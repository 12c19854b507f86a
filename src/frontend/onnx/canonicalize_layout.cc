// Layout operators whose attributes became inputs or whose defaults changed.
#include "frontend/onnx/canonicalize_rules.h"

namespace orchid::onnx_frontend {

void add_layout_rules(RuleTable& table) {
  // Squeeze/Unsqueeze axes: attribute until opset 12, input 1 from 13.
  for (const char* op : {"Squeeze", "Unsqueeze"}) {
    table.add(op, [](Node& node, const CanonicalizeContext& ctx) {
      if (ctx.opset < 13) move_ints_attribute_to_input(node, "axes", 1, ctx);
    });
  }
  // Reshape: shape attribute until opset 4, input 1 from 5.
  table.add("Reshape", [](Node& node, const CanonicalizeContext& ctx) {
    if (ctx.opset < 5) move_ints_attribute_to_input(node, "shape", 1, ctx);
  });
  // Concat: axis optional (default 1) until opset 3, required from 4.
  table.add("Concat", [](Node& node, const CanonicalizeContext& ctx) {
    if (ctx.opset < 4 && !node.attrs.has("axis")) node.attrs.set("axis", int64_t(1));
  });
  // Split sizes: attribute until opset 12, input 1 from 13.
  table.add("Split", [](Node& node, const CanonicalizeContext& ctx) {
    if (ctx.opset < 13) move_ints_attribute_to_input(node, "split", 1, ctx);
  });
  // Slice: starts/ends/axes attributes until opset 9; inputs 1..3 from 10.
  table.add("Slice", [](Node& node, const CanonicalizeContext& ctx) {
    if (ctx.opset >= 10) return;
    move_ints_attribute_to_input(node, "starts", 1, ctx);
    move_ints_attribute_to_input(node, "ends", 2, ctx);
    move_ints_attribute_to_input(node, "axes", 3, ctx);
  });
  // Pad: pads and value attributes until opset 10; inputs from 11.
  table.add("Pad", [](Node& node, const CanonicalizeContext& ctx) {
    if (ctx.opset >= 11) return;
    if (node.attrs.has("paddings")) {  // opset 1 name
      node.attrs.set("pads", node.attrs.get_ints("paddings"));
      node.attrs.erase("paddings");
    }
    move_ints_attribute_to_input(node, "pads", 1, ctx);
    double value = node.attrs.get_float("value", 0.0);
    node.attrs.erase("value");
    // The constant has the data's dtype; the importer cannot know it here, so
    // float32 is used and the Pad implementation casts it (see layout.cc).
    set_constant_input(node, 2, Tensor::scalar_f32(float(value)), ctx);
  });
}

}  // namespace orchid::onnx_frontend
