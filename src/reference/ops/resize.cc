// Resize, opset 18/19 semantics (the canonical form): inputs X, roi, scales,
// sizes (roi/scales/sizes optional; exactly one of scales and sizes; an empty
// tensor counts as omitted, as opset 11 models pass empty placeholders).
// Upsample (opsets 7-9) and opset-10 Resize are rewritten by the importer into
// this form with coordinate_transformation_mode="asymmetric" and
// nearest_mode="floor".
//
// The formulas follow the ONNX reference implementation
// (onnx/reference/ops/op_resize.py): every axis is interpolated separably as a
// weighted sum of taps around the original coordinate x_original of each
// output coordinate. nearest, linear and cubic differ only in their taps and
// weights; antialias widens linear/cubic taps when downsampling.
// tf_half_pixel_for_nn (opset 11 only) is accepted too.
#include <algorithm>
#include <cmath>
#include <set>

#include "reference/ops/layout_utils.h"
#include "reference/ops/ops.h"
#include "support/error.h"

namespace orchid::reference {
namespace {

enum class Mode { Nearest, Linear, Cubic };

struct ResizeAttrs {
  Mode mode = Mode::Nearest;
  std::string coordinate_mode;
  std::string nearest_mode;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
  bool antialias = false;
};

ResizeAttrs parse_attrs(const Attributes& attrs) {
  ResizeAttrs a;
  std::string mode = attrs.get_string("mode", "nearest");
  if (mode == "nearest")
    a.mode = Mode::Nearest;
  else if (mode == "linear")
    a.mode = Mode::Linear;
  else if (mode == "cubic")
    a.mode = Mode::Cubic;
  else
    ORCHID_FAIL() << "unknown mode '" << mode << "' (expected nearest, linear or cubic)";
  a.coordinate_mode = attrs.get_string("coordinate_transformation_mode", "half_pixel");
  static const std::set<std::string> coordinate_modes = {
      "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",  "align_corners",
      "asymmetric", "tf_crop_and_resize",   "tf_half_pixel_for_nn"};
  if (!coordinate_modes.count(a.coordinate_mode)) {
    ORCHID_FAIL() << "unknown coordinate_transformation_mode '" << a.coordinate_mode << "'";
  }
  a.nearest_mode = attrs.get_string("nearest_mode", "round_prefer_floor");
  static const std::set<std::string> nearest_modes = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                                      "ceil"};
  if (!nearest_modes.count(a.nearest_mode))
    ORCHID_FAIL() << "unknown nearest_mode '" << a.nearest_mode << "'";
  a.cubic_a = attrs.get_float("cubic_coeff_a", -0.75);
  a.exclude_outside = attrs.get_int("exclude_outside", 0) != 0;
  a.extrapolation = attrs.get_float("extrapolation_value", 0.0);
  a.antialias = attrs.get_int("antialias", 0) != 0;
  return a;
}

// Output size, per-axis scale (output / input, as used by the coordinate
// formulas) and roi over all axes of X. Axes the `axes` attribute leaves out
// keep their size, scale 1 and roi [0, 1].
struct ResizePlan {
  Shape out;
  std::vector<double> scales;
  std::vector<double> roi_start, roi_end;
};

const Tensor* present(const Tensor* t) { return t && t->numel() > 0 ? t : nullptr; }

ResizePlan plan_resize(const Attributes& attrs, const Shape& in, const Tensor* roi, const Tensor* scales,
                       const Tensor* sizes) {
  int64_t rank = int64_t(in.size());
  std::vector<int64_t> axes;
  if (attrs.has("axes")) {
    axes = normalize_axes(attrs.get_ints("axes"), rank);
    if (std::set<int64_t>(axes.begin(), axes.end()).size() != axes.size())
      ORCHID_FAIL() << "axes has duplicates";
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  ResizePlan plan{in, std::vector<double>(in.size(), 1.0), std::vector<double>(in.size(), 0.0),
                  std::vector<double>(in.size(), 1.0)};
  roi = present(roi);
  scales = present(scales);
  sizes = present(sizes);
  if (roi) {
    if (roi->numel() != int64_t(2 * axes.size())) {
      ORCHID_FAIL() << "roi has " << roi->numel() << " values, expected " << 2 * axes.size();
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      plan.roi_start[size_t(axes[i])] = roi->at_f64(int64_t(i));
      plan.roi_end[size_t(axes[i])] = roi->at_f64(int64_t(i + axes.size()));
    }
  }
  if ((scales == nullptr) == (sizes == nullptr))
    ORCHID_FAIL() << "exactly one of scales and sizes must be given";
  const Tensor* given = scales ? scales : sizes;
  if (given->numel() != int64_t(axes.size())) {
    ORCHID_FAIL() << (scales ? "scales" : "sizes") << " has " << given->numel() << " values, expected "
                  << axes.size();
  }
  if (scales) {
    for (size_t i = 0; i < axes.size(); ++i) {
      size_t axis = size_t(axes[i]);
      double scale = scales->at_f64(int64_t(i));
      if (!(scale > 0)) ORCHID_FAIL() << "scales must be positive, got " << scale;
      plan.scales[axis] = scale;
      plan.out[axis] = int64_t(std::floor(double(in[axis]) * scale));
    }
    return plan;
  }
  std::string policy = attrs.get_string("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    ORCHID_FAIL() << "unknown keep_aspect_ratio_policy '" << policy << "'";
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    size_t axis = size_t(axes[i]);
    int64_t size = sizes->at_i64(int64_t(i));
    if (size < 0) ORCHID_FAIL() << "sizes must not be negative, got " << size;
    plan.out[axis] = size;
    plan.scales[axis] = double(size) / double(in[axis]);
  }
  if (policy != "stretch") {
    // One scale for all resized axes: the smallest (not_larger) or largest
    // (not_smaller); sizes are then round_half_up(scale * input).
    double scale = plan.scales[size_t(axes[0])];
    for (int64_t axis : axes) {
      double s = plan.scales[size_t(axis)];
      scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
    }
    for (int64_t axis : axes) {
      plan.scales[size_t(axis)] = scale;
      plan.out[size_t(axis)] = int64_t(scale * double(in[size_t(axis)]) + 0.5);
    }
  }
  return plan;
}

std::vector<TensorType> infer_resize(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  parse_attrs(ctx.attrs());
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
  ResizePlan plan = plan_resize(ctx.attrs(), x.shape, roi, scales, sizes);
  return one(x.dtype, plan.out);
}

// ---------------------------------------------------------------- per-axis taps
// For one output coordinate along one axis: the input indices and weights to
// combine, or `outside` when tf_crop_and_resize maps it outside the input.
struct Taps {
  bool outside = false;
  std::vector<int64_t> index;  // already clamped into [0, input size)
  std::vector<double> weight;
};

double original_coordinate(const ResizeAttrs& a, int64_t x, int64_t in, int64_t out, double scale,
                           double roi_start, double roi_end) {
  double out_width = scale * double(in);  // not rounded, as in the ONNX reference
  const std::string& m = a.coordinate_mode;
  if (m == "align_corners") return out_width == 1 ? 0.0 : double(x) * double(in - 1) / (out_width - 1);
  if (m == "asymmetric") return double(x) / scale;
  if (m == "tf_half_pixel_for_nn") return (double(x) + 0.5) / scale;
  if (m == "tf_crop_and_resize") {
    double span = (roi_end - roi_start) * double(in - 1);
    double x_ori = out_width == 1 ? span / 2 : double(x) * span / (out_width - 1);
    return x_ori + roi_start * double(in - 1);
  }
  if (m == "pytorch_half_pixel") return out_width == 1 ? -0.5 : (double(x) + 0.5) / scale - 0.5;
  if (m == "half_pixel_symmetric") {
    double adjustment = double(out) / out_width;
    double offset = double(in) / 2 * (1 - adjustment);
    return offset + (double(x) + 0.5) / scale - 0.5;
  }
  return (double(x) + 0.5) / scale - 0.5;  // half_pixel
}

// Weights for taps at offsets start, start+1, ... from the base index
// floor-ish(x) (ratio = x - base, in (0, 1]); returns start.
int64_t tap_weights(const ResizeAttrs& a, double ratio, double scale, std::vector<double>& w) {
  w.clear();
  double A = a.cubic_a;
  auto cubic = [A](double t) {  // Keys' cubic kernel
    t = std::abs(t);
    if (t <= 1) return ((A + 2) * t - (A + 3)) * t * t + 1;
    if (t < 2) return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
    return 0.0;
  };
  if (a.mode == Mode::Nearest) {
    bool ceil_side;
    if (ratio == 1.0)
      ceil_side = true;  // x is an integer: the tap at x itself
    else if (a.nearest_mode == "round_prefer_floor")
      ceil_side = ratio > 0.5;
    else if (a.nearest_mode == "round_prefer_ceil")
      ceil_side = ratio >= 0.5;
    else
      ceil_side = a.nearest_mode == "ceil";
    w = {ceil_side ? 0.0 : 1.0, ceil_side ? 1.0 : 0.0};
    return 0;
  }
  if (a.antialias && scale < 1.0) {
    // Widened kernel, evaluated at scale * distance, normalized.
    int64_t start =
        a.mode == Mode::Linear ? int64_t(std::floor(-1 / scale) + 1) : int64_t(std::floor(-2 / scale) + 1);
    double sum = 0;
    for (int64_t i = start; i < 2 - start; ++i) {
      double t = scale * (double(i) - ratio);
      w.push_back(a.mode == Mode::Linear ? std::clamp(1 - std::abs(t), 0.0, 1.0) : cubic(t));
      sum += w.back();
    }
    for (double& v : w) v /= sum;
    return start;
  }
  if (a.mode == Mode::Linear) {
    w = {1 - ratio, ratio};
    return 0;
  }
  w = {cubic(ratio + 1), cubic(ratio), cubic(1 - ratio), cubic(2 - ratio)};
  return -1;
}

Taps axis_taps(const ResizeAttrs& a, int64_t x, int64_t in, int64_t out, double scale, double roi_start,
               double roi_end) {
  Taps taps;
  double x_ori = original_coordinate(a, x, in, out, scale, roi_start, roi_end);
  if (a.coordinate_mode == "tf_crop_and_resize" && (x_ori < 0 || x_ori > double(in - 1))) {
    taps.outside = true;
    return taps;
  }
  int64_t base = int64_t(std::ceil(x_ori)) - 1;
  double ratio = x_ori - double(base);
  std::vector<double> w;
  int64_t start = tap_weights(a, ratio, scale, w);
  int64_t n = int64_t(w.size());
  // The reference picks the n taps from X edge-padded by ceil(n/2) on both
  // sides, so a window far outside X slides back to that padded range.
  int64_t pad = (n + 1) / 2;
  int64_t first = std::clamp<int64_t>(base + start, -pad, in + pad - n);
  double kept = 0;
  for (int64_t j = 0; j < n; ++j) {
    int64_t idx = first + j;
    double weight = w[size_t(j)];
    if (a.exclude_outside && (idx < 0 || idx >= in)) weight = 0;
    kept += weight;
    if (weight == 0) continue;
    taps.index.push_back(std::clamp<int64_t>(idx, 0, in - 1));
    taps.weight.push_back(weight);
  }
  if (a.exclude_outside && kept != 0) {
    for (double& v : taps.weight) v /= kept;
  }
  return taps;
}

std::vector<Tensor> eval_resize(const EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  ResizeAttrs a = parse_attrs(ctx.attrs());
  ResizePlan plan =
      plan_resize(ctx.attrs(), x.shape(), ctx.has_input(1) ? ctx.inputs[1] : nullptr,
                  ctx.has_input(2) ? ctx.inputs[2] : nullptr, ctx.has_input(3) ? ctx.inputs[3] : nullptr);
  const TensorType& type = ctx.output_types[0];
  size_t rank = x.rank();
  // taps[d][o]: how output coordinate o along axis d reads the input.
  std::vector<std::vector<Taps>> taps(rank);
  for (size_t d = 0; d < rank; ++d) {
    for (int64_t o = 0; o < type.shape[d]; ++o) {
      taps[d].push_back(
          axis_taps(a, o, x.dim(d), type.shape[d], plan.scales[d], plan.roi_start[d], plan.roi_end[d]));
    }
  }
  std::vector<int64_t> strides = shape_strides(x.shape());
  Tensor out(type);
  int64_t flat = 0;
  std::vector<const Taps*> point(rank);
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
