// Reference implementations of the pooling operators: MaxPool (with its
// optional Indices output), AveragePool, LpPool, their Global variants,
// MaxRoiPool and MaxUnpool. Values are computed in double (exact for every
// input type they accept). The window geometry (pads, auto_pad, ceil_mode,
// dilations) is shared with Conv in conv_utils.h.
#include <cmath>
#include <limits>
#include <variant>

#include "reference/ops/conv_utils.h"
#include "reference/ops/op_utils.h"
#include "reference/ops/ops.h"
#include "support/error.h"

namespace orchid::reference {
namespace {

constexpr std::initializer_list<DType> kMaxPoolTypes = {DType::Float32, DType::Float64, DType::Float16,
                                                        DType::BFloat16, DType::Int8,   DType::UInt8};

void check_pool_input(const TensorType& x, std::initializer_list<DType> allowed) {
  check_dtype(x.dtype, allowed, 0, "X");
  if (x.rank() < 3) {
    ORCHID_FAIL() << "expected X of rank >= 3 (N x C x D1 x ...), got shape " << shape_to_string(x.shape);
  }
}

struct PoolSetup {
  Window3 window;
  int64_t planes = 0;  // N * C
  Shape out;
};

PoolSetup pool_setup(const Attributes& attrs, const Shape& x) {
  Shape kernel = attrs.require_ints("kernel_shape");
  bool ceil_mode = attrs.get_int("ceil_mode", 0) != 0;
  WindowGeometry g = window_geometry(attrs, Shape(x.begin() + 2, x.end()), kernel, ceil_mode);
  PoolSetup s;
  s.window = to_window3(g);
  s.planes = x[0] * x[1];
  s.out = {x[0], x[1]};
  s.out.insert(s.out.end(), g.out.begin(), g.out.end());
  return s;
}

// For every output position of every plane, calls
// f(plane_input, out_flat_index, taps) where taps are the ranges of kernel
// taps per (3-D) dimension that fall inside the unpadded input, and
// f reads input element (id, ih, iw) = pos * s - p + tap * d.
struct Taps {
  std::pair<int64_t, int64_t> k[3];
  int64_t start[3];  // input position of tap 0: pos * s - p
};

template <typename F>
void for_each_window(const PoolSetup& setup, F&& f) {
  const Window3& g = setup.window;
  int64_t out_flat = 0;
  for (int64_t plane = 0; plane < setup.planes; ++plane) {
    int64_t pos[3];
    for (pos[0] = 0; pos[0] < g.out[0]; ++pos[0]) {
      for (pos[1] = 0; pos[1] < g.out[1]; ++pos[1]) {
        for (pos[2] = 0; pos[2] < g.out[2]; ++pos[2]) {
          Taps taps;
          for (int j = 0; j < 3; ++j) {
            taps.start[j] = pos[j] * g.s[j] - g.p[j];
            taps.k[j] = valid_range(g.k[j], g.in[j], g.d[j], taps.start[j]);
          }
          f(plane, pos, taps, out_flat++);
        }
      }
    }
  }
}

// Calls visit(spatial_flat_index, id, ih, iw) for every tap inside the input.
template <typename V>
void for_each_tap(const Window3& g, const Taps& t, V&& visit) {
  for (int64_t kd = t.k[0].first; kd < t.k[0].second; ++kd) {
    int64_t id = t.start[0] + kd * g.d[0];
    for (int64_t kh = t.k[1].first; kh < t.k[1].second; ++kh) {
      int64_t ih = t.start[1] + kh * g.d[1];
      for (int64_t kw = t.k[2].first; kw < t.k[2].second; ++kw) {
        int64_t iw = t.start[2] + kw * g.d[2];
        visit((id * g.in[1] + ih) * g.in[2] + iw, id, ih, iw);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// MaxPool, AveragePool, LpPool
// ---------------------------------------------------------------------------

std::vector<TensorType> infer_max_pool(const InferContext& ctx) {
  check_pool_input(ctx.input(0), kMaxPoolTypes);
  if (ctx.attrs().get_int("storage_order", 0) > 1) ORCHID_FAIL() << "attribute storage_order must be 0 or 1";
  PoolSetup s = pool_setup(ctx.attrs(), ctx.input(0).shape);
  return {TensorType{ctx.input(0).dtype, s.out}, TensorType{DType::Int64, s.out}};
}

// Padding never wins (it is -infinity); ties keep the first tap. Indices
// flatten (N, C, spatial...) of the input, the spatial part row-major, or
// column-major for storage_order = 1.
std::vector<Tensor> eval_max_pool(const EvalContext& ctx) {
  const Tensor& xt = ctx.input(0);
  PoolSetup s = pool_setup(ctx.attrs(), xt.shape());
  bool column_major = ctx.attrs().get_int("storage_order", 0) == 1;
  std::vector<double> x = to_acc<double>(xt);
  std::vector<double> y(size_t(shape_numel(s.out)));
  Tensor indices(DType::Int64, s.out);
  int64_t* index_data = indices.data<int64_t>();
  const Window3& g = s.window;
  const int64_t isz = g.in_size();
  for_each_window(s, [&](int64_t plane, const int64_t*, const Taps& taps, int64_t o) {
    const double* xp = x.data() + plane * isz;
    double best = -std::numeric_limits<double>::infinity();
    int64_t best_index = -1;
    for_each_tap(g, taps, [&](int64_t flat, int64_t id, int64_t ih, int64_t iw) {
      if (best_index < 0 || xp[flat] > best) {
        best = xp[flat];
        best_index = column_major ? id + g.in[0] * (ih + g.in[1] * iw) : flat;
      }
    });
    y[size_t(o)] = best;
    index_data[o] = best_index < 0 ? -1 : plane * isz + best_index;
  });
  return {from_acc(y, ctx.output_types[0]), indices};
}

std::vector<TensorType> infer_float_pool(const InferContext& ctx) {
  check_pool_input(ctx.input(0), kFloatTypes);
  return one(ctx.input(0).dtype, pool_setup(ctx.attrs(), ctx.input(0).shape).out);
}

// The number of taps of a window inside [-pad_begin, in + pad_end), i.e.
// counting the explicit or automatic padding but not the extension by
// ceil_mode.
int64_t taps_with_padding(const Window3& g, const int64_t* pos) {
  int64_t count = 1;
  for (int j = 0; j < 3; ++j) {
    auto [first, second] = valid_range(g.k[j], g.in[j] + g.p[j] + g.p_end[j], g.d[j], pos[j] * g.s[j]);
    count *= second - first;
  }
  return count;
}

// AveragePool divides by the taps inside the input, or with
// count_include_pad = 1 by the taps inside the padded input.
std::vector<Tensor> eval_average_pool(const EvalContext& ctx) {
  PoolSetup s = pool_setup(ctx.attrs(), ctx.input(0).shape());
  bool include_pad = ctx.attrs().get_int("count_include_pad", 0) != 0;
  std::vector<double> x = to_acc<double>(ctx.input(0));
  std::vector<double> y(size_t(shape_numel(s.out)));
  const Window3& g = s.window;
  for_each_window(s, [&](int64_t plane, const int64_t* pos, const Taps& taps, int64_t o) {
    const double* xp = x.data() + plane * g.in_size();
    double sum = 0;
    int64_t count = 0;
    for_each_tap(g, taps, [&](int64_t flat, int64_t, int64_t, int64_t) {
      sum += xp[flat];
      ++count;
    });
    if (include_pad) count = taps_with_padding(g, pos);
    y[size_t(o)] = count > 0 ? sum / double(count) : 0.0;
  });
  return {from_acc(y, ctx.output_types[0])};
}

// LpPool: (sum over the window of |x|^p)^(1/p); padding contributes zeros.
double lp_term(double v, int64_t p) { return p == 2 ? v * v : p == 1 ? std::abs(v) : std::pow(std::abs(v), double(p)); }
double lp_root(double sum, int64_t p) { return p == 2 ? std::sqrt(sum) : p == 1 ? sum : std::pow(sum, 1.0 / double(p)); }

// p is an int since opset 2; LpPool-1 / GlobalLpPool-1 had a float p, which
// is accepted when it is a whole number.
int64_t lp_order(const Attributes& attrs) {
  int64_t p = 2;
  auto it = attrs.all().find("p");
  if (it != attrs.all().end() && std::holds_alternative<double>(it->second)) {
    double fp = std::get<double>(it->second);
    if (fp != std::floor(fp)) ORCHID_FAIL() << "attribute p must be a whole number, got " << fp;
    p = int64_t(fp);
  } else {
    p = attrs.get_int("p", 2);
  }
  if (p < 1) ORCHID_FAIL() << "attribute p must be >= 1, got " << p;
  return p;
}

std::vector<Tensor> eval_lp_pool(const EvalContext& ctx) {
  PoolSetup s = pool_setup(ctx.attrs(), ctx.input(0).shape());
  int64_t p = lp_order(ctx.attrs());
  std::vector<double> x = to_acc<double>(ctx.input(0));
  std::vector<double> y(size_t(shape_numel(s.out)));
  const Window3& g = s.window;
  for_each_window(s, [&](int64_t plane, const int64_t*, const Taps& taps, int64_t o) {
    const double* xp = x.data() + plane * g.in_size();
    double sum = 0;
    for_each_tap(g, taps, [&](int64_t flat, int64_t, int64_t, int64_t) { sum += lp_term(xp[flat], p); });
    y[size_t(o)] = lp_root(sum, p);
  });
  return {from_acc(y, ctx.output_types[0])};
}

// ---------------------------------------------------------------------------
// GlobalAveragePool, GlobalMaxPool, GlobalLpPool: one window per (N, C) plane
// covering all spatial dimensions; the output keeps them with size 1.
// ---------------------------------------------------------------------------

Shape global_shape(const Shape& x) {
  Shape out = x;
  for (size_t i = 2; i < out.size(); ++i) out[i] = 1;
  return out;
}

std::vector<TensorType> infer_global_pool(const InferContext& ctx) {
  check_pool_input(ctx.input(0), kFloatTypes);
  return one(ctx.input(0).dtype, global_shape(ctx.input(0).shape));
}

enum class GlobalKind { Average, Max, Lp };

template <GlobalKind kKind>
std::vector<Tensor> eval_global_pool(const EvalContext& ctx) {
  const Tensor& xt = ctx.input(0);
  int64_t planes = xt.dim(0) * xt.dim(1);
  int64_t size = planes == 0 ? 0 : xt.numel() / planes;
  int64_t p = kKind == GlobalKind::Lp ? lp_order(ctx.attrs()) : 2;
  std::vector<double> x = to_acc<double>(xt);
  std::vector<double> y(static_cast<size_t>(planes));
  for (int64_t plane = 0; plane < planes; ++plane) {
    const double* xp = x.data() + plane * size;
    double acc = kKind == GlobalKind::Max ? -std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t i = 0; i < size; ++i) {
      if constexpr (kKind == GlobalKind::Max) {
        if (xp[i] > acc || i == 0) acc = xp[i];
      } else if constexpr (kKind == GlobalKind::Lp) {
        acc += lp_term(xp[i], p);
      } else {
        acc += xp[i];
      }
    }
    if constexpr (kKind == GlobalKind::Average) acc /= double(size);
    if constexpr (kKind == GlobalKind::Lp) acc = lp_root(acc, p);
    y[size_t(plane)] = acc;
  }
  return {from_acc(y, ctx.output_types[0])};
}

// ---------------------------------------------------------------------------
// MaxRoiPool (Caffe / ONNX Runtime semantics): rois [R, 5] = (batch index,
// x1, y1, x2, y2) in input coordinates times spatial_scale, rounded; each of
// the pooled_shape bins takes the max of its cells, 0 for an empty bin.
// ---------------------------------------------------------------------------

std::vector<TensorType> infer_max_roi_pool(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  check_dtype(x.dtype, kFloatTypes, 0, "X");
  if (x.rank() != 4) ORCHID_FAIL() << "expected X of rank 4, got shape " << shape_to_string(x.shape);
  const TensorType& rois = ctx.input(1);
  if (rois.dtype != x.dtype || rois.rank() != 2 || rois.shape[1] != 5) {
    ORCHID_FAIL() << "expected rois of shape [num_rois, 5] and dtype " << dtype_name(x.dtype) << ", got "
                  << rois.to_string();
  }
  Shape pooled = ctx.attrs().require_ints("pooled_shape");
  if (pooled.size() != 2 || pooled[0] < 1 || pooled[1] < 1) {
    ORCHID_FAIL() << "attribute pooled_shape must be two positive sizes, got " << shape_to_string(pooled);
  }
  return one(x.dtype, {rois.shape[0], x.shape[1], pooled[0], pooled[1]});
}

std::vector<Tensor> eval_max_roi_pool(const EvalContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const int64_t C = xt.dim(1), H = xt.dim(2), W = xt.dim(3);
  const Shape& out = ctx.output_types[0].shape;
  const int64_t PH = out[2], PW = out[3];
  double scale = ctx.attrs().get_float("spatial_scale", 1.0);
  std::vector<double> x = to_acc<double>(xt), rois = to_acc<double>(ctx.input(1));
  std::vector<double> y(size_t(shape_numel(out)));
  auto clamp = [](int64_t v, int64_t hi) { return std::min(std::max<int64_t>(v, 0), hi); };
  for (int64_t r = 0; r < out[0]; ++r) {
    const double* roi = rois.data() + r * 5;
    int64_t batch = int64_t(roi[0]);
    if (batch < 0 || batch >= xt.dim(0)) ORCHID_FAIL() << "roi " << r << " has batch index " << roi[0];
    int64_t x1 = int64_t(std::round(roi[1] * scale)), y1 = int64_t(std::round(roi[2] * scale));
    int64_t x2 = int64_t(std::round(roi[3] * scale)), y2 = int64_t(std::round(roi[4] * scale));
    double bin_h = double(std::max<int64_t>(y2 - y1 + 1, 1)) / double(PH);
    double bin_w = double(std::max<int64_t>(x2 - x1 + 1, 1)) / double(PW);
    for (int64_t c = 0; c < C; ++c) {
      const double* xp = x.data() + (batch * C + c) * H * W;
      for (int64_t ph = 0; ph < PH; ++ph) {
        int64_t h0 = clamp(int64_t(std::floor(double(ph) * bin_h)) + y1, H);
        int64_t h1 = clamp(int64_t(std::ceil(double(ph + 1) * bin_h)) + y1, H);
        for (int64_t pw = 0; pw < PW; ++pw) {
          int64_t w0 = clamp(int64_t(std::floor(double(pw) * bin_w)) + x1, W);
          int64_t w1 = clamp(int64_t(std::ceil(double(pw + 1) * bin_w)) + x1, W);
          double best = (h1 <= h0 || w1 <= w0) ? 0.0 : -std::numeric_limits<double>::infinity();
          for (int64_t h = h0; h < h1; ++h) {
            for (int64_t w = w0; w < w1; ++w) best = std::max(best, xp[h * W + w]);
          }
          y[size_t(((r * C + c) * PH + ph) * PW + pw)] = best;
        }
      }
    }
  }
  return {from_acc(y, ctx.output_types[0])};
}

// ---------------------------------------------------------------------------
// MaxUnpool: scatters X to the flat positions given by I (e.g. MaxPool's
// Indices), zeros elsewhere. The positions index the inferred output
// [N, C, (in - 1) * stride + kernel - pad_begin - pad_end, ...]; an
// output_shape input, which must be at least that large, then pads the result
// with zeros at the end of each dimension (ONNX reference and ONNX Runtime
// behaviour, checked by the node test maxunpool_export_with_output_shape).
// ---------------------------------------------------------------------------

Shape unpool_inferred_shape(const Attributes& attrs, const Shape& x) {
  size_t n = x.size() - 2;
  Shape kernel = attrs.require_ints("kernel_shape");
  std::vector<int64_t> strides = attrs.get_ints("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> pads = attrs.get_ints("pads", std::vector<int64_t>(2 * n, 0));
  if (kernel.size() != n || strides.size() != n || pads.size() != 2 * n) {
    ORCHID_FAIL() << "attributes kernel_shape/strides/pads must have " << n << "/" << n << "/" << 2 * n
                  << " entries";
  }
  Shape out = {x[0], x[1]};
  for (size_t i = 0; i < n; ++i) {
    out.push_back((x[i + 2] - 1) * strides[i] + kernel[i] - pads[i] - pads[n + i]);
    if (out.back() < 1) ORCHID_FAIL() << "the output size in spatial dimension " << i << " would be " << out.back();
  }
  return out;
}

std::vector<TensorType> infer_max_unpool(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  check_pool_input(x, kFloatTypes);
  check_dtype(ctx.input(1).dtype, {DType::Int64}, 1, "I");
  if (ctx.input(1).shape != x.shape) {
    ORCHID_FAIL() << "indices I of shape " << shape_to_string(ctx.input(1).shape)
                  << " differ from X's shape " << shape_to_string(x.shape);
  }
  Shape inferred = unpool_inferred_shape(ctx.attrs(), x.shape);
  if (!ctx.has_input(2)) return one(x.dtype, inferred);
  Shape out = ctx.require_value(2, "output_shape").to_i64_vector();
  bool ok = out.size() == x.rank() && out[0] == x.shape[0] && out[1] == x.shape[1];
  for (size_t i = 2; ok && i < out.size(); ++i) ok = out[i] >= inferred[i];
  if (!ok) {
    ORCHID_FAIL() << "output_shape " << shape_to_string(out) << " must keep N and C and be at least "
                  << shape_to_string(inferred);
  }
  return one(x.dtype, out);
}

std::vector<Tensor> eval_max_unpool(const EvalContext& ctx) {
  std::vector<double> x = to_acc<double>(ctx.input(0));
  std::vector<int64_t> indices = ctx.input(1).to_i64_vector();
  Shape inferred = unpool_inferred_shape(ctx.attrs(), ctx.input(0).shape());
  std::vector<double> scattered(size_t(shape_numel(inferred)), 0.0);
  for (size_t i = 0; i < x.size(); ++i) {
    if (indices[i] < 0 || indices[i] >= int64_t(scattered.size())) {
      ORCHID_FAIL() << "index " << indices[i] << " is outside the output of " << scattered.size() << " elements";
    }
    scattered[size_t(indices[i])] = x[i];
  }
  const Shape& out = ctx.output_types[0].shape;
  std::vector<double> y(size_t(shape_numel(out)), 0.0);
  std::vector<int64_t> out_strides = shape_strides(out);
  int64_t flat = 0;
  for_each_index(inferred, [&](const std::vector<int64_t>& idx) {
    int64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d) o += idx[d] * out_strides[d];
    y[size_t(o)] = scattered[size_t(flat++)];
  });
  return {from_acc(y, ctx.output_types[0])};
}

}  // namespace

void register_pool_ops(OpRegistry& registry) {
  registry.add({"MaxPool", "", infer_max_pool, eval_max_pool, 1, 1});
  registry.add({"AveragePool", "", infer_float_pool, eval_average_pool, 1, 1});
  registry.add({"LpPool", "", infer_float_pool, eval_lp_pool, 1, 1});
  registry.add({"GlobalAveragePool", "", infer_global_pool, eval_global_pool<GlobalKind::Average>, 1, 1});
  registry.add({"GlobalMaxPool", "", infer_global_pool, eval_global_pool<GlobalKind::Max>, 1, 1});
  registry.add({"GlobalLpPool", "", infer_global_pool, eval_global_pool<GlobalKind::Lp>, 1, 1});
  registry.add({"MaxRoiPool", "", infer_max_roi_pool, eval_max_roi_pool, 2, 2});
  registry.add({"MaxUnpool", "", infer_max_unpool, eval_max_unpool, 2, 3});
}

}  // namespace orchid::reference
