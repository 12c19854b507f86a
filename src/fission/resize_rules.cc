// Fission rule for Resize: a separable interpolation, rewritten axis by axis
// as constant index maps.
//
// For every resized axis the rule computes, at fission time, the taps (input
// indices and weights) of each output coordinate, then emits
//  - nearest (every output reads one input with weight 1): one Gather with a
//    constant int64 index vector;
//  - linear, cubic, and anything else with at most kMaxGatherTaps taps per
//    output: one Gather per tap slot and a weighted sum with constant weight
//    vectors shaped to broadcast along the axis (memory-bound: O(taps) work
//    per output, where a matrix costs O(input size));
//  - antialias downsampling (wide kernels): out = W_axis @ in along the axis,
//    one MatMul with a constant [out, in] interpolation matrix (the input is
//    reshaped to [prefix, in, suffix], so no Transpose is needed).
// tf_crop_and_resize's extrapolation_value is applied last with one Where and
// a constant mask. Linear/cubic weights are applied in float32 (float64 for
// float64 inputs); the reference accumulates in double. Exact for finite
// inputs; a slot a coordinate does not use reads the next index with weight
// 0, so an infinite input there gives NaN where the reference skips the tap.
// tf_crop_and_resize with a roi known only at run time evaluates the same
// coordinate formulas with elementwise primitives into run-time Gather
// indices (nearest and linear modes).
//
// The attribute parsing, plan and coordinate/tap formulas are the reference's
// own (src/reference/ops/resize_plan.h).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "fission/rules.h"
#include "reference/ops/resize_plan.h"
#include "support/error.h"

namespace orchid::fission {
namespace {

constexpr size_t kMaxGatherTaps = 4;

using reference::ResizeAttrs;
using reference::ResizeAxis;
using reference::ResizeMode;
using reference::ResizePlan;
using reference::ResizeTaps;

const Tensor* present(const FissionBuilder& b, const Node& node, size_t i, const char* name) {
  if (i >= node.inputs.size() || node.inputs[i] == kNoValue) return nullptr;
  const Tensor* t = b.constant_value(node.inputs[i]);
  if (!t) ORCHID_FAIL() << node.describe() << ": input " << name << " must be a constant for fission";
  return t->numel() > 0 ? t : nullptr;
}

// tf_crop_and_resize with a roi computed at run time (not a constant).
bool runtime_roi(const Node& node, const FissionBuilder& b) {
  return node.inputs.size() > 1 && node.inputs[1] != kNoValue && !b.constant_value(node.inputs[1]) &&
         b.shape(node.inputs[1]) != Shape{0} &&
         node.attrs.get_string("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize";
}

ResizePlan plan_resize(const Node& node, const FissionBuilder& b) {
  // roi only matters for tf_crop_and_resize: elsewhere it may be anything.
  bool uses_roi = node.attrs.get_string("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize";
  const Tensor* roi = uses_roi && !runtime_roi(node, b) ? present(b, node, 1, "roi") : nullptr;
  const Tensor* scales = present(b, node, 2, "scales");
  const Tensor* sizes = present(b, node, 3, "sizes");
  return reference::resize_plan(node.attrs, b.shape(node.inputs[0]), roi, scales, sizes);
}

// ------------------------------------------------------------- emission
// The shape [out, 1, ...] of a per-coordinate vector along `axis` of a rank-r
// tensor (broadcasts against the trailing axes).
Shape along_axis(int64_t out, size_t axis, size_t rank) {
  Shape shape(rank - axis, 1);
  shape[0] = out;
  return shape;
}

bool is_identity(const std::vector<ResizeTaps>& taps, int64_t in) {
  if (int64_t(taps.size()) != in) return false;
  for (size_t o = 0; o < taps.size(); ++o) {
    const ResizeTaps& t = taps[o];
    if (t.outside || t.index.size() != 1 || t.index[0] != int64_t(o) || t.weight[0] != 1.0) return false;
  }
  return true;
}

// Every coordinate (outside ones aside, which the mask overwrites) reads one
// input with weight 1: returns its index vector, else an empty one.
std::vector<int64_t> single_indices(const std::vector<ResizeTaps>& taps) {
  std::vector<int64_t> index;
  for (const ResizeTaps& t : taps) {
    if (t.outside) {
      index.push_back(0);
      continue;
    }
    if (t.index.size() != 1 || t.weight[0] != 1.0) return {};
    index.push_back(t.index[0]);
  }
  return index;
}

ValueId gather(FissionBuilder& b, ValueId x, const std::vector<int64_t>& index, size_t axis) {
  Attributes attrs;
  attrs.set("axis", int64_t(axis));
  return b.add1("Gather", {x, b.ints(index)}, std::move(attrs));
}

// Sum over tap slots j of Gather(x, index_j) * weight_j along `axis`.
ValueId weighted_gathers(FissionBuilder& b, ValueId x, const std::vector<ResizeTaps>& taps, size_t axis, size_t slots) {
  DType dtype = b.dtype(x);
  Shape wshape = along_axis(int64_t(taps.size()), axis, b.rank(x));
  const int64_t last = b.shape(x)[axis] - 1;
  ValueId acc = kNoValue;
  for (size_t j = 0; j < slots; ++j) {
    std::vector<int64_t> index;
    Tensor weight(dtype, wshape);
    for (size_t o = 0; o < taps.size(); ++o) {
      bool has = j < taps[o].index.size();
      // A slot the coordinate does not use reads the next index with weight
      // 0: the table stays affine along the axis (generated kernels read it
      // at affine addresses, codegen/cpu/lower_schedule.cc).
      const int64_t unused = taps[o].index.empty() ? 0 : std::min(taps[o].index.back() + 1, last);
      index.push_back(has ? taps[o].index[j] : unused);
      weight.set_f64(int64_t(o), has ? taps[o].weight[j] : 0.0);
    }
    ValueId term = b.binary("Mul", gather(b, x, index, axis), b.constant(std::move(weight)));
    acc = acc == kNoValue ? term : b.binary("Add", acc, term);
  }
  return acc;
}

// out = W @ x along `axis`, W[o][i] = the summed weights of input i for o.
ValueId matrix_along_axis(FissionBuilder& b, ValueId x, const std::vector<ResizeTaps>& taps, size_t axis) {
  const Shape shape = b.shape(x);  // a copy: adding constants may move the graph's values
  int64_t in = shape[axis], out = int64_t(taps.size());
  int64_t prefix = 1, suffix = 1;
  for (size_t d = 0; d < axis; ++d) prefix *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) suffix *= shape[d];
  bool last = suffix == 1;
  // W [out, in] for the middle-axis form, W^T [in, out] when the axis is last.
  Tensor w(b.dtype(x), last ? Shape{in, out} : Shape{out, in});
  std::vector<double> dense(size_t(in * out), 0.0);
  for (int64_t o = 0; o < out; ++o) {
    const ResizeTaps& t = taps[size_t(o)];
    for (size_t j = 0; j < t.index.size(); ++j) {
      int64_t flat = last ? t.index[j] * out + o : o * in + t.index[j];
      dense[size_t(flat)] += t.weight[j];
    }
  }
  for (size_t i = 0; i < dense.size(); ++i) w.set_f64(int64_t(i), dense[i]);
  ValueId wv = b.constant(std::move(w));
  Shape result = shape;
  result[axis] = out;
  if (last) return b.reshape(b.binary("MatMul", b.reshape(x, {prefix, in}), wv), result);
  ValueId y = b.binary("MatMul", wv, b.reshape(x, {prefix, in, suffix}));
  return b.reshape(y, result);
}

// Applies one axis's taps; `compute` is the float type weights are applied in.
ValueId resize_axis(FissionBuilder& b, ValueId x, const std::vector<ResizeTaps>& taps, size_t axis, DType compute) {
  std::vector<int64_t> index = single_indices(taps);
  if (!index.empty() || taps.empty()) return gather(b, x, index, axis);
  size_t slots = 0;
  for (const ResizeTaps& t : taps) slots = std::max(slots, t.index.size());
  x = b.cast(x, compute);
  if (slots <= kMaxGatherTaps) return weighted_gathers(b, x, taps, axis, slots);
  return matrix_along_axis(b, x, taps, axis);
}

// The outside mask of tf_crop_and_resize (true where any axis is outside),
// broadcastable to the output; kNoValue when nothing is outside.
ValueId outside_mask(FissionBuilder& b, const std::vector<std::vector<ResizeTaps>>& taps) {
  ValueId mask = kNoValue;
  size_t rank = taps.size();
  for (size_t d = 0; d < rank; ++d) {
    bool any = false;
    Tensor m(DType::Bool, along_axis(int64_t(taps[d].size()), d, rank));
    for (size_t o = 0; o < taps[d].size(); ++o) {
      m.set_f64(int64_t(o), taps[d][o].outside ? 1.0 : 0.0);
      any = any || taps[d][o].outside;
    }
    if (!any) continue;
    ValueId mv = b.constant(std::move(m));
    mask = mask == kNoValue ? mv : b.binary("Or", mask, mv);  // folded: both constants
  }
  return mask;
}

// ------------------------------------------------------------- run-time roi
// tf_crop_and_resize whose roi is only known at run time: the same formulas
// as resize_axis_taps, evaluated by elementwise primitives (coordinates in
// float64) into index and weight vectors that feed Gathers with run-time
// indices.
// Nearest and linear modes only (no exclude_outside, no antialias).
struct RuntimeAxis {
  ValueId index[2] = {kNoValue, kNoValue}, weight[2] = {kNoValue, kNoValue};
  ValueId outside = kNoValue;
};

RuntimeAxis runtime_axis(FissionBuilder& b, const ResizeAttrs& a, ValueId roi, size_t i, size_t naxes,
                         const ResizeAxis& m) {
  const DType f64 = DType::Float64;
  auto c = [&](double v) { return b.scalar(v, f64); };
  double in1 = double(m.in - 1), out_width = m.scale * double(m.in);
  ValueId start = b.slice(roi, {int64_t(i)}, {int64_t(i + 1)}, {0});
  ValueId end = b.slice(roi, {int64_t(i + naxes)}, {int64_t(i + naxes + 1)}, {0});
  ValueId span = b.binary("Mul", b.binary("Sub", end, start), c(in1));
  Tensor positions(f64, {m.out});
  for (int64_t o = 0; o < m.out; ++o) positions.set_f64(o, double(o));
  ValueId x_ori = out_width == 1
                      ? b.binary("Div", span, c(2.0))
                      : b.binary("Div", b.binary("Mul", b.constant(std::move(positions)), span), c(out_width - 1));
  x_ori = b.binary("Add", x_ori, b.binary("Mul", start, c(in1)));
  if (b.shape(x_ori) != Shape{m.out}) x_ori = b.add1("Expand", {x_ori, b.ints({m.out})});
  RuntimeAxis r;
  r.outside = b.binary("Or", b.binary("Less", x_ori, c(0.0)), b.binary("Greater", x_ori, c(in1)));
  ValueId base = b.binary("Sub", b.unary("Ceil", x_ori), c(1.0));
  ValueId ratio = b.binary("Sub", x_ori, base);
  ValueId first = b.binary("Min", b.binary("Max", base, c(-1.0)), c(in1));  // clamp(base, -pad, in + pad - n)
  auto index_at = [&](ValueId v) { return b.cast(b.binary("Min", b.binary("Max", v, c(0.0)), c(in1)), DType::Int64); };
  if (a.mode == ResizeMode::Linear) {
    r.index[0] = index_at(first);
    r.index[1] = index_at(b.binary("Add", first, c(1.0)));
    r.weight[0] = b.binary("Sub", c(1.0), ratio);
    r.weight[1] = ratio;
    return r;
  }
  // Nearest: the ceil side when ratio == 1 (an integer coordinate) or as
  // nearest_mode says; the floor side reads `first`.
  ValueId ceil_side = b.binary("Equal", ratio, c(1.0));
  if (a.nearest_mode == "round_prefer_floor" || a.nearest_mode == "round_prefer_ceil") {
    const char* cmp = a.nearest_mode == "round_prefer_floor" ? "Greater" : "GreaterOrEqual";
    ceil_side = b.binary("Or", ceil_side, b.binary(cmp, ratio, c(0.5)));
  } else if (a.nearest_mode == "ceil") {
    ceil_side =
        b.add1("Expand", {b.constant(Tensor::from_vector(DType::Bool, {1}, std::vector<int>{1})), b.ints({m.out})});
  }
  r.index[0] = index_at(b.binary("Add", first, b.cast(ceil_side, f64)));
  return r;
}

std::vector<ValueId> resize_runtime_roi(const Node& node, FissionBuilder& b, const ResizeAttrs& a,
                                        const ResizePlan& plan) {
  if (a.mode == ResizeMode::Cubic || a.exclude_outside || a.antialias) {
    ORCHID_FAIL() << node.describe() << ": tf_crop_and_resize with a run-time roi is fissioned for nearest and "
                  << "linear modes only (no exclude_outside, no antialias)";
  }
  ValueId x = node.inputs[0];
  DType dtype = b.dtype(x);
  Shape in = b.shape(x);
  std::vector<int64_t> axes = reference::resize_axes(node.attrs, int64_t(in.size()));
  ValueId roi = b.cast(node.inputs[1], DType::Float64);
  ValueId y = a.mode == ResizeMode::Nearest ? x : b.cast(x, dtype == DType::Float32 ? dtype : DType::Float64);
  ValueId mask = kNoValue;
  for (size_t i = 0; i < axes.size(); ++i) {
    size_t d = size_t(axes[i]);
    RuntimeAxis r = runtime_axis(b, a, roi, i, axes.size(), {in[d], plan.out[d], plan.scales[d], 0, 1});
    Shape along = along_axis(plan.out[d], d, in.size());
    Attributes gather_attrs;
    gather_attrs.set("axis", int64_t(d));
    ValueId acc = kNoValue;
    for (int j = 0; j < 2 && r.index[j] != kNoValue; ++j) {
      ValueId term = b.add1("Gather", {y, r.index[j]}, gather_attrs);
      if (r.weight[j] != kNoValue) term = b.binary("Mul", term, b.reshape(b.cast(r.weight[j], b.dtype(y)), along));
      acc = acc == kNoValue ? term : b.binary("Add", acc, term);
    }
    y = acc;
    ValueId outside = b.reshape(r.outside, along);
    mask = mask == kNoValue ? outside : b.binary("Or", mask, outside);
  }
  if (mask != kNoValue) {
    double extrapolation = node.attrs.get_float("extrapolation_value", 0.0);
    y = b.add1("Where", {mask, b.scalar(extrapolation, b.dtype(y)), y});
  }
  return {b.cast(y, dtype)};
}

std::vector<ValueId> resize(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  DType dtype = b.dtype(x);
  // Integer images (uint8, ...) interpolate in float64 so that the final
  // truncating Cast sees the reference's values.
  DType compute = dtype == DType::Float64 || !is_float(dtype) ? DType::Float64 : DType::Float32;
  ResizeAttrs a = reference::parse_resize_attrs(node.attrs);
  ResizePlan plan = plan_resize(node, b);
  if (runtime_roi(node, b)) return resize_runtime_roi(node, b, a, plan);
  size_t rank = b.rank(x);
  std::vector<std::vector<ResizeTaps>> taps(rank);
  for (size_t d = 0; d < rank; ++d) {
    ResizeAxis m{b.shape(x)[d], plan.out[d], plan.scales[d], plan.roi_start[d], plan.roi_end[d]};
    for (int64_t o = 0; o < m.out; ++o) taps[d].push_back(reference::resize_axis_taps(a, o, m));
  }
  // Shrinking axes first: later axes then work on fewer elements.
  std::vector<size_t> order(rank);
  std::iota(order.begin(), order.end(), 0);
  auto ratio = [&](size_t d) { return double(plan.out[d]) / double(std::max<int64_t>(b.shape(x)[d], 1)); };
  std::stable_sort(order.begin(), order.end(), [&](size_t p, size_t q) { return ratio(p) < ratio(q); });
  ValueId y = x;
  for (size_t d : order) {
    if (!is_identity(taps[d], b.shape(x)[d])) y = resize_axis(b, y, taps[d], d, compute);
  }
  ValueId mask = outside_mask(b, taps);
  if (mask != kNoValue) {
    double extrapolation = node.attrs.get_float("extrapolation_value", 0.0);
    y = b.add1("Where", {mask, b.scalar(extrapolation, b.dtype(y)), y});
  }
  return {b.cast(y, dtype)};
}

}  // namespace

void add_resize_rules(FissionRuleTable& table) { table.add("Resize", resize); }

}  // namespace orchid::fission
