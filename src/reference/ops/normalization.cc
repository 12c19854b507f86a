// Normalizations: Softmax, LogSoftmax, Hardmax, LayerNormalization,
// BatchNormalization (inference), InstanceNormalization, GroupNormalization,
// LpNormalization, LRN, MeanVarianceNormalization.
//
// All take float tensors and compute in double; statistics are computed once
// per group (two passes: mean, then the centred variance) and each element is
// then normalized in O(1), so every operator is O(numel) (LRN O(numel * size)).
//
// Attributes the importer adds for older opsets (same inputs, other meaning):
//  - Softmax/LogSoftmax/Hardmax "_legacy_2d" = 1 (opset < 13): the input is
//    coerced to 2-D [prod(dims[:axis]), prod(dims[axis:])] and normalized over
//    the second dimension, i.e. over all of dims[axis:] at once; the default
//    axis is then 1 (the importer also sets it). Otherwise (opset >= 13) the
//    normalization runs along the single `axis`, default -1.
//  - GroupNormalization "_per_group_affine" = 1 (opset 18..20): scale and bias
//    have shape [num_groups], one value per group. Otherwise (opset >= 21)
//    they have shape [C], one value per channel.
#include <algorithm>
#include <cmath>

#include "reference/ops/ops.h"
#include "reference/ops/op_utils.h"
#include "reference/ops/reduce_utils.h"
#include "support/error.h"

namespace orchid::reference {

namespace {

// A float tensor's elements as doubles (parameters: scale, bias, means, ...).
std::vector<double> f64_values(const Tensor& t) { return t.to_f64_vector(); }

// Writes doubles into a float tensor of the same size.
Tensor float_tensor(const TensorType& type, const std::vector<double>& values) {
  Tensor out(type);
  visit_dtype(type.dtype, [&]<typename T>() {
    if constexpr (kIsFloat<T>) {
      T* y = out.data<T>();
      for (size_t i = 0; i < values.size(); ++i) y[i] = from_f64<T>(values[i]);
    }
  });
  return out;
}

// Mean and (biased) variance of the elements at base + offsets[i].
struct Moments {
  double mean = 0;
  double variance = 0;
};

Moments moments(const std::vector<double>& x, int64_t base, const std::vector<int64_t>& offsets) {
  Moments m;
  double n = double(offsets.size());
  for (int64_t off : offsets) m.mean += x[size_t(base + off)];
  m.mean /= n;
  for (int64_t off : offsets) {
    double d = x[size_t(base + off)] - m.mean;
    m.variance += d * d;
  }
  m.variance /= n;
  return m;
}

// Moments of a contiguous block [begin, begin + count).
Moments block_moments(const std::vector<double>& x, int64_t begin, int64_t count) {
  Moments m;
  for (int64_t i = 0; i < count; ++i) m.mean += x[size_t(begin + i)];
  m.mean /= double(count);
  for (int64_t i = 0; i < count; ++i) {
    double d = x[size_t(begin + i)] - m.mean;
    m.variance += d * d;
  }
  m.variance /= double(count);
  return m;
}

// A per-channel (or per-group) parameter input with `count` values, which
// inference has checked.
std::vector<double> channel_param(const EvalContext& ctx, size_t index, int64_t count) {
  const Tensor& t = ctx.input(index);
  ORCHID_CHECK(t.numel() == count) << "parameter size checked by inference";
  return f64_values(t);
}

void check_param(const InferContext& ctx, size_t index, const char* name, int64_t count, const char* what) {
  const TensorType& t = ctx.input(index);
  require_float_input(t, index, name);
  if (t.numel() != count || t.rank() != 1) {
    ORCHID_FAIL() << "expected input " << index << " (" << name << ") of shape [" << count << "] (" << what
                  << "), got " << t.to_string();
  }
}

// The input viewed as [N, C, S] (S = product of the spatial dimensions).
struct NcsView {
  int64_t n = 0, c = 0, s = 1;
};

NcsView ncs_view(const Shape& shape) {
  NcsView v;
  v.n = shape[0];
  v.c = shape[1];
  for (size_t d = 2; d < shape.size(); ++d) v.s *= shape[d];
  return v;
}

void require_rank_at_least(const TensorType& x, size_t rank, const char* layout) {
  if (x.rank() < rank) ORCHID_FAIL() << "expected input 0 (X) of layout " << layout << ", got " << x.to_string();
}

// ---------------------------------------------------------------------------
// Softmax, LogSoftmax, Hardmax

enum class SoftmaxKind { Softmax, LogSoftmax, Hardmax };

std::vector<bool> softmax_mask(const Attributes& attrs, size_t rank) {
  bool legacy = attrs.get_int("_legacy_2d", 0) != 0;
  size_t axis = size_t(normalize_axis(attrs.get_int("axis", legacy ? 1 : -1), int64_t(rank)));
  return axis_range_mask(rank, axis, legacy ? rank : axis + 1);
}

std::vector<TensorType> infer_softmax(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  require_float_input(x, 0, "input");
  if (x.rank() == 0) ORCHID_FAIL() << "expected an input of rank >= 1, got a scalar";
  softmax_mask(ctx.attrs(), x.rank());
  return one(x.dtype, x.shape);
}

std::vector<Tensor> eval_softmax(const EvalContext& ctx, SoftmaxKind kind) {
  const Tensor& input = ctx.input(0);
  std::vector<double> x = f64_values(input);
  ReduceIndex index = make_reduce_index(input.shape(), softmax_mask(ctx.attrs(), input.rank()));
  std::vector<double> y(x.size(), 0.0);
  std::vector<double> shifted(index.inner.size());
  for (int64_t base : index.outer) {
    if (kind == SoftmaxKind::Hardmax) {
      size_t best = 0;
      for (size_t r = 1; r < index.inner.size(); ++r) {
        if (arg_better(x[size_t(base + index.inner[r])], x[size_t(base + index.inner[best])], true, false)) best = r;
      }
      if (!index.inner.empty()) y[size_t(base + index.inner[best])] = 1.0;
      continue;
    }
    // Subtract the maximum so exp cannot overflow.
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t off : index.inner) max = std::max(max, x[size_t(base + off)]);
    double sum = 0;
    for (size_t r = 0; r < index.inner.size(); ++r) {
      shifted[r] = x[size_t(base + index.inner[r])] - max;
      sum += std::exp(shifted[r]);
    }
    double log_sum = std::log(sum);
    for (size_t r = 0; r < index.inner.size(); ++r) {
      y[size_t(base + index.inner[r])] =
          kind == SoftmaxKind::Softmax ? std::exp(shifted[r]) / sum : shifted[r] - log_sum;
    }
  }
  return {float_tensor(ctx.output_types[0], y)};
}

// ---------------------------------------------------------------------------
// LayerNormalization: X, Scale, B (optional); axis (-1), epsilon (1e-5),
// stash_type (1 = float32: the dtype of the Mean and InvStdDev outputs; the
// computation itself is always in double). Normalizes over dims[axis:];
// Scale and B broadcast (numpy, unidirectionally) to dims[axis:]. Outputs Y,
// Mean and InvStdDev, the latter two of shape dims[:axis] + [1] * (rank - axis).

std::vector<TensorType> infer_layer_norm(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  require_float_input(x, 0, "X");
  if (x.rank() == 0) ORCHID_FAIL() << "expected an input of rank >= 1, got a scalar";
  size_t axis = size_t(normalize_axis(ctx.attrs().get_int("axis", -1), int64_t(x.rank())));
  Shape normalized(x.shape.begin() + int64_t(axis), x.shape.end());
  for (size_t i : {size_t(1), size_t(2)}) {
    if (!ctx.has_input(i)) continue;
    const TensorType& p = ctx.input(i);
    const char* name = i == 1 ? "Scale" : "B";
    require_float_input(p, i, name);
    if (p.rank() > normalized.size() || broadcast_shapes(p.shape, normalized) != normalized) {
      ORCHID_FAIL() << "input " << i << " (" << name << ") " << p.to_string()
                    << " does not broadcast to the normalized shape " << shape_to_string(normalized);
    }
  }
  int64_t stash = ctx.attrs().get_int("stash_type", 1);
  DType stash_dtype;
  if (!dtype_from_onnx(int(stash), &stash_dtype) || !is_float(stash_dtype)) {
    ORCHID_FAIL() << "stash_type " << stash << " is not a float type";
  }
  Shape stat_shape = x.shape;
  for (size_t d = axis; d < stat_shape.size(); ++d) stat_shape[d] = 1;
  return {TensorType{x.dtype, x.shape}, TensorType{stash_dtype, stat_shape}, TensorType{stash_dtype, stat_shape}};
}

// A parameter broadcast to `shape`, as doubles in row-major order.
std::vector<double> broadcast_param(const Tensor& t, const Shape& shape) {
  BroadcastIndexer indexer(t.shape(), shape);
  std::vector<double> out(size_t(shape_numel(shape)));
  for (size_t i = 0; i < out.size(); ++i) out[i] = t.at_f64(indexer(int64_t(i)));
  return out;
}

std::vector<Tensor> eval_layer_norm(const EvalContext& ctx) {
  const Tensor& input = ctx.input(0);
  size_t axis = size_t(normalize_axis(ctx.attrs().get_int("axis", -1), int64_t(input.rank())));
  double epsilon = ctx.attrs().get_float("epsilon", 1e-5);
  Shape normalized(input.shape().begin() + int64_t(axis), input.shape().end());
  int64_t group = shape_numel(normalized);
  std::vector<double> scale = broadcast_param(ctx.input(1), normalized);
  std::vector<double> bias = ctx.has_input(2) ? broadcast_param(ctx.input(2), normalized)
                                              : std::vector<double>(size_t(group), 0.0);
  std::vector<double> x = f64_values(input);
  int64_t groups = shape_numel(ctx.output_types[1].shape);
  std::vector<double> y(x.size()), means(static_cast<size_t>(groups)), inv_stds(static_cast<size_t>(groups));
  for (int64_t g = 0; g < groups; ++g) {
    Moments m = block_moments(x, g * group, group);
    double inv_std = 1.0 / std::sqrt(m.variance + epsilon);
    means[size_t(g)] = m.mean;
    inv_stds[size_t(g)] = inv_std;
    for (int64_t i = 0; i < group; ++i) {
      size_t at = size_t(g * group + i);
      y[at] = (x[at] - m.mean) * inv_std * scale[size_t(i)] + bias[size_t(i)];
    }
  }
  return {float_tensor(ctx.output_types[0], y), float_tensor(ctx.output_types[1], means),
          float_tensor(ctx.output_types[2], inv_stds)};
}

// ---------------------------------------------------------------------------
// BatchNormalization, inference mode: X [N, C, ...], scale, B, input_mean,
// input_var (each [C]); epsilon (1e-5); momentum is unused in inference.
// Y = (X - mean) / sqrt(var + epsilon) * scale + B per channel.

std::vector<TensorType> infer_batch_norm(const InferContext& ctx) {
  if (ctx.attrs().get_int("training_mode", 0) != 0) ORCHID_FAIL() << "training mode is not supported";
  if (ctx.attrs().get_int("spatial", 1) == 0) ORCHID_FAIL() << "spatial = 0 (per-activation statistics) is not supported";
  const TensorType& x = ctx.input(0);
  require_float_input(x, 0, "X");
  require_rank_at_least(x, 2, "[N, C, ...]");
  const char* names[] = {"", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i <= 4; ++i) check_param(ctx, i, names[i], x.shape[1], "one value per channel");
  return one(x.dtype, x.shape);
}

std::vector<Tensor> eval_batch_norm(const EvalContext& ctx) {
  const Tensor& input = ctx.input(0);
  NcsView v = ncs_view(input.shape());
  double epsilon = ctx.attrs().get_float("epsilon", 1e-5);
  std::vector<double> scale = channel_param(ctx, 1, v.c), bias = channel_param(ctx, 2, v.c);
  std::vector<double> mean = channel_param(ctx, 3, v.c), var = channel_param(ctx, 4, v.c);
  std::vector<double> x = f64_values(input);
  std::vector<double> y(x.size());
  for (int64_t c = 0; c < v.c; ++c) {
    double inv_std = 1.0 / std::sqrt(var[size_t(c)] + epsilon);
    for (int64_t n = 0; n < v.n; ++n) {
      int64_t begin = (n * v.c + c) * v.s;
      for (int64_t i = begin; i < begin + v.s; ++i) {
        y[size_t(i)] = (x[size_t(i)] - mean[size_t(c)]) * inv_std * scale[size_t(c)] + bias[size_t(c)];
      }
    }
  }
  return {float_tensor(ctx.output_types[0], y)};
}

// ---------------------------------------------------------------------------
// InstanceNormalization: X [N, C, ...], scale [C], B [C]; epsilon (1e-5).
// Statistics per (n, c) over the spatial dimensions.

std::vector<TensorType> infer_instance_norm(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  require_float_input(x, 0, "input");
  require_rank_at_least(x, 2, "[N, C, ...]");
  check_param(ctx, 1, "scale", x.shape[1], "one value per channel");
  check_param(ctx, 2, "B", x.shape[1], "one value per channel");
  return one(x.dtype, x.shape);
}

std::vector<Tensor> eval_instance_norm(const EvalContext& ctx) {
  const Tensor& input = ctx.input(0);
  NcsView v = ncs_view(input.shape());
  double epsilon = ctx.attrs().get_float("epsilon", 1e-5);
  std::vector<double> scale = channel_param(ctx, 1, v.c), bias = channel_param(ctx, 2, v.c);
  std::vector<double> x = f64_values(input);
  std::vector<double> y(x.size());
  for (int64_t nc = 0; nc < v.n * v.c; ++nc) {
    int64_t c = nc % v.c;
    Moments m = block_moments(x, nc * v.s, v.s);
    double inv_std = 1.0 / std::sqrt(m.variance + epsilon);
    for (int64_t i = nc * v.s; i < (nc + 1) * v.s; ++i) {
      y[size_t(i)] = (x[size_t(i)] - m.mean) * inv_std * scale[size_t(c)] + bias[size_t(c)];
    }
  }
  return {float_tensor(ctx.output_types[0], y)};
}

// ---------------------------------------------------------------------------
// GroupNormalization: X [N, C, ...], scale, bias; num_groups (required),
// epsilon (1e-5), stash_type (ignored: always double). Statistics per
// (n, group of C / num_groups consecutive channels). Scale/bias per channel
// ([C], opset 21) or per group ([num_groups], "_per_group_affine" = 1).

std::vector<TensorType> infer_group_norm(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  require_float_input(x, 0, "X");
  require_rank_at_least(x, 2, "[N, C, ...]");
  int64_t groups = ctx.attrs().require_int("num_groups");
  if (groups <= 0 || x.shape[1] % groups != 0) {
    ORCHID_FAIL() << "num_groups = " << groups << " must be positive and divide the " << x.shape[1] << " channels";
  }
  bool per_group = ctx.attrs().get_int("_per_group_affine", 0) != 0;
  int64_t count = per_group ? groups : x.shape[1];
  const char* what = per_group ? "one value per group, opset < 21" : "one value per channel, opset >= 21";
  check_param(ctx, 1, "scale", count, what);
  check_param(ctx, 2, "bias", count, what);
  return one(x.dtype, x.shape);
}

std::vector<Tensor> eval_group_norm(const EvalContext& ctx) {
  const Tensor& input = ctx.input(0);
  NcsView v = ncs_view(input.shape());
  int64_t groups = ctx.attrs().require_int("num_groups");
  bool per_group = ctx.attrs().get_int("_per_group_affine", 0) != 0;
  double epsilon = ctx.attrs().get_float("epsilon", 1e-5);
  int64_t count = per_group ? groups : v.c;
  std::vector<double> scale = channel_param(ctx, 1, count), bias = channel_param(ctx, 2, count);
  std::vector<double> x = f64_values(input);
  std::vector<double> y(x.size());
  int64_t channels_per_group = v.c / groups;
  int64_t block = channels_per_group * v.s;  // a group's elements are contiguous
  for (int64_t ng = 0; ng < v.n * groups; ++ng) {
    int64_t g = ng % groups;
    Moments m = block_moments(x, ng * block, block);
    double inv_std = 1.0 / std::sqrt(m.variance + epsilon);
    for (int64_t i = 0; i < block; ++i) {
      size_t p = size_t(per_group ? g : g * channels_per_group + i / v.s);
      size_t at = size_t(ng * block + i);
      y[at] = (x[at] - m.mean) * inv_std * scale[p] + bias[p];
    }
  }
  return {float_tensor(ctx.output_types[0], y)};
}

// ---------------------------------------------------------------------------
// LpNormalization: axis (-1), p (2; 1 or 2). y = x / ||x||_p along axis; a
// zero norm gives 0 (like onnxruntime) rather than 0/0.

std::vector<TensorType> infer_lp_norm(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  require_float_input(x, 0, "input");
  if (x.rank() == 0) ORCHID_FAIL() << "expected an input of rank >= 1, got a scalar";
  normalize_axis(ctx.attrs().get_int("axis", -1), int64_t(x.rank()));
  int64_t p = ctx.attrs().get_int("p", 2);
  if (p != 1 && p != 2) ORCHID_FAIL() << "p = " << p << " is not supported (only 1 and 2)";
  return one(x.dtype, x.shape);
}

std::vector<Tensor> eval_lp_norm(const EvalContext& ctx) {
  const Tensor& input = ctx.input(0);
  size_t axis = size_t(normalize_axis(ctx.attrs().get_int("axis", -1), int64_t(input.rank())));
  bool l1 = ctx.attrs().get_int("p", 2) == 1;
  ReduceIndex index = make_reduce_index(input.shape(), axis_range_mask(input.rank(), axis, axis + 1));
  std::vector<double> x = f64_values(input);
  std::vector<double> y(x.size(), 0.0);
  for (int64_t base : index.outer) {
    double norm = 0;
    for (int64_t off : index.inner) {
      double v = x[size_t(base + off)];
      norm += l1 ? std::fabs(v) : v * v;
    }
    if (!l1) norm = std::sqrt(norm);
    if (norm == 0) continue;
    for (int64_t off : index.inner) y[size_t(base + off)] = x[size_t(base + off)] / norm;
  }
  return {float_tensor(ctx.output_types[0], y)};
}

// ---------------------------------------------------------------------------
// LRN: X [N, C, ...]; alpha (1e-4), beta (0.75), bias (1.0), size (required).
// y = x / (bias + alpha / size * sum of x^2 over channels
//          [c - floor((size-1)/2), c + ceil((size-1)/2)]) ^ beta.

std::vector<TensorType> infer_lrn(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  require_float_input(x, 0, "X");
  require_rank_at_least(x, 2, "[N, C, ...]");
  int64_t size = ctx.attrs().require_int("size");
  if (size <= 0) ORCHID_FAIL() << "size = " << size << " must be positive";
  return one(x.dtype, x.shape);
}

std::vector<Tensor> eval_lrn(const EvalContext& ctx) {
  const Tensor& input = ctx.input(0);
  NcsView v = ncs_view(input.shape());
  double alpha = ctx.attrs().get_float("alpha", 1e-4);
  double beta = ctx.attrs().get_float("beta", 0.75);
  double bias = ctx.attrs().get_float("bias", 1.0);
  int64_t size = ctx.attrs().require_int("size");
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  std::vector<double> x = f64_values(input);
  std::vector<double> y(x.size());
  for (int64_t n = 0; n < v.n; ++n) {
    for (int64_t c = 0; c < v.c; ++c) {
      int64_t lo = std::max<int64_t>(0, c - before), hi = std::min(v.c - 1, c + after);
      for (int64_t s = 0; s < v.s; ++s) {
        double square_sum = 0;
        for (int64_t k = lo; k <= hi; ++k) {
          double xv = x[size_t((n * v.c + k) * v.s + s)];
          square_sum += xv * xv;
        }
        size_t at = size_t((n * v.c + c) * v.s + s);
        y[at] = x[at] / std::pow(bias + alpha / double(size) * square_sum, beta);
      }
    }
  }
  return {float_tensor(ctx.output_types[0], y)};
}

// ---------------------------------------------------------------------------
// MeanVarianceNormalization: axes (default [0, 2, 3]).
// y = (x - mean) / (sqrt(variance) + 1e-9), as in the ONNX function body.

std::vector<bool> mvn_mask(const Attributes& attrs, size_t rank) {
  std::vector<bool> mask(rank, false);
  for (int64_t axis : normalize_axes(attrs.get_ints("axes", {0, 2, 3}), int64_t(rank))) mask[size_t(axis)] = true;
  return mask;
}

std::vector<TensorType> infer_mvn(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  require_float_input(x, 0, "X");
  mvn_mask(ctx.attrs(), x.rank());
  return one(x.dtype, x.shape);
}

std::vector<Tensor> eval_mvn(const EvalContext& ctx) {
  const Tensor& input = ctx.input(0);
  ReduceIndex index = make_reduce_index(input.shape(), mvn_mask(ctx.attrs(), input.rank()));
  std::vector<double> x = f64_values(input);
  std::vector<double> y(x.size());
  for (int64_t base : index.outer) {
    Moments m = moments(x, base, index.inner);
    double denominator = std::sqrt(m.variance) + 1e-9;
    for (int64_t off : index.inner) y[size_t(base + off)] = (x[size_t(base + off)] - m.mean) / denominator;
  }
  return {float_tensor(ctx.output_types[0], y)};
}

}  // namespace

void register_normalization_ops(OpRegistry& registry) {
  registry.add(OpSchema{"Softmax", "", infer_softmax,
                        [](const EvalContext& ctx) { return eval_softmax(ctx, SoftmaxKind::Softmax); }, 1, 1});
  registry.add(OpSchema{"LogSoftmax", "", infer_softmax,
                        [](const EvalContext& ctx) { return eval_softmax(ctx, SoftmaxKind::LogSoftmax); }, 1, 1});
  registry.add(OpSchema{"Hardmax", "", infer_softmax,
                        [](const EvalContext& ctx) { return eval_softmax(ctx, SoftmaxKind::Hardmax); }, 1, 1});
  registry.add(OpSchema{"LayerNormalization", "", infer_layer_norm, eval_layer_norm, 2, 3});
  registry.add(OpSchema{"BatchNormalization", "", infer_batch_norm, eval_batch_norm, 5, 5});
  registry.add(OpSchema{"InstanceNormalization", "", infer_instance_norm, eval_instance_norm, 3, 3});
  registry.add(OpSchema{"GroupNormalization", "", infer_group_norm, eval_group_norm, 3, 3});
  registry.add(OpSchema{"LpNormalization", "", infer_lp_norm, eval_lp_norm, 1, 1});
  registry.add(OpSchema{"LRN", "", infer_lrn, eval_lrn, 1, 1});
  registry.add(OpSchema{"MeanVarianceNormalization", "", infer_mvn, eval_mvn, 1, 1});
}

}  // namespace orchid::reference
