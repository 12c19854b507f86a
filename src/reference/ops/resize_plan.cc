// The ONNX Resize coordinate and tap formulas shared by the reference operator
// and the Resize fission rule; see resize_plan.h and resize.cc.
#include "reference/ops/resize_plan.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "reference/ops/op_utils.h"
#include "support/error.h"

namespace orchid::reference {
namespace {

const Tensor* present(const Tensor* t) { return t && t->numel() > 0 ? t : nullptr; }

}  // namespace

ResizeAttrs parse_resize_attrs(const Attributes& attrs) {
  ResizeAttrs a;
  std::string mode = attrs.get_string("mode", "nearest");
  if (mode == "nearest")
    a.mode = ResizeMode::Nearest;
  else if (mode == "linear")
    a.mode = ResizeMode::Linear;
  else if (mode == "cubic")
    a.mode = ResizeMode::Cubic;
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

std::vector<int64_t> resize_axes(const Attributes& attrs, int64_t rank) {
  std::vector<int64_t> axes;
  if (attrs.has("axes")) {
    axes = normalize_axes(attrs.get_ints("axes"), rank);
    if (std::set<int64_t>(axes.begin(), axes.end()).size() != axes.size())
      ORCHID_FAIL() << "axes has duplicates";
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  return axes;
}

ResizePlan resize_plan(const Attributes& attrs, const Shape& in, const Tensor* roi, const Tensor* scales,
                       const Tensor* sizes) {
  std::vector<int64_t> axes = resize_axes(attrs, int64_t(in.size()));
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

double resize_original_coordinate(const ResizeAttrs& a, int64_t x, const ResizeAxis& m) {
  double out_width = m.scale * double(m.in);  // not rounded, as in the ONNX reference
  const std::string& c = a.coordinate_mode;
  if (c == "align_corners") return out_width == 1 ? 0.0 : double(x) * double(m.in - 1) / (out_width - 1);
  if (c == "asymmetric") return double(x) / m.scale;
  if (c == "tf_half_pixel_for_nn") return (double(x) + 0.5) / m.scale;
  if (c == "tf_crop_and_resize") {
    double span = (m.roi_end - m.roi_start) * double(m.in - 1);
    double x_ori = out_width == 1 ? span / 2 : double(x) * span / (out_width - 1);
    return x_ori + m.roi_start * double(m.in - 1);
  }
  if (c == "pytorch_half_pixel") return out_width == 1 ? -0.5 : (double(x) + 0.5) / m.scale - 0.5;
  if (c == "half_pixel_symmetric") {
    double adjustment = double(m.out) / out_width;
    double offset = double(m.in) / 2 * (1 - adjustment);
    return offset + (double(x) + 0.5) / m.scale - 0.5;
  }
  return (double(x) + 0.5) / m.scale - 0.5;  // half_pixel
}

double resize_cubic_kernel(double A, double t) {
  t = std::abs(t);
  if (t <= 1) return ((A + 2) * t - (A + 3)) * t * t + 1;
  if (t < 2) return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
  return 0.0;
}

int64_t resize_tap_weights(const ResizeAttrs& a, double ratio, double scale, std::vector<double>& w) {
  w.clear();
  if (a.mode == ResizeMode::Nearest) {
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
  double A = a.cubic_a;
  if (a.antialias && scale < 1.0) {
    // Widened kernel, evaluated at scale * distance, normalized.
    int64_t start = a.mode == ResizeMode::Linear ? int64_t(std::floor(-1 / scale) + 1)
                                                 : int64_t(std::floor(-2 / scale) + 1);
    double sum = 0;
    for (int64_t i = start; i < 2 - start; ++i) {
      double t = scale * (double(i) - ratio);
      w.push_back(a.mode == ResizeMode::Linear ? std::clamp(1 - std::abs(t), 0.0, 1.0) : resize_cubic_kernel(A, t));
      sum += w.back();
    }
    for (double& v : w) v /= sum;
    return start;
  }
  if (a.mode == ResizeMode::Linear) {
    w = {1 - ratio, ratio};
    return 0;
  }
  w = {resize_cubic_kernel(A, ratio + 1), resize_cubic_kernel(A, ratio), resize_cubic_kernel(A, 1 - ratio),
       resize_cubic_kernel(A, 2 - ratio)};
  return -1;
}

ResizeTaps resize_axis_taps(const ResizeAttrs& a, int64_t x, const ResizeAxis& m) {
  ResizeTaps taps;
  double x_ori = resize_original_coordinate(a, x, m);
  if (a.coordinate_mode == "tf_crop_and_resize" && (x_ori < 0 || x_ori > double(m.in - 1))) {
    taps.outside = true;
    return taps;
  }
  int64_t base = int64_t(std::ceil(x_ori)) - 1;
  double ratio = x_ori - double(base);
  std::vector<double> w;
  int64_t start = resize_tap_weights(a, ratio, m.scale, w);
  int64_t n = int64_t(w.size());
  // The reference picks the n taps from X edge-padded by ceil(n/2) on both
  // sides, so a window far outside X slides back to that padded range.
  int64_t pad = (n + 1) / 2;
  int64_t first = std::clamp<int64_t>(base + start, -pad, m.in + pad - n);
  double kept = 0;
  for (int64_t j = 0; j < n; ++j) {
    int64_t idx = first + j;
    double weight = w[size_t(j)];
    if (a.exclude_outside && (idx < 0 || idx >= m.in)) weight = 0;
    kept += weight;
    if (weight == 0) continue;
    taps.index.push_back(std::clamp<int64_t>(idx, 0, m.in - 1));
    taps.weight.push_back(weight);
  }
  if (a.exclude_outside && kept != 0) {
    for (double& v : taps.weight) v /= kept;
  }
  return taps;
}

}  // namespace orchid::reference
