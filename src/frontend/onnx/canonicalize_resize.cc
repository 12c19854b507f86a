// Upsample (opsets 7-9) and Resize before opset 11 become opset-18 Resize.
#include "frontend/onnx/canonicalize_rules.h"

namespace orchid::onnx_frontend {

namespace {

// Opset-10 Resize and Upsample: inputs (X, scales); asymmetric coordinates and
// floor rounding for nearest.
void to_opset18_resize(Node& node, const CanonicalizeContext& ctx) {
  node.op = "Resize";
  if (node.attrs.has("scales")) {  // Upsample-7 kept scales as an attribute
    std::vector<double> scales = node.attrs.get_floats("scales");
    node.attrs.erase("scales");
    Tensor t(DType::Float32, {int64_t(scales.size())});
    for (size_t i = 0; i < scales.size(); ++i) t.data<float>()[i] = float(scales[i]);
    node.inputs.resize(1);
    set_constant_input(node, 2, t, ctx);
  } else {
    ValueId scales = node.inputs.size() > 1 ? node.inputs[1] : kNoValue;
    node.inputs = {node.inputs[0], kNoValue, scales};
  }
  std::string mode = node.attrs.get_string("mode", "nearest");
  if (mode == "bilinear" || mode == "trilinear") mode = "linear";
  node.attrs.set("mode", mode);
  node.attrs.set("coordinate_transformation_mode", std::string("asymmetric"));
  if (mode == "nearest") node.attrs.set("nearest_mode", std::string("floor"));
}

}  // namespace

void add_resize_rules(RuleTable& table) {
  table.add("Upsample", to_opset18_resize);
  table.add("Resize", [](Node& node, const CanonicalizeContext& ctx) {
    if (ctx.opset < 11) to_opset18_resize(node, ctx);
  });
}

}  // namespace orchid::onnx_frontend
