// primitive_expr: the layout primitives (Transpose, Reshape, Slice, Concat,
// Pad, Expand, Gather) as index maps. Pure data movement, so any dtype.
#include <algorithm>

#include "fission/primitive_expr.h"
#include "reference/ops/op_utils.h"
#include "support/error.h"

namespace orchid::fission::primitive_expr_detail {

namespace {

using expr::Expr;
using expr::IterRange;

std::vector<int64_t> constant_ints(const ExprContext& ctx, size_t i, const char* what) {
  const Tensor* t = ctx.input_constant(i);
  if (!t) ORCHID_FAIL() << ctx.node.describe() << ": " << what << " must be a constant";
  return t->to_i64_vector();
}

Expr transpose_form(const ExprContext& ctx) {
  const Shape& in = ctx.input_type(0).shape;
  std::vector<int64_t> perm = ctx.node.attrs.get_ints("perm");
  if (perm.empty()) {
    for (size_t d = in.size(); d-- > 0;) perm.push_back(int64_t(d));
  }
  if (perm.size() != in.size()) ORCHID_FAIL() << ctx.node.describe() << ": perm has the wrong length";
  Expr x = ctx.input_tensor(0);
  return elementwise_scope(ctx.output_type().shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> index(in.size());
    for (size_t k = 0; k < perm.size(); ++k) index.at(size_t(perm[k])) = i[k];
    return expr::access(x, index);
  });
}

// Reshape: the input index of each output point through the row-major flat
// index. Dimensions of size 1 are read at 0 and left out of the arithmetic,
// and the remaining dimensions are cut into groups whose sizes multiply to
// the same number on both sides, so that a reshape that only splits or merges
// dimensions (or adds unit ones) stays a simple index map.
std::vector<Expr> reshape_index(const Shape& in, const Shape& out, const std::vector<Expr>& out_index) {
  std::vector<Expr> index(in.size(), expr::integer(0));
  std::vector<size_t> ins, outs;  // the dimensions of size != 1
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] != 1) ins.push_back(d);
  }
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] != 1) outs.push_back(d);
  }
  // An empty tensor has no points to index: every read may be x[0, ...].
  if (std::find(in.begin(), in.end(), 0) != in.end()) return index;
  size_t a = 0, b = 0;
  while (a < outs.size() || b < ins.size()) {
    // One group: out dims [a, a2) and in dims [b, b2) of equal product.
    size_t a2 = a, b2 = b;
    int64_t pa = 1, pb = 1;
    do {
      ORCHID_CHECK(a2 < outs.size() || b2 < ins.size()) << "reshape between different sizes";
      if ((pa <= pb && a2 < outs.size()) || b2 == ins.size()) {
        pa *= out[outs[a2++]];
      } else {
        pb *= in[ins[b2++]];
      }
    } while (pa != pb || a2 == a || b2 == b);
    Expr flat = expr::integer(0);
    int64_t stride = 1;
    for (size_t k = a2; k-- > a;) {
      flat = expr::add(flat, expr::mul(out_index[outs[k]], expr::integer(stride)));
      stride *= out[outs[k]];
    }
    stride = 1;
    for (size_t k = b2; k-- > b;) {
      Expr q = stride == 1 ? flat : expr::div(flat, expr::integer(stride));
      index[ins[k]] = k == b ? q : expr::mod(q, expr::integer(in[ins[k]]));
      stride *= in[ins[k]];
    }
    a = a2;
    b = b2;
  }
  return index;
}

Expr reshape_form(const ExprContext& ctx) {
  const Shape& in = ctx.input_type(0).shape;
  const Shape& out = ctx.output_type().shape;
  Expr x = ctx.input_tensor(0);
  return elementwise_scope(out, [&](const std::vector<Expr>& i) { return expr::access(x, reshape_index(in, out, i)); });
}

// Slice: x[start + step * i] per axis, after the spec's clamping (as the
// reference's slice_params does).
Expr slice_form(const ExprContext& ctx) {
  const Shape& shape = ctx.input_type(0).shape;
  const int64_t rank = int64_t(shape.size());
  std::vector<int64_t> starts = constant_ints(ctx, 1, "starts");
  std::vector<int64_t> ends = constant_ints(ctx, 2, "ends");
  std::vector<int64_t> axes, steps(starts.size(), 1);
  if (ctx.has_input(3)) {
    axes = reference::normalize_axes(constant_ints(ctx, 3, "axes"), rank);
  } else {
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(int64_t(k));
  }
  if (ctx.has_input(4)) steps = constant_ints(ctx, 4, "steps");
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    ORCHID_FAIL() << ctx.node.describe() << ": starts, ends, axes and steps must have the same length";
  }
  std::vector<int64_t> first(shape.size(), 0), step(shape.size(), 1);
  for (size_t k = 0; k < starts.size(); ++k) {
    const size_t axis = size_t(axes[k]);
    const int64_t dim = shape[axis];
    if (steps[k] == 0) ORCHID_FAIL() << ctx.node.describe() << ": slice step cannot be 0";
    int64_t start = starts[k] < 0 ? starts[k] + dim : starts[k];
    start = steps[k] > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
    first[axis] = start;
    step[axis] = steps[k];
  }
  Expr x = ctx.input_tensor(0);
  return elementwise_scope(ctx.output_type().shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> index;
    for (size_t d = 0; d < shape.size(); ++d) {
      index.push_back(expr::add(expr::integer(first[d]), expr::mul(i[d], expr::integer(step[d]))));
    }
    return expr::access(x, index);
  });
}

// Concat: the sum over inputs of x_k[.., i - offset_k, ..]. Each read is 0
// outside its input's range along the axis (unbounded zero padding), so at
// every output point exactly one term is live. The IR has no guarded or
// piecewise sum, so this is the exact form; no padding is declared, since it
// would have to be as large as the whole output.
Expr concat_form(const ExprContext& ctx) {
  const Shape& out = ctx.output_type().shape;
  const size_t axis = size_t(reference::normalize_axis(ctx.node.attrs.require_int("axis"), int64_t(out.size())));
  return elementwise_scope(out, [&](const std::vector<Expr>& i) {
    Expr sum = nullptr;
    int64_t offset = 0;
    for (size_t k = 0; k < ctx.node.inputs.size(); ++k) {
      const int64_t extent = ctx.input_type(k).shape.at(axis);
      if (extent == 0) continue;
      std::vector<Expr> index = i;
      index[axis] = expr::sub(i[axis], expr::integer(offset));
      Expr term = expr::access(ctx.input_tensor(k), index);
      sum = sum ? expr::add(sum, term) : term;
      offset += extent;
    }
    return sum ? sum : expr::constant(0.0);
  });
}

// Pad (constant mode, value 0): x[i - pad_begin]; the reads in the border
// are out of range, hence 0, and are declared as padding of the input.
// Negative pads crop.
Expr pad_form(const ExprContext& ctx) {
  const Shape& shape = ctx.input_type(0).shape;
  const int64_t rank = int64_t(shape.size());
  if (ctx.node.attrs.get_string("mode", "constant") != "constant") return ctx.fail("only constant mode pads with 0");
  if (ctx.has_input(2)) {
    const Tensor* value = ctx.input_constant(2);
    if (!value) return ctx.fail("a runtime pad value");
    if (value->numel() > 0 && value->at_f64(0) != 0) {
      return ctx.fail("pad value " + std::to_string(value->at_f64(0)) + ": zero padding is the only padding the IR has");
    }
  }
  std::vector<int64_t> pads = constant_ints(ctx, 1, "pads");
  std::vector<int64_t> axes;
  if (ctx.has_input(3)) {
    axes = reference::normalize_axes(constant_ints(ctx, 3, "axes"), rank);
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size()) ORCHID_FAIL() << ctx.node.describe() << ": pads must have 2 values per axis";
  std::vector<int64_t> begin(shape.size(), 0), declared(shape.size(), 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    const size_t axis = size_t(axes[k]);
    begin[axis] = pads[k];
    declared[axis] = std::max<int64_t>({0, pads[k], pads[k + axes.size()]});
  }
  Expr x = ctx.input_tensor(0, declared);
  return elementwise_scope(ctx.output_type().shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> index;
    for (size_t d = 0; d < shape.size(); ++d) index.push_back(expr::sub(i[d], expr::integer(begin[d])));
    return expr::access(x, index);
  });
}

Expr expand_form(const ExprContext& ctx) {
  const Shape& out = ctx.output_type().shape;
  Expr x = ctx.input_tensor(0);
  return elementwise_scope(out, [&](const std::vector<Expr>& i) { return broadcast_access(x, out, i); });
}

// Gather with constant indices that are an affine function of their own
// position: idx[j...] = base + sum_m delta_m * j_m (a scalar, a range with a
// step, a repeated index). Other index patterns would need a select.
Expr gather_form(const ExprContext& ctx) {
  const Shape& shape = ctx.input_type(0).shape;
  const size_t axis = size_t(reference::normalize_axis(ctx.node.attrs.get_int("axis", 0), int64_t(shape.size())));
  const Tensor* indices = ctx.input_constant(1);
  if (!indices) return ctx.fail("runtime indices make the index map data dependent");
  std::vector<int64_t> idx = indices->to_i64_vector();
  const int64_t dim = shape[axis];
  for (int64_t& v : idx) {
    if (v < -dim || v >= dim) ORCHID_FAIL() << ctx.node.describe() << ": index " << v << " is out of range";
    if (v < 0) v += dim;
  }
  const Shape& ishape = indices->shape();
  const std::vector<int64_t> strides = shape_strides(ishape);
  const int64_t base = idx.empty() ? 0 : idx[0];
  std::vector<int64_t> delta(ishape.size(), 0);
  for (size_t m = 0; m < ishape.size(); ++m) {
    if (ishape[m] > 1) delta[m] = idx[size_t(strides[m])] - base;
  }
  for (size_t f = 0; f < idx.size(); ++f) {
    int64_t want = base;
    for (size_t m = 0; m < ishape.size(); ++m) want += delta[m] * ((int64_t(f) / strides[m]) % ishape[m]);
    if (idx[f] != want) return ctx.fail("the constant indices are not an affine function of their position");
  }
  Expr x = ctx.input_tensor(0);
  return elementwise_scope(ctx.output_type().shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> index(i.begin(), i.begin() + int64_t(axis));
    Expr at = expr::integer(base);
    for (size_t m = 0; m < ishape.size(); ++m) at = expr::add(at, expr::mul(i[axis + m], expr::integer(delta[m])));
    index.push_back(at);
    for (size_t d = axis + 1; d < shape.size(); ++d) index.push_back(i[d - 1 + ishape.size()]);
    return expr::access(x, index);
  });
}

}  // namespace

const std::vector<std::pair<const char*, FormBuilder>>& layout_forms() {
  static const std::vector<std::pair<const char*, FormBuilder>> forms = {
      {"Transpose", transpose_form}, {"Reshape", reshape_form}, {"Slice", slice_form},   {"Concat", concat_form},
      {"Pad", pad_form},             {"Expand", expand_form},   {"Gather", gather_form},
  };
  return forms;
}

}  // namespace orchid::fission::primitive_expr_detail
