// primitive_expr: the linear primitives (MatMul, Conv, ConvTranspose, and
// ai.orchid's banded G2BMM and GBMM), the forms OLLIE's derivation rewrites. Layouts are ONNX's: X [N, C, spatial...],
// Conv weights [M, C/G, taps...], ConvTranspose weights [C, M/G, taps...].
#include <algorithm>

#include "fission/primitive_expr.h"
#include "reference/ops/banded.h"
#include "reference/ops/conv_utils.h"
#include "support/error.h"

namespace orchid::fission::primitive_expr_detail {

namespace {

using expr::Expr;
using expr::IterRange;

// Batched, broadcasting MatMul: L<batch..., i, j> Sum<r0> A[batch, i, r0] * B[batch, r0, j].
// A 1-D operand is a matrix with its unit dimension dropped from the output.
Expr matmul_form(const ExprContext& ctx) {
  if (!ctx.require_float({0, 1})) return nullptr;
  const Shape& a = ctx.input_type(0).shape;
  const Shape& b = ctx.input_type(1).shape;
  const Shape& out = ctx.output_type().shape;
  if (a.empty() || b.empty()) ORCHID_FAIL() << ctx.node.describe() << ": MatMul of a scalar";
  const int64_t k = a.back();
  Expr ta = ctx.input_tensor(0), tb = ctx.input_tensor(1);
  std::vector<IterRange> loops = loop_ranges(out);
  std::vector<Expr> i = range_iters(loops);
  IterRange r = sum_range(0, k);
  // The output index with the dropped unit dimensions restored: [batch..., row, col].
  std::vector<Expr> full = i;
  Shape full_shape = out;
  if (a.size() == 1) {
    full.insert(full.end() - (b.size() == 1 ? 0 : 1), expr::integer(0));
    full_shape.insert(full_shape.end() - (b.size() == 1 ? 0 : 1), 1);
  }
  if (b.size() == 1) {
    full.push_back(expr::integer(0));
    full_shape.push_back(1);
  }
  const size_t batch = full.size() - 2;
  const Expr row = full[batch], col = full[batch + 1];
  const std::vector<Expr> batch_index(full.begin(), full.begin() + int64_t(batch));
  const Shape batch_shape(full_shape.begin(), full_shape.begin() + int64_t(batch));
  auto operand = [&](Expr t, const Shape& shape, Expr first, Expr second) {
    if (shape.size() == 1) return expr::access(t, {r.iter});
    std::vector<Expr> index = batch_index;
    index.push_back(first);
    index.push_back(second);
    Shape padded = batch_shape;
    padded.push_back(shape[shape.size() - 2]);
    padded.push_back(shape.back());
    return broadcast_access(t, padded, index);
  };
  Expr body = expr::mul(operand(ta, a, row, r.iter), operand(tb, b, r.iter, col));
  return expr::scope(loops, {r}, body);
}

// Bias [M] added to a scope's result at channel index 1: the bias is outside
// the sum, so the sum becomes a nested scope.
Expr add_bias(const ExprContext& ctx, Expr sum_scope, size_t bias_input) {
  if (!ctx.has_input(bias_input)) return sum_scope;
  const auto& s = sum_scope->as<expr::ScopeNode>();
  std::vector<Expr> i = range_iters(s.loops());
  return expr::scope(s.loops(), {},
                     expr::add(expr::access(sum_scope, i), expr::access(ctx.input_tensor(bias_input), {i[1]})));
}

Expr conv_form(const ExprContext& ctx) {
  if (!ctx.require_float({0, 1, 2})) return nullptr;
  const Shape& x = ctx.input_type(0).shape;
  const Shape& w = ctx.input_type(1).shape;
  if (x.size() < 3 || w.size() != x.size()) ORCHID_FAIL() << ctx.node.describe() << ": bad Conv ranks";
  const size_t n = x.size() - 2;
  const Shape in_spatial(x.begin() + 2, x.end());
  const Shape kernel = reference::kernel_shape_attr(ctx.node.attrs, Shape(w.begin() + 2, w.end()));
  const reference::WindowGeometry g = reference::window_geometry(ctx.node.attrs, in_spatial, kernel, false);
  const int64_t groups = ctx.node.attrs.get_int("group", 1);
  const int64_t m_per_group = w[0] / groups, c_per_group = w[1];
  std::vector<IterRange> loops = loop_ranges(ctx.output_type().shape);
  std::vector<Expr> i = range_iters(loops);
  std::vector<IterRange> sums = {sum_range(0, c_per_group)};
  // Input channel: group * C/G + c.
  Expr channel = sums[0].iter;
  if (groups > 1) {
    channel = expr::add(expr::mul(expr::div(i[1], expr::integer(m_per_group)), expr::integer(c_per_group)), channel);
  }
  std::vector<Expr> x_index = {i[0], channel}, w_index = {i[1], sums[0].iter};
  std::vector<int64_t> x_pads(x.size(), 0);
  for (size_t d = 0; d < n; ++d) {
    sums.push_back(sum_range(d + 1, kernel[d]));
    Expr tap = sums.back().iter;
    x_index.push_back(expr::add(expr::add(expr::mul(i[d + 2], expr::integer(g.strides[d])),
                                          expr::mul(tap, expr::integer(g.dilations[d]))),
                                expr::integer(-g.pad_begin[d])));
    w_index.push_back(tap);
    x_pads[d + 2] = std::max<int64_t>({0, g.pad_begin[d], g.pad_end[d]});
  }
  Expr body = expr::mul(expr::access(ctx.input_tensor(0, x_pads), x_index), expr::access(ctx.input_tensor(1), w_index));
  return add_bias(ctx, expr::scope(loops, sums, body), 2);
}

// The 0/1 indicator of e % d == 0: a one-point scope read at e % d is 1 at 0
// and 0 elsewhere (reads outside a scope's loop box are 0).
Expr divisible(Expr e, int64_t d) {
  Expr one = expr::scope({{expr::iter("q"), 0, 1}}, {}, expr::constant(1.0));
  return expr::access(one, {expr::mod(e, expr::integer(d))});
}

// ConvTranspose: out[o] = Sum over input positions p and taps t with
// o = p*s + t*d - pad of X[p] * W[t]. Summing over p, the tap is
// (o + pad - p*s) / d: with d == 1 a plain affine read of W, whose reads
// outside [0, k) are 0; with d > 1 guarded by divisibility.
Expr conv_transpose_form(const ExprContext& ctx) {
  if (!ctx.require_float({0, 1, 2})) return nullptr;
  const Shape& x = ctx.input_type(0).shape;
  const Shape& w = ctx.input_type(1).shape;
  if (x.size() < 3 || w.size() != x.size()) ORCHID_FAIL() << ctx.node.describe() << ": bad ConvTranspose ranks";
  const size_t n = x.size() - 2;
  const Shape in_spatial(x.begin() + 2, x.end());
  const Shape kernel = reference::kernel_shape_attr(ctx.node.attrs, Shape(w.begin() + 2, w.end()));
  const reference::WindowGeometry g = reference::conv_transpose_geometry(ctx.node.attrs, in_spatial, kernel);
  const int64_t groups = ctx.node.attrs.get_int("group", 1);
  const int64_t c_per_group = x[1] / groups, m_per_group = w[1];
  std::vector<IterRange> loops = loop_ranges(ctx.output_type().shape);
  std::vector<Expr> i = range_iters(loops);
  std::vector<IterRange> sums = {sum_range(0, c_per_group)};
  Expr channel = sums[0].iter, out_channel = i[1];
  if (groups > 1) {
    channel = expr::add(expr::mul(expr::div(i[1], expr::integer(m_per_group)), expr::integer(c_per_group)), channel);
    out_channel = expr::mod(i[1], expr::integer(m_per_group));
  }
  std::vector<Expr> x_index = {i[0], channel}, w_index = {channel, out_channel};
  Expr guard = nullptr;
  for (size_t d = 0; d < n; ++d) {
    sums.push_back(sum_range(d + 1, in_spatial[d]));
    Expr p = sums.back().iter;
    x_index.push_back(p);
    Expr offset = expr::sub(expr::add(i[d + 2], expr::integer(g.pad_begin[d])), expr::mul(p, expr::integer(g.strides[d])));
    if (g.dilations[d] == 1) {
      w_index.push_back(offset);
    } else {
      w_index.push_back(expr::div(offset, expr::integer(g.dilations[d])));
      Expr ok = divisible(offset, g.dilations[d]);
      guard = guard ? expr::mul(guard, ok) : ok;
    }
  }
  Expr body = expr::mul(expr::access(ctx.input_tensor(0), x_index), expr::access(ctx.input_tensor(1), w_index));
  if (guard) body = expr::mul(body, guard);
  return add_bias(ctx, expr::scope(loops, sums, body), 2);
}

// The banded matmuls (reference/ops/banded.h), reading B at row
// m + d*w - d*W (rows outside [0, N) read 0, as the operators define):
//   G2BMM: L<b, m, w> Sum<r0:0:K> A[b, m, r0] * B[b, m + d*w - d*W, r0]
//   GBMM:  L<b, m, k> Sum<r0:0:2W+1> A[b, m, r0] * B[b, m + d*r0 - d*W, k]
// The form table is keyed by op name alone, so the builder also checks the
// domain: a default-domain operator of the same name is not these.
Expr banded_form(const ExprContext& ctx) {
  if (!reference::is_banded_op(ctx.node)) return ctx.fail("not an ai.orchid banded matmul");
  if (!ctx.require_float({0, 1})) return nullptr;
  reference::BandedDims d;
  try {
    d = reference::banded_dims(ctx.node, ctx.input_type(0).shape, ctx.input_type(1).shape);
  } catch (const Error& e) {
    ORCHID_FAIL() << ctx.node.describe() << ": " << e.what();
  }
  std::vector<IterRange> loops = loop_ranges(ctx.output_type().shape);
  std::vector<Expr> i = range_iters(loops);
  IterRange r = sum_range(0, d.g2bmm ? d.k : d.band());
  const Expr w = d.g2bmm ? i[2] : r.iter;
  const Expr row = expr::add(expr::add(i[1], expr::mul(w, expr::integer(d.dilation))),
                             expr::integer(-d.dilation * d.width));
  const Expr a = expr::access(ctx.input_tensor(0), {i[0], i[1], r.iter});
  const Expr b = expr::access(ctx.input_tensor(1), {i[0], row, d.g2bmm ? r.iter : i[2]});
  return expr::scope(loops, {r}, expr::mul(a, b));
}

}  // namespace

const std::vector<std::pair<const char*, FormBuilder>>& linear_forms() {
  static const std::vector<std::pair<const char*, FormBuilder>> forms = {
      {"MatMul", matmul_form}, {"Conv", conv_form}, {"ConvTranspose", conv_transpose_form},
      {"G2BMM", banded_form},  {"GBMM", banded_form}};
  return forms;
}

}  // namespace orchid::fission::primitive_expr_detail
