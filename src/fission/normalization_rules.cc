// Fission of the normalization operators (semantics: src/reference/ops/
// normalization.cc): Softmax, LogSoftmax, Hardmax, LayerNormalization,
// BatchNormalization (inference), InstanceNormalization, GroupNormalization,
// LpNormalization, LRN, MeanVarianceNormalization.
//
// Numerical safety: softmaxes subtract the row maximum before Exp; variances
// are two-pass (mean first, then the mean of squared deviations), never
// E[x^2] - E[x]^2; half-precision inputs are normalized in float32. Means are
// ReduceSum / n so the rules need no other family's ReduceMean rule.
#include <algorithm>
#include <numeric>

#include "fission/rules.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

int64_t positive_axis(int64_t axis, size_t rank) { return axis < 0 ? axis + int64_t(rank) : axis; }

std::vector<int64_t> axis_range(int64_t begin, int64_t end) {
  std::vector<int64_t> axes(size_t(std::max<int64_t>(0, end - begin)));
  std::iota(axes.begin(), axes.end(), begin);
  return axes;
}

int64_t product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= shape[i];
  return p;
}

// Statistics of half-precision tensors are computed in float32: float16 sums
// of a few thousand elements lose the tolerance the reference (double) keeps.
DType compute_dtype(DType dtype) {
  return dtype == DType::Float16 || dtype == DType::BFloat16 ? DType::Float32 : dtype;
}

// Mean over `axes` (kept as size-1 dimensions): ReduceSum / count.
ValueId mean(FissionBuilder& b, ValueId x, const std::vector<int64_t>& axes) {
  int64_t count = 1;
  for (int64_t a : axes) count *= b.shape(x)[size_t(a)];
  return b.binary("Div", b.reduce("ReduceSum", x, axes, true), b.scalar(double(count), b.dtype(x)));
}

// x - mean(x) and the biased variance over `axes` (both keepdims).
struct Centred {
  ValueId mean, deviation, variance;
};

Centred centre(FissionBuilder& b, ValueId x, const std::vector<int64_t>& axes) {
  Centred c;
  c.mean = mean(b, x, axes);
  c.deviation = b.binary("Sub", x, c.mean);
  c.variance = mean(b, b.binary("Mul", c.deviation, c.deviation), axes);
  return c;
}

// 1 / sqrt(variance + epsilon).
ValueId inv_std(FissionBuilder& b, ValueId variance, double epsilon) {
  ValueId shifted = b.binary("Add", variance, b.scalar(epsilon, b.dtype(variance)));
  return b.unary("Reciprocal", b.unary("Sqrt", shifted));
}

// A per-channel parameter [C] as [C, 1, ..., 1] so it broadcasts against
// [N, C, d1, ...] of rank `rank`; cast to `dtype`.
ValueId channel_param(FissionBuilder& b, ValueId p, size_t rank, DType dtype) {
  Shape shape(rank - 1, 1);
  shape[0] = b.shape(p)[0];
  return b.cast(b.reshape(p, shape), dtype);
}

// ---------------------------------------------------------------------------
// Softmax, LogSoftmax, Hardmax

// Along one axis; the max is subtracted so Exp never overflows.
ValueId softmax_along(FissionBuilder& b, ValueId x, int64_t axis, bool log) {
  ValueId max = b.reduce("ReduceMax", x, {axis}, true);
  ValueId shifted = b.binary("Sub", x, max);
  ValueId e = b.unary("Exp", shifted);
  ValueId sum = b.reduce("ReduceSum", e, {axis}, true);
  return log ? b.binary("Sub", shifted, b.unary("Log", sum)) : b.binary("Div", e, sum);
}

// Ties go to the first index (ArgMax's default), as in the reference.
ValueId hardmax_along(FissionBuilder& b, ValueId x, int64_t axis) {
  Attributes attrs;
  attrs.set("axis", axis);
  attrs.set("keepdims", int64_t(1));
  ValueId arg = b.add1("ArgMax", {x}, std::move(attrs));
  int64_t n = b.shape(x)[size_t(axis)];
  Shape iota_shape(b.rank(x), 1);
  iota_shape[size_t(axis)] = n;
  Tensor iota(DType::Int64, iota_shape);
  for (int64_t i = 0; i < n; ++i) iota.set_f64(i, double(i));
  return b.cast(b.binary("Equal", arg, b.constant(std::move(iota))), b.dtype(x));
}

enum class SoftmaxKind { Softmax, LogSoftmax, Hardmax };

// "_legacy_2d" (opset < 13) normalizes over all of dims[axis:] at once: the
// input is viewed as 2-D [prod(dims[:axis]), prod(dims[axis:])].
std::vector<ValueId> softmax_rule(const Node& node, FissionBuilder& b, SoftmaxKind kind) {
  ValueId x = node.inputs[0];
  const Shape shape = b.shape(x);
  bool legacy = node.attrs.get_int("_legacy_2d", 0) != 0;
  int64_t axis = positive_axis(node.attrs.get_int("axis", legacy ? 1 : -1), shape.size());
  // Hardmax's ArgMax is exact in any dtype; the others run in compute_dtype.
  ValueId view = kind == SoftmaxKind::Hardmax ? x : b.cast(x, compute_dtype(b.dtype(x)));
  if (legacy && axis + 1 != int64_t(shape.size())) {
    view = b.reshape(x, {product(shape, 0, size_t(axis)), product(shape, size_t(axis), shape.size())});
    axis = 1;
  }
  ValueId y = kind == SoftmaxKind::Hardmax ? hardmax_along(b, view, axis)
                                            : softmax_along(b, view, axis, kind == SoftmaxKind::LogSoftmax);
  return {b.cast(b.reshape(y, shape), b.dtype(x))};
}

// ---------------------------------------------------------------------------
// LayerNormalization: Y, and optionally Mean and InvStdDev in stash_type.

std::vector<ValueId> layer_norm_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  DType dtype = b.dtype(x);
  size_t rank = b.rank(x);
  int64_t axis = positive_axis(node.attrs.get_int("axis", -1), rank);
  DType stash = DType::Float32;
  ORCHID_CHECK(dtype_from_onnx(int(node.attrs.get_int("stash_type", 1)), &stash)) << "checked by inference";
  // Computing in the wider of X's dtype and stash_type keeps the statistics
  // at least as precise as the outputs that expose them.
  DType work = compute_dtype(dtype_size(stash) > dtype_size(dtype) ? stash : dtype);
  ValueId xw = b.cast(x, work);
  Centred c = centre(b, xw, axis_range(axis, int64_t(rank)));
  ValueId inv = inv_std(b, c.variance, node.attrs.get_float("epsilon", 1e-5));
  ValueId y = b.binary("Mul", b.binary("Mul", c.deviation, inv), b.cast(node.inputs[1], work));
  if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) y = b.binary("Add", y, b.cast(node.inputs[2], work));
  std::vector<ValueId> out = {b.cast(y, dtype), kNoValue, kNoValue};
  if (node.outputs.size() > 1 && node.outputs[1] != kNoValue) out[1] = b.cast(c.mean, stash);
  if (node.outputs.size() > 2 && node.outputs[2] != kNoValue) out[2] = b.cast(inv, stash);
  return out;
}

// ---------------------------------------------------------------------------
// BatchNormalization (inference): y = x * scale' + shift' per channel, with
// scale' = gamma / sqrt(var + eps) and shift' = beta - mean * scale'. On
// constant parameters the builder folds scale' and shift' into constants.

std::vector<ValueId> batch_norm_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  size_t rank = b.rank(x);
  DType dtype = b.dtype(x);
  DType work = compute_dtype(dtype);
  auto param = [&](size_t i) { return b.cast(node.inputs[i], work); };
  ValueId inv = inv_std(b, param(4), node.attrs.get_float("epsilon", 1e-5));
  ValueId scale = b.binary("Mul", param(1), inv);
  ValueId shift = b.binary("Sub", param(2), b.binary("Mul", param(3), scale));
  ValueId y = b.binary("Mul", b.cast(x, work), channel_param(b, scale, rank, work));
  y = b.binary("Add", y, channel_param(b, shift, rank, work));
  return {b.cast(y, dtype)};
}

// ---------------------------------------------------------------------------
// InstanceNormalization and GroupNormalization

// (x - mean) * inv_std over `axes` of x (already in the working dtype).
ValueId standardize(FissionBuilder& b, ValueId x, const std::vector<int64_t>& axes, double epsilon) {
  Centred c = centre(b, x, axes);
  return b.binary("Mul", c.deviation, inv_std(b, c.variance, epsilon));
}

std::vector<ValueId> instance_norm_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  size_t rank = b.rank(x);
  DType dtype = b.dtype(x), work = compute_dtype(dtype);
  ValueId y = standardize(b, b.cast(x, work), axis_range(2, int64_t(rank)), node.attrs.get_float("epsilon", 1e-5));
  y = b.binary("Mul", y, channel_param(b, node.inputs[1], rank, work));
  y = b.binary("Add", y, channel_param(b, node.inputs[2], rank, work));
  return {b.cast(y, dtype)};
}

// Statistics over the view [N, G, C/G * S]; the affine is applied per group
// on that view ("_per_group_affine", opset < 21) or per channel on X's shape.
std::vector<ValueId> group_norm_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  const Shape shape = b.shape(x);
  DType dtype = b.dtype(x), work = compute_dtype(dtype);
  int64_t groups = node.attrs.require_int("num_groups");
  ValueId grouped = b.reshape(b.cast(x, work), {shape[0], groups, product(shape, 1, shape.size()) / groups});
  ValueId y = standardize(b, grouped, {2}, node.attrs.get_float("epsilon", 1e-5));
  if (node.attrs.get_int("_per_group_affine", 0) != 0) {
    y = b.binary("Mul", y, channel_param(b, node.inputs[1], 3, work));
    y = b.binary("Add", y, channel_param(b, node.inputs[2], 3, work));
    return {b.cast(b.reshape(y, shape), dtype)};
  }
  y = b.reshape(y, shape);
  y = b.binary("Mul", y, channel_param(b, node.inputs[1], shape.size(), work));
  y = b.binary("Add", y, channel_param(b, node.inputs[2], shape.size(), work));
  return {b.cast(y, dtype)};
}

// ---------------------------------------------------------------------------
// LpNormalization, LRN, MeanVarianceNormalization

// y = x / ||x||_p along axis; a zero norm divides by 1 instead (its row is all
// zeros, so y = 0 as in the reference) rather than producing 0/0.
std::vector<ValueId> lp_norm_rule(const Node& node, FissionBuilder& b) {
  ValueId x = b.cast(node.inputs[0], compute_dtype(b.dtype(node.inputs[0])));
  int64_t axis = positive_axis(node.attrs.get_int("axis", -1), b.rank(x));
  ValueId norm;
  if (node.attrs.get_int("p", 2) == 1) {
    norm = b.reduce("ReduceSum", b.unary("Abs", x), {axis}, true);
  } else {
    norm = b.unary("Sqrt", b.reduce("ReduceSum", b.binary("Mul", x, x), {axis}, true));
  }
  ValueId zero = b.binary("Equal", norm, b.scalar(0, b.dtype(x)));
  ValueId safe = b.add1("Where", {zero, b.scalar(1, b.dtype(x)), norm});
  return {b.cast(b.binary("Div", x, safe), b.dtype(node.inputs[0]))};
}

// The channel-window sum of squares is one Conv of x^2, viewed as
// [N, 1, C, S], with a ones kernel [1, 1, size, 1] and zero padding
// (floor((size-1)/2) before, the rest after): exact, and a single node where a
// Pad plus `size` Slices would widen the graph.
std::vector<ValueId> lrn_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  const Shape shape = b.shape(x);
  DType dtype = b.dtype(x), work = compute_dtype(dtype);
  int64_t size = node.attrs.require_int("size");
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  ValueId xw = b.cast(x, work);
  ValueId squares = b.reshape(b.binary("Mul", xw, xw), {shape[0], 1, shape[1], product(shape, 2, shape.size())});
  Tensor ones(work, {1, 1, size, 1});
  for (int64_t i = 0; i < size; ++i) ones.set_f64(i, 1.0);
  Attributes conv;
  conv.set("kernel_shape", std::vector<int64_t>{size, 1});
  conv.set("pads", std::vector<int64_t>{before, 0, after, 0});
  ValueId sum = b.reshape(b.add1("Conv", {squares, b.constant(std::move(ones))}, std::move(conv)), shape);
  double alpha = node.attrs.get_float("alpha", 1e-4), beta = node.attrs.get_float("beta", 0.75);
  ValueId base = b.binary("Add", b.binary("Mul", sum, b.scalar(alpha / double(size), work)),
                          b.scalar(node.attrs.get_float("bias", 1.0), work));
  ValueId y = b.binary("Div", xw, b.binary("Pow", base, b.scalar(beta, work)));
  return {b.cast(y, dtype)};
}

// y = (x - mean) / (sqrt(variance) + 1e-9), as in the ONNX function body.
std::vector<ValueId> mvn_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  size_t rank = b.rank(x);
  DType dtype = b.dtype(x), work = compute_dtype(dtype);
  std::vector<int64_t> axes;
  for (int64_t a : node.attrs.get_ints("axes", {0, 2, 3})) axes.push_back(positive_axis(a, rank));
  std::sort(axes.begin(), axes.end());
  Centred c = centre(b, b.cast(x, work), axes);
  ValueId denominator = b.binary("Add", b.unary("Sqrt", c.variance), b.scalar(1e-9, work));
  return {b.cast(b.binary("Div", c.deviation, denominator), dtype)};
}

}  // namespace

void add_normalization_rules(FissionRuleTable& table) {
  table.add("Softmax", [](const Node& n, FissionBuilder& b) { return softmax_rule(n, b, SoftmaxKind::Softmax); });
  table.add("LogSoftmax",
            [](const Node& n, FissionBuilder& b) { return softmax_rule(n, b, SoftmaxKind::LogSoftmax); });
  table.add("Hardmax", [](const Node& n, FissionBuilder& b) { return softmax_rule(n, b, SoftmaxKind::Hardmax); });
  table.add("LayerNormalization", layer_norm_rule);
  table.add("BatchNormalization", batch_norm_rule);
  table.add("InstanceNormalization", instance_norm_rule);
  table.add("GroupNormalization", group_norm_rule);
  table.add("LpNormalization", lp_norm_rule);
  table.add("LRN", lrn_rule);
  table.add("MeanVarianceNormalization", mvn_rule);
}

}  // namespace orchid::fission
