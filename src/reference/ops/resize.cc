// Resize, opset 18/19 semantics (the canonical form): inputs X, roi, scales,
// sizes (roi/scales/sizes optional; exactly one of scales and sizes; an empty
// tensor counts as omitted, as opset 11 models pass empty placeholders).
// Upsample (opsets 7-9) and opset-10 Resize are rewritten by the importer into
// this form with coordinate_transformation_mode="asymmetric" and
// nearest_mode="floor".
//
// The formulas (resize_plan.cc, shared with the fission rule) follow the ONNX
// reference implementation (onnx/reference/ops/op_resize.py): every axis is interpolated separably as a
// weighted sum of taps around the original coordinate x_original of each
// output coordinate. nearest, linear and cubic differ only in their taps and
// weights; antialias widens linear/cubic taps when downsampling.
// tf_half_pixel_for_nn (opset 11 only) is accepted too.
#include "reference/ops/layout_utils.h"
#include "reference/ops/ops.h"
#include "reference/ops/resize_plan.h"
#include "support/error.h"

namespace orchid::reference {
namespace {

std::vector<TensorType> infer_resize(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  parse_resize_attrs(ctx.attrs());
  // scales/sizes decide the output shape; roi only matters for tf_crop_and_resize.
  const Tensor* scales = nullptr;
  const Tensor* sizes = nullptr;
  if (ctx.has_input(2) && ctx.input(2).numel() > 0) {
    if (!is_float(ctx.input(2).dtype)) ORCHID_FAIL() << "expected a float tensor for input 2 (scales)";
    scales = &ctx.require_value(2, "scales");
  }
  if (ctx.has_input(3) && ctx.input(3).numel() > 0) {
    require_integer_input(ctx.input(3), 3, "sizes");
    sizes = &ctx.require_value(3, "sizes");
  }
  const Tensor* roi = ctx.has_input(1) && ctx.input(1).numel() > 0 ? ctx.value(1) : nullptr;
  ResizePlan plan = resize_plan(ctx.attrs(), x.shape, roi, scales, sizes);
  return one(x.dtype, plan.out);
}

std::vector<Tensor> eval_resize(const EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  ResizeAttrs a = parse_resize_attrs(ctx.attrs());
  ResizePlan plan =
      resize_plan(ctx.attrs(), x.shape(), ctx.has_input(1) ? ctx.inputs[1] : nullptr,
                  ctx.has_input(2) ? ctx.inputs[2] : nullptr, ctx.has_input(3) ? ctx.inputs[3] : nullptr);
  const TensorType& type = ctx.output_types[0];
  size_t rank = x.rank();
  // taps[d][o]: how output coordinate o along axis d reads the input.
  std::vector<std::vector<ResizeTaps>> taps(rank);
  for (size_t d = 0; d < rank; ++d) {
    ResizeAxis m{x.dim(d), type.shape[d], plan.scales[d], plan.roi_start[d], plan.roi_end[d]};
    for (int64_t o = 0; o < type.shape[d]; ++o) taps[d].push_back(resize_axis_taps(a, o, m));
  }
  std::vector<int64_t> strides = shape_strides(x.shape());
  Tensor out(type);
  int64_t flat = 0;
  std::vector<const ResizeTaps*> point(rank);
  for_each_index(type.shape, [&](const std::vector<int64_t>& o) {
    bool outside = false;
    for (size_t d = 0; d < rank; ++d) {
      point[d] = &taps[d][size_t(o[d])];
      outside = outside || point[d]->outside;
    }
    double value = a.extrapolation;
    if (!outside) {
      // Sum over the tensor product of the per-axis taps.
      value = 0;
      Shape counts(rank);
      for (size_t d = 0; d < rank; ++d) counts[d] = int64_t(point[d]->index.size());
      for_each_index(counts, [&](const std::vector<int64_t>& t) {
        double weight = 1;
        int64_t offset = 0;
        for (size_t d = 0; d < rank; ++d) {
          weight *= point[d]->weight[size_t(t[d])];
          offset += point[d]->index[size_t(t[d])] * strides[d];
        }
        value += weight * x.at_f64(offset);
      });
    }
    out.set_f64(flat++, value);
  });
  return {out};
}

}  // namespace

void register_resize_ops(OpRegistry& registry) {
  registry.add({"Resize", "", infer_resize, eval_resize, 1, 4});
}

}  // namespace orchid::reference
