// Compute-scope instantiation: a matched scope (iterator_table.h) becomes
// one library operator (MatMul, Conv, ai.orchid G2BMM / GBMM). Each operand
// is laid out in the operator's order by lower_access (layout primitives,
// folded at compile time for weights), the roles' iterators are flattened
// into the operator's dimensions, and the result is reshaped and transposed
// back into the scope's loop order.
#include <algorithm>
#include <sstream>

#include "derivation/analysis.h"
#include "derivation/instantiate_internal.h"
#include "ir/expr_affine.h"
#include "reference/ops/banded.h"

namespace orchid::derivation::inst {

using namespace expr;

namespace {

using Ranges = std::vector<IterRange>;

Ranges join(std::initializer_list<Ranges> parts) {
  Ranges out;
  for (const Ranges& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}


std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s + "]";
}

// A 3-d operand [batch, x, y], or 2-d when there is no batch.
std::vector<int64_t> operand_shape(const Ranges& batch, int64_t x, int64_t y) {
  if (batch.empty()) return {x, y};
  return {num_points(batch), x, y};
}

// An operator node of the ai.orchid domain (G2BMM, GBMM).
ValueId add_orchid_op(fission::FissionBuilder& builder, const std::string& op, const std::vector<ValueId>& inputs,
                      Attributes attrs) {
  return builder.add(op, inputs, std::move(attrs), 1, std::string(reference::kOrchidDomain))[0];
}

ValueId finish(Emitter& em, const ScopeNode& scope, const LinearMatch& m, ValueId out, const Ranges& order) {
  out = em.builder.reshape(out, extents_of(order));
  if (m.scale != 1) out = em.builder.binary("Mul", out, em.builder.scalar(m.scale, DType::Float32));
  return to_loop_order(em, out, order, scope.loops());
}

// ---- MatMul

ValueId emit_matmul(Emitter& em, const ScopeNode& scope, const LinearMatch& m) {
  ValueId a = lower_access_full(em, m.a->source(), m.a->indices(), join({m.batch, m.rows, m.reduce}));
  ValueId b = lower_access_full(em, m.b->source(), m.b->indices(), join({m.batch, m.reduce, m.cols}));
  a = em.builder.reshape(a, operand_shape(m.batch, num_points(m.rows), num_points(m.reduce)));
  b = em.builder.reshape(b, operand_shape(m.batch, num_points(m.reduce), num_points(m.cols)));
  ValueId c = em.builder.binary("MatMul", a, b);
  return finish(em, scope, m, c, join({m.batch, m.rows, m.cols}));
}

// ---- Conv: A's spatial dimension k is read through a fresh iterator x over
// the input positions the taps reach, clipped to A's box; the clipped part
// becomes the Conv's zero padding.

struct SpatialGeometry {
  IterRange x;
  int64_t pad_lo = 0, pad_hi = 0;
};

SpatialGeometry spatial_geometry(const ScopeNode& scope, const LinearMatch& m, size_t k) {
  const ConvSpatial& s = m.spatial[k];
  const int64_t c0 = affine_form(m.a->indices()[s.a_dim]).constant;
  const int64_t start = s.stride * s.out.lo + s.dilation * s.tap.lo + c0;
  const int64_t size = s.stride * (s.out.extent() - 1) + s.dilation * (s.tap.extent() - 1) + 1;
  Interval box = source_box(m.a->source(), s.a_dim);
  SpatialGeometry g;
  int64_t lo = std::max(start, box.lo), hi = std::min(start + size, box.hi);
  if (lo >= hi) lo = start, hi = start + size;  // reads nothing: zeros, no padding
  g.x = {fresh_iter(&scope, "x" + std::to_string(k)), lo, hi};
  g.pad_lo = lo - start;
  g.pad_hi = start + size - hi;
  return g;
}

ValueId emit_conv(Emitter& em, const ScopeNode& scope, const LinearMatch& m) {
  std::vector<Expr> a_indices = m.a->indices();
  Ranges xs, taps, outs;
  std::vector<int64_t> strides, dilations, pads_lo, pads_hi, kernel;
  for (size_t k = 0; k < m.spatial.size(); ++k) {
    SpatialGeometry g = spatial_geometry(scope, m, k);
    a_indices[m.spatial[k].a_dim] = g.x.iter;
    xs.push_back(g.x), taps.push_back(m.spatial[k].tap), outs.push_back(m.spatial[k].out);
    strides.push_back(m.spatial[k].stride), dilations.push_back(m.spatial[k].dilation);
    pads_lo.push_back(g.pad_lo), pads_hi.push_back(g.pad_hi), kernel.push_back(m.spatial[k].tap.extent());
  }
  ValueId a = lower_access_full(em, m.a->source(), a_indices, join({m.batch, m.groups, m.reduce, xs}));
  ValueId b = lower_access_full(em, m.b->source(), m.b->indices(), join({m.groups, m.cols, m.reduce, taps}));
  const int64_t groups = num_points(m.groups);
  std::vector<int64_t> a_shape = {num_points(m.batch), groups * num_points(m.reduce)},
                       b_shape = {groups * num_points(m.cols), num_points(m.reduce)};
  for (size_t k = 0; k < xs.size(); ++k) a_shape.push_back(xs[k].extent()), b_shape.push_back(kernel[k]);
  a = em.builder.reshape(a, a_shape);
  b = em.builder.reshape(b, b_shape);
  Attributes attrs;
  attrs.set("strides", strides);
  attrs.set("dilations", dilations);
  pads_lo.insert(pads_lo.end(), pads_hi.begin(), pads_hi.end());
  attrs.set("pads", pads_lo);
  attrs.set("kernel_shape", kernel);
  attrs.set("group", groups);
  ValueId c = em.builder.add1("Conv", {a, b}, std::move(attrs));
  return finish(em, scope, m, c, join({m.batch, m.groups, m.cols, outs}));
}

// ---- G2BMM / GBMM: B's band dimension m + d*w + c is read through a fresh
// row iterator r as B[r + tau]. The operator's band is [-W, W]; the scope's
// band w is the window [j0, j0 + extent) of it. tau <= B's box origin, so
// the rows the operator treats as zero (r < 0) are zero in B too.

struct BandGeometry {
  int64_t width = 0, j0 = 0;
  IterRange r;
  Expr b_row_index = nullptr;  // r + tau, in B's coordinates
};

BandGeometry band_geometry(const ScopeNode& scope, const LinearMatch& m) {
  const int64_t d = m.dilation, extent = m.band.extent();
  const int64_t c0 = affine_form(m.b->indices()[m.b_band_dim]).constant;
  const int64_t kappa = m.rows[0].lo + d * m.band.lo + c0;
  Interval box = source_box(m.b->source(), m.b_band_dim);
  const int64_t j = ceil_div_int(kappa - box.lo, d);
  BandGeometry g;
  g.width = std::max({-j, j + extent - 1, int64_t(0)});
  g.j0 = g.width + j;
  const int64_t tau = kappa - d * j;
  g.r = {fresh_iter(&scope, "r"), 0, std::max<int64_t>(box.hi - tau, 1)};
  g.b_row_index = add(g.r.iter, integer(tau));
  return g;
}

Attributes band_attrs(const BandGeometry& g, const LinearMatch& m) {
  Attributes attrs;
  attrs.set("width", g.width);
  attrs.set("dilation", m.dilation);
  return attrs;
}

ValueId emit_g2bmm(Emitter& em, const ScopeNode& scope, const LinearMatch& m) {
  BandGeometry g = band_geometry(scope, m);
  std::vector<Expr> b_indices = m.b->indices();
  b_indices[m.b_band_dim] = g.b_row_index;
  ValueId a = lower_access_full(em, m.a->source(), m.a->indices(), join({m.batch, m.rows, m.reduce}));
  ValueId b = lower_access_full(em, m.b->source(), b_indices, join({m.batch, {g.r}, m.reduce}));
  a = em.builder.reshape(a, {num_points(m.batch), m.rows[0].extent(), num_points(m.reduce)});
  b = em.builder.reshape(b, {num_points(m.batch), g.r.extent(), num_points(m.reduce)});
  ValueId c = add_orchid_op(em.builder, "G2BMM", {a, b}, band_attrs(g, m));
  if (g.j0 != 0 || m.band.extent() != 2 * g.width + 1) c = em.builder.slice(c, {g.j0}, {g.j0 + m.band.extent()}, {2});
  return finish(em, scope, m, c, join({m.batch, m.rows, {m.band}}));
}

ValueId emit_gbmm(Emitter& em, const ScopeNode& scope, const LinearMatch& m) {
  BandGeometry g = band_geometry(scope, m);
  std::vector<Expr> b_indices = m.b->indices();
  b_indices[m.b_band_dim] = g.b_row_index;
  ValueId a = lower_access_full(em, m.a->source(), m.a->indices(), join({m.batch, m.rows, {m.band}}));
  ValueId b = lower_access_full(em, m.b->source(), b_indices, join({m.batch, {g.r}, m.cols}));
  a = em.builder.reshape(a, {num_points(m.batch), m.rows[0].extent(), m.band.extent()});
  const int64_t pad_hi = 2 * g.width + 1 - g.j0 - m.band.extent();
  if (g.j0 != 0 || pad_hi != 0) a = em.builder.add1("Pad", {a, em.builder.ints({0, 0, g.j0, 0, 0, pad_hi})});
  b = em.builder.reshape(b, {num_points(m.batch), g.r.extent(), num_points(m.cols)});
  ValueId c = add_orchid_op(em.builder, "GBMM", {a, b}, band_attrs(g, m));
  return finish(em, scope, m, c, join({m.batch, m.rows, m.cols}));
}

}  // namespace

ValueId emit_linear_scope(Emitter& em, const ScopeNode& scope, const LinearMatch& m) {
  switch (m.op) {
    case LinearOp::MatMul:
      return emit_matmul(em, scope, m);
    case LinearOp::Conv:
      return emit_conv(em, scope, m);
    case LinearOp::G2BMM:
      return emit_g2bmm(em, scope, m);
    case LinearOp::GBMM:
      return emit_gbmm(em, scope, m);
  }
  ORCHID_CHECK(false) << "unknown linear op";
  return kNoValue;
}

std::string describe_linear_scope(const ScopeNode& scope, const LinearMatch& m) {
  std::ostringstream out;
  out << linear_op_name(m.op) << " ";
  switch (m.op) {
    case LinearOp::MatMul:
      out << dims_text(operand_shape(m.batch, num_points(m.rows), num_points(m.reduce))) << "x"
          << dims_text(operand_shape(m.batch, num_points(m.reduce), num_points(m.cols)));
      break;
    case LinearOp::Conv: {
      const int64_t groups = num_points(m.groups);
      std::vector<int64_t> a = {num_points(m.batch), groups * num_points(m.reduce)},
                           b = {groups * num_points(m.cols), num_points(m.reduce)};
      std::vector<int64_t> strides, dilations;
      for (size_t k = 0; k < m.spatial.size(); ++k) {
        SpatialGeometry g = spatial_geometry(scope, m, k);
        a.push_back(g.x.extent() + g.pad_lo + g.pad_hi), b.push_back(m.spatial[k].tap.extent());
        strides.push_back(m.spatial[k].stride), dilations.push_back(m.spatial[k].dilation);
      }
      out << dims_text(a) << "*" << dims_text(b) << " stride " << dims_text(strides) << " dilation "
          << dims_text(dilations);
      if (groups > 1) out << " group " << groups;
      break;
    }
    case LinearOp::G2BMM:
    case LinearOp::GBMM: {
      BandGeometry g = band_geometry(scope, m);
      int64_t a_cols = m.op == LinearOp::G2BMM ? num_points(m.reduce) : 2 * g.width + 1;
      int64_t b_cols = m.op == LinearOp::G2BMM ? num_points(m.reduce) : num_points(m.cols);
      out << dims_text({num_points(m.batch), m.rows[0].extent(), a_cols}) << "x"
          << dims_text({num_points(m.batch), g.r.extent(), b_cols}) << " width " << g.width << " dilation "
          << m.dilation;
      break;
    }
  }
  return out.str();
}

}  // namespace orchid::derivation::inst
