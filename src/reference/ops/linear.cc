// Reference implementations of the linear operators: MatMul, Gemm,
// MatMulInteger, Conv, ConvInteger, ConvTranspose (Einsum is in
// einsum.cc). Unlike most of the interpreter these must be reasonably fast
// (whole CNNs run through them), so dot products are loop nests with a
// cache-friendly order over accumulator arrays: double for the float types,
// wrapping 64-bit integers for the integer types (see AccOf in conv_utils.h).
#include <algorithm>

#include "reference/ops/conv_utils.h"
#include "reference/ops/einsum.h"
#include "reference/ops/op_utils.h"
#include "reference/ops/ops.h"
#include "support/error.h"

namespace orchid::reference {
namespace {

// The types ONNX allows for MatMul and Gemm (opset 13).
constexpr std::initializer_list<DType> kMatMulTypes = {
    DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
    DType::Int32,   DType::Int64,   DType::UInt32,  DType::UInt64};
constexpr std::initializer_list<DType> kInt8Types = {DType::Int8, DType::UInt8};

void check_same_dtype(const TensorType& a, const TensorType& b, size_t index, const char* name) {
  if (a.dtype != b.dtype) {
    ORCHID_FAIL() << "input " << index << " (" << name << ") has dtype " << dtype_name(b.dtype)
                  << " but input 0 has " << dtype_name(a.dtype);
  }
}

// ---------------------------------------------------------------------------
// MatMul, Gemm, MatMulInteger
// ---------------------------------------------------------------------------

// y[M, N] += a[M, K] * b[K, N]; a's element (i, k) is at a[i * a_row + k * a_col],
// b is contiguous. i-k-j order: the innermost loop runs along rows of b and y.
template <typename Acc>
void gemm_rows(int64_t M, int64_t N, int64_t K, const Acc* a, int64_t a_row, int64_t a_col,
               const Acc* b, Acc* y) {
  for (int64_t i = 0; i < M; ++i) {
    Acc* __restrict yrow = y + i * N;
    for (int64_t k = 0; k < K; ++k) {
      const Acc av = a[i * a_row + k * a_col];
      const Acc* __restrict brow = b + k * N;
      for (int64_t j = 0; j < N; ++j) yrow[j] += av * brow[j];
    }
  }
}

// numpy matmul shapes: a 1-D A is a row [1, K], a 1-D B a column [K, 1] (the
// added dimension is dropped from the result); batch dimensions broadcast.
struct MatMulDims {
  Shape batch_a, batch_b, batch_out, out;
  int64_t M = 0, K = 0, N = 0;
};

MatMulDims matmul_dims(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) ORCHID_FAIL() << "MatMul inputs must have rank >= 1";
  Shape a2 = a.size() == 1 ? Shape{1, a[0]} : a;
  Shape b2 = b.size() == 1 ? Shape{b[0], 1} : b;
  MatMulDims d;
  d.M = a2[a2.size() - 2];
  d.K = a2.back();
  d.N = b2.back();
  if (b2[b2.size() - 2] != d.K) {
    ORCHID_FAIL() << "MatMul of shapes " << shape_to_string(a) << " and " << shape_to_string(b)
                  << ": inner dimensions " << d.K << " and " << b2[b2.size() - 2] << " differ";
  }
  d.batch_a.assign(a2.begin(), a2.end() - 2);
  d.batch_b.assign(b2.begin(), b2.end() - 2);
  d.batch_out = broadcast_shapes(d.batch_a, d.batch_b);
  d.out = d.batch_out;
  if (a.size() > 1) d.out.push_back(d.M);
  if (b.size() > 1) d.out.push_back(d.N);
  return d;
}

template <typename Acc>
std::vector<Acc> batched_matmul(const MatMulDims& d, const std::vector<Acc>& a, const std::vector<Acc>& b) {
  std::vector<Acc> y(size_t(shape_numel(d.out)), Acc(0));
  BroadcastIndexer index_a(d.batch_a, d.batch_out), index_b(d.batch_b, d.batch_out);
  for (int64_t batch = 0; batch < shape_numel(d.batch_out); ++batch) {
    gemm_rows(d.M, d.N, d.K, a.data() + index_a(batch) * d.M * d.K, d.K, 1,
              b.data() + index_b(batch) * d.K * d.N, y.data() + batch * d.M * d.N);
  }
  return y;
}

std::vector<TensorType> infer_matmul(const InferContext& ctx) {
  check_dtype(ctx.input(0).dtype, kMatMulTypes, 0, "A");
  check_same_dtype(ctx.input(0), ctx.input(1), 1, "B");
  return one(ctx.input(0).dtype, matmul_dims(ctx.input(0).shape, ctx.input(1).shape).out);
}

std::vector<Tensor> eval_matmul(const EvalContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  MatMulDims d = matmul_dims(a.shape(), b.shape());
  if (is_float(a.dtype())) {
    return {from_acc(batched_matmul(d, to_acc<double>(a), to_acc<double>(b)), ctx.output_types[0])};
  }
  return {from_acc(batched_matmul(d, to_acc<uint64_t>(a), to_acc<uint64_t>(b)), ctx.output_types[0])};
}

// MatMulInteger: (A - a_zero_point) * (B - b_zero_point) in int32. A zero
// point is a scalar (per tensor) or, for A, a vector of M (per row) and, for
// B, a vector of N (per column).
std::vector<TensorType> infer_matmul_integer(const InferContext& ctx) {
  check_dtype(ctx.input(0).dtype, kInt8Types, 0, "A");
  check_dtype(ctx.input(1).dtype, kInt8Types, 1, "B");
  MatMulDims d = matmul_dims(ctx.input(0).shape, ctx.input(1).shape);
  for (size_t i : {2, 3}) {
    if (!ctx.has_input(i)) continue;
    check_same_dtype(ctx.input(i - 2), ctx.input(i), i, i == 2 ? "a_zero_point" : "b_zero_point");
    int64_t n = ctx.input(i).numel(), per = i == 2 ? d.M : d.N;
    if (n != 1 && !(ctx.input(i).rank() == 1 && n == per)) {
      ORCHID_FAIL() << "input " << i << ": zero point of shape " << shape_to_string(ctx.input(i).shape)
                    << " is not supported (a scalar or a vector of " << per << ")";
    }
  }
  return one(DType::Int32, d.out);
}

// The elements of x minus their zero point; element i uses zero point
// (i / zp_div) % zp.size().
std::vector<uint64_t> minus_zero_point(const Tensor& x, const Tensor* zero_point, int64_t zp_div) {
  std::vector<uint64_t> v = to_acc<uint64_t>(x);
  if (!zero_point) return v;
  std::vector<uint64_t> zp = to_acc<uint64_t>(*zero_point);
  for (size_t i = 0; i < v.size(); ++i) v[i] -= zp[(int64_t(i) / zp_div) % int64_t(zp.size())];
  return v;
}

std::vector<Tensor> eval_matmul_integer(const EvalContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  MatMulDims d = matmul_dims(a.shape(), b.shape());
  std::vector<uint64_t> av = minus_zero_point(a, ctx.has_input(2) ? &ctx.input(2) : nullptr, d.K);
  std::vector<uint64_t> bv = minus_zero_point(b, ctx.has_input(3) ? &ctx.input(3) : nullptr, 1);
  return {from_acc(batched_matmul(d, av, bv), ctx.output_types[0])};
}

// Gemm: Y = alpha * A' * B' + beta * C, A' = transA ? A^T : A (likewise B');
// C is optional and broadcasts unidirectionally to [M, N].
struct GemmDims {
  int64_t M, K, N;
};

GemmDims gemm_dims(const Attributes& attrs, const TensorType& a, const TensorType& b) {
  if (a.rank() != 2 || b.rank() != 2) {
    ORCHID_FAIL() << "Gemm expects 2-D A and B, got " << a.to_string() << " and " << b.to_string();
  }
  bool ta = attrs.get_int("transA", 0) != 0, tb = attrs.get_int("transB", 0) != 0;
  GemmDims d{ta ? a.shape[1] : a.shape[0], ta ? a.shape[0] : a.shape[1], tb ? b.shape[0] : b.shape[1]};
  int64_t kb = tb ? b.shape[1] : b.shape[0];
  if (kb != d.K) {
    ORCHID_FAIL() << "Gemm: inner dimensions differ: A' has " << d.K << " columns, B' has " << kb << " rows";
  }
  return d;
}

std::vector<TensorType> infer_gemm(const InferContext& ctx) {
  check_dtype(ctx.input(0).dtype, kMatMulTypes, 0, "A");
  check_same_dtype(ctx.input(0), ctx.input(1), 1, "B");
  GemmDims d = gemm_dims(ctx.attrs(), ctx.input(0), ctx.input(1));
  if (ctx.has_input(2)) {
    const TensorType& c = ctx.input(2);
    check_same_dtype(ctx.input(0), c, 2, "C");
    Shape target{d.M, d.N};
    bool ok = c.rank() <= 2;
    for (size_t i = 0; ok && i < c.rank(); ++i) {
      int64_t t = target[2 - c.rank() + i];
      ok = c.shape[i] == 1 || c.shape[i] == t;
    }
    if (!ok) ORCHID_FAIL() << "Gemm: C of shape " << shape_to_string(c.shape) << " does not broadcast to "
                           << shape_to_string(target);
  }
  return one(ctx.input(0).dtype, {d.M, d.N});
}

// alpha * v for the accumulator types (integers scale through double, as
// numpy's float alpha would).
double scaled(double alpha, double v) { return alpha * v; }
uint64_t scaled(double alpha, uint64_t v) {
  return alpha == 1.0 ? v : uint64_t(int64_t(alpha * double(int64_t(v))));
}

template <typename Acc>
Tensor gemm_typed(const EvalContext& ctx, const GemmDims& d) {
  bool ta = ctx.attrs().get_int("transA", 0) != 0, tb = ctx.attrs().get_int("transB", 0) != 0;
  double alpha = ctx.attrs().get_float("alpha", 1.0), beta = ctx.attrs().get_float("beta", 1.0);
  std::vector<Acc> a = to_acc<Acc>(ctx.input(0));
  std::vector<Acc> b = to_acc<Acc>(ctx.input(1));
  if (tb) {  // the kernel wants B' contiguous as [K, N]
    std::vector<Acc> bt(b.size());
    for (int64_t k = 0; k < d.K; ++k) {
      for (int64_t j = 0; j < d.N; ++j) bt[size_t(k * d.N + j)] = b[size_t(j * d.K + k)];
    }
    b = std::move(bt);
  }
  std::vector<Acc> y(size_t(d.M * d.N), Acc(0));
  gemm_rows(d.M, d.N, d.K, a.data(), ta ? 1 : d.K, ta ? d.M : 1, b.data(), y.data());
  for (Acc& v : y) v = scaled(alpha, v);
  if (ctx.has_input(2) && beta != 0.0) {
    std::vector<Acc> c = to_acc<Acc>(ctx.input(2));
    BroadcastIndexer index(ctx.input(2).shape(), {d.M, d.N});
    for (size_t i = 0; i < y.size(); ++i) y[i] += scaled(beta, c[size_t(index(int64_t(i)))]);
  }
  return from_acc(y, ctx.output_types[0]);
}

std::vector<Tensor> eval_gemm(const EvalContext& ctx) {
  GemmDims d = gemm_dims(ctx.attrs(), ctx.input(0).type(), ctx.input(1).type());
  if (is_float(ctx.input(0).dtype())) return {gemm_typed<double>(ctx, d)};
  return {gemm_typed<uint64_t>(ctx, d)};
}

// ---------------------------------------------------------------------------
// Conv, ConvInteger, ConvTranspose
// ---------------------------------------------------------------------------

struct ConvSetup {
  ConvProblem problem;
  Shape out;
};

// X [N, C, D1, ...]; W [M, C/group, k1, ...] for Conv, [C, M/group, k1, ...]
// for ConvTranspose.
ConvSetup conv_setup(const Attributes& attrs, const Shape& x, const Shape& w, bool transpose) {
  if (x.size() < 3 || w.size() != x.size()) {
    ORCHID_FAIL() << "expected X of rank >= 3 and W of the same rank, got X " << shape_to_string(x)
                  << " and W " << shape_to_string(w);
  }
  ConvSetup s;
  ConvProblem& p = s.problem;
  p.groups = attrs.get_int("group", 1);
  if (p.groups < 1) ORCHID_FAIL() << "attribute group must be >= 1, got " << p.groups;
  p.batch = x[0];
  p.in_channels = x[1];
  int64_t w_in = transpose ? w[0] : w[1] * p.groups;
  p.out_channels = transpose ? w[1] * p.groups : w[0];
  if (w_in != p.in_channels || p.out_channels % p.groups != 0) {
    ORCHID_FAIL() << "X of shape " << shape_to_string(x) << " and W of shape " << shape_to_string(w)
                  << " do not match with group = " << p.groups;
  }
  Shape in_spatial(x.begin() + 2, x.end());
  Shape kernel = kernel_shape_attr(attrs, Shape(w.begin() + 2, w.end()));
  WindowGeometry g = transpose ? conv_transpose_geometry(attrs, in_spatial, kernel)
                               : window_geometry(attrs, in_spatial, kernel, false);
  p.window = to_window3(g);
  s.out = {p.batch, p.out_channels};
  s.out.insert(s.out.end(), g.out.begin(), g.out.end());
  return s;
}

void check_bias(const InferContext& ctx, const ConvSetup& s) {
  if (!ctx.has_input(2)) return;
  check_same_dtype(ctx.input(0), ctx.input(2), 2, "B");
  if (ctx.input(2).shape != Shape{s.problem.out_channels}) {
    ORCHID_FAIL() << "bias B has shape " << shape_to_string(ctx.input(2).shape) << ", expected ["
                  << s.problem.out_channels << "]";
  }
}

template <bool kTranspose>
std::vector<TensorType> infer_conv(const InferContext& ctx) {
  check_dtype(ctx.input(0).dtype, kFloatTypes, 0, "X");
  check_same_dtype(ctx.input(0), ctx.input(1), 1, "W");
  ConvSetup s = conv_setup(ctx.attrs(), ctx.input(0).shape, ctx.input(1).shape, kTranspose);
  check_bias(ctx, s);
  return one(ctx.input(0).dtype, s.out);
}

template <bool kTranspose>
std::vector<Tensor> eval_conv(const EvalContext& ctx) {
  ConvSetup s = conv_setup(ctx.attrs(), ctx.input(0).shape(), ctx.input(1).shape(), kTranspose);
  std::vector<double> x = to_acc<double>(ctx.input(0));
  std::vector<double> w = to_acc<double>(ctx.input(1));
  std::vector<double> bias = ctx.has_input(2) ? to_acc<double>(ctx.input(2)) : std::vector<double>();
  std::vector<double> y(size_t(shape_numel(s.out)));
  const double* b = ctx.has_input(2) ? bias.data() : nullptr;
  if (kTranspose) {
    conv_transpose_forward(s.problem, x.data(), w.data(), b, y.data());
  } else {
    conv_forward(s.problem, x.data(), w.data(), b, y.data());
  }
  return {from_acc(y, ctx.output_types[0])};
}

// ConvInteger: Conv of (x - x_zero_point) and (w - w_zero_point) in int32;
// x_zero_point is a scalar, w_zero_point a scalar or one per output channel.
std::vector<TensorType> infer_conv_integer(const InferContext& ctx) {
  check_dtype(ctx.input(0).dtype, kInt8Types, 0, "x");
  check_dtype(ctx.input(1).dtype, kInt8Types, 1, "w");
  ConvSetup s = conv_setup(ctx.attrs(), ctx.input(0).shape, ctx.input(1).shape, false);
  if (ctx.has_input(2) && ctx.input(2).numel() != 1) {
    ORCHID_FAIL() << "x_zero_point must be a scalar, got shape " << shape_to_string(ctx.input(2).shape);
  }
  if (ctx.has_input(3) && ctx.input(3).numel() != 1 && ctx.input(3).numel() != s.problem.out_channels) {
    ORCHID_FAIL() << "w_zero_point must be a scalar or have one entry per output channel, got shape "
                  << shape_to_string(ctx.input(3).shape);
  }
  return one(DType::Int32, s.out);
}

std::vector<Tensor> eval_conv_integer(const EvalContext& ctx) {
  ConvSetup s = conv_setup(ctx.attrs(), ctx.input(0).shape(), ctx.input(1).shape(), false);
  std::vector<int64_t> x = to_acc<int64_t>(ctx.input(0));
  std::vector<int64_t> w = to_acc<int64_t>(ctx.input(1));
  if (ctx.has_input(2)) {
    int64_t zp = ctx.input(2).at_i64(0);
    for (int64_t& v : x) v -= zp;
  }
  if (ctx.has_input(3)) {
    std::vector<int64_t> zp = to_acc<int64_t>(ctx.input(3));
    int64_t per_channel = int64_t(w.size()) / s.problem.out_channels;
    for (size_t i = 0; i < w.size(); ++i) w[i] -= zp[(int64_t(i) / per_channel) % int64_t(zp.size())];
  }
  std::vector<int64_t> y(size_t(shape_numel(s.out)));
  conv_forward<int64_t>(s.problem, x.data(), w.data(), nullptr, y.data());
  return {from_acc(y, ctx.output_types[0])};
}

}  // namespace

void register_linear_ops(OpRegistry& registry) {
  registry.add({"MatMul", "", infer_matmul, eval_matmul, 2, 2});
  registry.add({"MatMulInteger", "", infer_matmul_integer, eval_matmul_integer, 2, 4});
  registry.add({"Gemm", "", infer_gemm, eval_gemm, 2, 3});
  registry.add({"Conv", "", infer_conv<false>, eval_conv<false>, 2, 3});
  registry.add({"ConvTranspose", "", infer_conv<true>, eval_conv<true>, 2, 3});
  registry.add({"ConvInteger", "", infer_conv_integer, eval_conv_integer, 2, 4});
  register_einsum_op(registry);
}

}  // namespace orchid::reference
