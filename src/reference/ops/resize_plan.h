// The ONNX Resize coordinate and tap formulas, shared by the reference
// operator (resize.cc) and the Resize fission rule (fission/resize_rules.cc):
// attribute parsing, the per-axis plan (output size, scale, roi) and, for
// each output coordinate along an axis, the input indices and weights to
// combine. See resize.cc for the semantics.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace orchid::reference {

enum class ResizeMode { Nearest, Linear, Cubic };

struct ResizeAttrs {
  ResizeMode mode = ResizeMode::Nearest;
  std::string coordinate_mode;
  std::string nearest_mode;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
  bool antialias = false;
};

// Parses and validates the Resize attributes (all but axes and
// keep_aspect_ratio_policy, which resize_plan reads).
ResizeAttrs parse_resize_attrs(const Attributes& attrs);

// The resized axes: the `axes` attribute normalized (no duplicates), else
// every axis of a rank-`rank` X.
std::vector<int64_t> resize_axes(const Attributes& attrs, int64_t rank);

// Output size, per-axis scale (output / input, as used by the coordinate
// formulas) and roi over all axes of X. Axes the `axes` attribute leaves out
// keep their size, scale 1 and roi [0, 1].
struct ResizePlan {
  Shape out;
  std::vector<double> scales;
  std::vector<double> roi_start, roi_end;
};

// roi, scales and sizes may be null; an empty tensor counts as omitted.
// Exactly one of scales and sizes must be given.
ResizePlan resize_plan(const Attributes& attrs, const Shape& in, const Tensor* roi, const Tensor* scales,
                       const Tensor* sizes);

// One axis of the resize: input and output sizes, scale and roi.
struct ResizeAxis {
  int64_t in = 0, out = 0;
  double scale = 1, roi_start = 0, roi_end = 1;
};

// For one output coordinate along one axis: the input indices and weights to
// combine, or `outside` when tf_crop_and_resize maps it outside the input.
struct ResizeTaps {
  bool outside = false;
  std::vector<int64_t> index;  // already clamped into [0, input size)
  std::vector<double> weight;
};

// The original (input) coordinate of output coordinate x.
double resize_original_coordinate(const ResizeAttrs& a, int64_t x, const ResizeAxis& m);

// Keys' cubic kernel with coefficient A.
double resize_cubic_kernel(double A, double t);

// Weights for taps at offsets start, start+1, ... from the base index
// floor-ish(x) (ratio = x - base, in (0, 1]); returns start.
int64_t resize_tap_weights(const ResizeAttrs& a, double ratio, double scale, std::vector<double>& w);

// The taps of output coordinate x along an axis.
ResizeTaps resize_axis_taps(const ResizeAttrs& a, int64_t x, const ResizeAxis& m);

}  // namespace orchid::reference
