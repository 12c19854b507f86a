// Indexing operators: Gather, GatherElements, GatherND, ScatterElements,
// ScatterND, Scatter (deprecated opset 9/10 form of ScatterElements), OneHot,
// NonZero, Trilu, Compress, Unique. Negative indices count from the end of
// their axis; out-of-range indices are user errors.
//
// NonZero, Compress and Unique have output shapes that depend on input data:
// inference needs those inputs' values (require_data_value) and otherwise
// reports that Orchid cannot compile the node statically.
#include <algorithm>
#include <map>
#include <numeric>
#include <type_traits>

#include "reference/ops/layout_utils.h"
#include "reference/ops/ops.h"
#include "support/error.h"

namespace orchid::reference {
namespace {

// ---------------------------------------------------------------- Gather
std::vector<TensorType> infer_gather(const InferContext& ctx) {
  const TensorType& data = ctx.input(0);
  const TensorType& indices = ctx.input(1);
  require_index_input(indices, 1, "indices");
  int64_t axis = normalize_axis(ctx.attrs().get_int("axis", 0), int64_t(data.rank()));
  if (data.rank() == 0) ORCHID_FAIL() << "cannot gather from a scalar";
  Shape out(data.shape.begin(), data.shape.begin() + axis);
  out.insert(out.end(), indices.shape.begin(), indices.shape.end());
  out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
  return one(data.dtype, out);
}

// out[a..., i..., b...] = data[a..., indices[i...], b...]
std::vector<Tensor> eval_gather(const EvalContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  size_t axis = size_t(normalize_axis(ctx.attrs().get_int("axis", 0), int64_t(data.rank())));
  size_t q = indices.rank();
  std::vector<int64_t> data_strides = shape_strides(data.shape());
  std::vector<int64_t> index_strides = shape_strides(indices.shape());
  return {gather_from(data, ctx.output_types[0], [&](const std::vector<int64_t>& o) {
    int64_t offset = 0;
    for (size_t d = 0; d < axis; ++d) offset += o[d] * data_strides[d];
    int64_t i = 0;
    for (size_t d = 0; d < q; ++d) i += o[axis + d] * index_strides[d];
    offset += normalize_index(indices.at_i64(i), data.dim(axis), "index") * data_strides[axis];
    for (size_t d = axis + 1; d < data.rank(); ++d) offset += o[d + q - 1] * data_strides[d];
    return offset;
  })};
}

// ---------------------------------------------------------------- GatherElements
std::vector<TensorType> infer_gather_elements(const InferContext& ctx) {
  const TensorType& data = ctx.input(0);
  const TensorType& indices = ctx.input(1);
  require_index_input(indices, 1, "indices");
  normalize_axis(ctx.attrs().get_int("axis", 0), int64_t(data.rank()));
  if (indices.rank() != data.rank()) {
    ORCHID_FAIL() << "indices must have the rank of data (" << data.rank() << "), got " << indices.rank();
  }
  return one(data.dtype, indices.shape);
}

// out[i] = data[i with i[axis] replaced by indices[i]]
std::vector<Tensor> eval_gather_elements(const EvalContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  size_t axis = size_t(normalize_axis(ctx.attrs().get_int("axis", 0), int64_t(data.rank())));
  std::vector<int64_t> strides = shape_strides(data.shape());
  int64_t flat = 0;
  return {gather_from(data, ctx.output_types[0], [&](const std::vector<int64_t>& o) {
    std::vector<int64_t> src = o;
    src[axis] = normalize_index(indices.at_i64(flat++), data.dim(axis), "index");
    return flat_offset(src, strides);
  })};
}

// ---------------------------------------------------------------- GatherND
// indices[..., k] addresses data's axes batch_dims .. batch_dims+k-1 within the
// batch given by the leading batch_dims axes (shared by data and indices).
std::vector<TensorType> infer_gather_nd(const InferContext& ctx) {
  const TensorType& data = ctx.input(0);
  const TensorType& indices = ctx.input(1);
  require_index_input(indices, 1, "indices");
  int64_t b = ctx.attrs().get_int("batch_dims", 0);
  int64_t r = int64_t(data.rank()), q = int64_t(indices.rank());
  if (q < 1 || b < 0 || b >= std::min(r, q)) ORCHID_FAIL() << "invalid batch_dims " << b;
  int64_t k = indices.shape.back();
  if (k < 1 || k > r - b)
    ORCHID_FAIL() << "indices' last dimension " << k << " must be in [1, " << r - b << "]";
  for (int64_t d = 0; d < b; ++d) {
    if (data.shape[size_t(d)] != indices.shape[size_t(d)]) {
      ORCHID_FAIL() << "batch dimension " << d << " differs between data and indices";
    }
  }
  Shape out(indices.shape.begin(), indices.shape.end() - 1);
  out.insert(out.end(), data.shape.begin() + b + k, data.shape.end());
  return one(data.dtype, out);
}

std::vector<Tensor> eval_gather_nd(const EvalContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  size_t b = size_t(ctx.attrs().get_int("batch_dims", 0));
  size_t q = indices.rank();
  size_t k = size_t(indices.shape().back());
  std::vector<int64_t> data_strides = shape_strides(data.shape());
  std::vector<int64_t> index_strides = shape_strides(indices.shape());
  return {gather_from(data, ctx.output_types[0], [&](const std::vector<int64_t>& o) {
    int64_t offset = 0;
    for (size_t d = 0; d < b; ++d) offset += o[d] * data_strides[d];
    int64_t tuple = 0;  // flat offset of indices[o[0..q-1), 0]
    for (size_t d = 0; d + 1 < q; ++d) tuple += o[d] * index_strides[d];
    for (size_t j = 0; j < k; ++j) {
      int64_t i = normalize_index(indices.at_i64(tuple + int64_t(j)), data.dim(b + j), "index");
      offset += i * data_strides[b + j];
    }
    for (size_t d = b + k; d < data.rank(); ++d) offset += o[q - 1 + d - b - k] * data_strides[d];
    return offset;
  })};
}

// ---------------------------------------------------------------- ScatterElements / Scatter
std::vector<TensorType> infer_scatter_elements(const InferContext& ctx) {
  const TensorType& data = ctx.input(0);
  const TensorType& indices = ctx.input(1);
  const TensorType& updates = ctx.input(2);
  require_index_input(indices, 1, "indices");
  require_same_dtype(data, 0, updates, 2);
  normalize_axis(ctx.attrs().get_int("axis", 0), int64_t(data.rank()));
  parse_scatter_reduction(ctx.attrs().get_string("reduction", "none"));
  if (indices.shape != updates.shape) ORCHID_FAIL() << "indices and updates must have the same shape";
  if (indices.rank() != data.rank()) ORCHID_FAIL() << "indices must have the rank of data";
  return one(data.dtype, data.shape);
}

// out = data; out[i with i[axis] = indices[i]] = reduce(out[...], updates[i]),
// in row-major order of i.
std::vector<Tensor> eval_scatter_elements(const EvalContext& ctx, ScatterReduction reduction) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  size_t axis = size_t(normalize_axis(ctx.attrs().get_int("axis", 0), int64_t(data.rank())));
  std::vector<int64_t> strides = shape_strides(data.shape());
  Tensor out = data.clone();
  int64_t flat = 0;
  for_each_index(indices.shape(), [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> dst = i;
    dst[axis] = normalize_index(indices.at_i64(flat), data.dim(axis), "index");
    scatter_element(out, flat_offset(dst, strides), updates, flat, reduction);
    ++flat;
  });
  return {out};
}

// ---------------------------------------------------------------- ScatterND
std::vector<TensorType> infer_scatter_nd(const InferContext& ctx) {
  const TensorType& data = ctx.input(0);
  const TensorType& indices = ctx.input(1);
  const TensorType& updates = ctx.input(2);
  require_integer_input(indices, 1, "indices");
  require_same_dtype(data, 0, updates, 2);
  parse_scatter_reduction(ctx.attrs().get_string("reduction", "none"));
  if (indices.rank() < 1) ORCHID_FAIL() << "indices must have rank >= 1";
  int64_t k = indices.shape.back();
  if (k < 1 || k > int64_t(data.rank()))
    ORCHID_FAIL() << "indices' last dimension " << k << " exceeds data's rank";
  Shape expected(indices.shape.begin(), indices.shape.end() - 1);
  expected.insert(expected.end(), data.shape.begin() + k, data.shape.end());
  if (updates.shape != expected) {
    ORCHID_FAIL() << "updates must have shape " << shape_to_string(expected) << ", got "
                  << shape_to_string(updates.shape);
  }
  return one(data.dtype, data.shape);
}

std::vector<Tensor> eval_scatter_nd(const EvalContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  ScatterReduction reduction = parse_scatter_reduction(ctx.attrs().get_string("reduction", "none"));
  int64_t k = indices.shape().back();
  int64_t tuples = indices.numel() / std::max<int64_t>(k, 1);
  std::vector<int64_t> strides = shape_strides(data.shape());
  int64_t slice = shape_numel(Shape(data.shape().begin() + k, data.shape().end()));
  Tensor out = data.clone();
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t base = 0;
    for (int64_t j = 0; j < k; ++j) {
      base += normalize_index(indices.at_i64(t * k + j), data.dim(size_t(j)), "index") * strides[size_t(j)];
    }
    for (int64_t e = 0; e < slice; ++e) scatter_element(out, base + e, updates, t * slice + e, reduction);
  }
  return {out};
}

// ---------------------------------------------------------------- OneHot
// depth: scalar (any numeric type); values: [off, on], whose dtype is the
// output's. Indices outside [-depth, depth) give an all-off row.
std::vector<TensorType> infer_one_hot(const InferContext& ctx) {
  const TensorType& indices = ctx.input(0);
  const Tensor& depth_value = ctx.require_value(1, "depth");
  const TensorType& values = ctx.input(2);
  if (depth_value.numel() != 1) ORCHID_FAIL() << "depth must hold one value";
  if (values.numel() != 2) ORCHID_FAIL() << "values must hold [off_value, on_value]";
  if (indices.dtype == DType::Bool) ORCHID_FAIL() << "expected a numeric tensor for input 0 (indices)";
  int64_t depth = depth_value.at_i64(0);
  if (depth < 1) ORCHID_FAIL() << "depth must be positive, got " << depth;
  int64_t rank = int64_t(indices.rank()) + 1;
  int64_t axis = normalize_axis(ctx.attrs().get_int("axis", -1), rank);
  Shape out = indices.shape;
  out.insert(out.begin() + axis, depth);
  return one(values.dtype, out);
}

std::vector<Tensor> eval_one_hot(const EvalContext& ctx) {
  const Tensor& indices = ctx.input(0);
  const Tensor& values = ctx.input(2);
  const TensorType& type = ctx.output_types[0];
  size_t axis = size_t(normalize_axis(ctx.attrs().get_int("axis", -1), int64_t(type.rank())));
  int64_t depth = type.shape[axis];
  std::vector<int64_t> index_strides = shape_strides(indices.shape());
  Tensor out(type);
  int64_t flat = 0;
  for_each_index(type.shape, [&](const std::vector<int64_t>& o) {
    int64_t i = 0;
    for (size_t d = 0, e = 0; d < o.size(); ++d) {
      if (d != axis) i += o[d] * index_strides[e++];
    }
    int64_t index = int64_t(indices.at_f64(i));  // float indices truncate, as a cast would
    if (index < 0) index += depth;
    copy_element(out, flat++, values, index == o[axis] ? 1 : 0);
  });
  return {out};
}

// ---------------------------------------------------------------- NonZero
std::vector<int64_t> nonzero_flat(const Tensor& x) {
  std::vector<int64_t> flat;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (x.at_f64(i) != 0) flat.push_back(i);
  }
  return flat;
}

std::vector<TensorType> infer_nonzero(const InferContext& ctx) {
  const Tensor& x = require_data_value(ctx, 0, "X");
  return one(DType::Int64, {int64_t(x.rank()), int64_t(nonzero_flat(x).size())});
}

// Output [rank, count]: column j holds the coordinates of the j-th nonzero
// element in row-major order.
std::vector<Tensor> eval_nonzero(const EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> flat = nonzero_flat(x);
  std::vector<int64_t> strides = shape_strides(x.shape());
  Tensor out(ctx.output_types[0]);
  int64_t count = int64_t(flat.size());
  for (int64_t j = 0; j < count; ++j) {
    int64_t rest = flat[size_t(j)];
    for (size_t d = 0; d < x.rank(); ++d) {
      out.data<int64_t>()[int64_t(d) * count + j] = rest / strides[d];
      rest %= strides[d];
    }
  }
  return {out};
}

// ---------------------------------------------------------------- Trilu
std::vector<TensorType> infer_trilu(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (x.rank() < 2) ORCHID_FAIL() << "expected an input of rank >= 2, got " << x.rank();
  if (ctx.has_input(1)) {
    require_integer_input(ctx.input(1), 1, "k");
    if (ctx.input(1).numel() != 1) ORCHID_FAIL() << "k must hold one value";
  }
  return one(x.dtype, x.shape);
}

// Keeps element (i, j) of each trailing matrix when j - i >= k (upper=1) or
// j - i <= k (upper=0); zeroes the rest.
std::vector<Tensor> eval_trilu(const EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t k = ctx.has_input(1) ? ctx.input(1).at_i64(0) : 0;
  bool upper = ctx.attrs().get_int("upper", 1) != 0;
  size_t r = x.rank();
  int64_t flat = 0;
  return {gather_from(x, ctx.output_types[0], [&](const std::vector<int64_t>& o) {
    int64_t diagonal = o[r - 1] - o[r - 2];
    bool keep = upper ? diagonal >= k : diagonal <= k;
    int64_t offset = flat++;
    return keep ? offset : int64_t(-1);
  })};
}

// ---------------------------------------------------------------- Compress
// Selects the slices along `axis` (or the elements of the flattened input when
// axis is absent) whose condition entry is true. The condition may be shorter
// than the axis.
std::vector<int64_t> compress_selection(const Tensor& condition, int64_t dim) {
  std::vector<int64_t> selected;
  for (int64_t i = 0; i < condition.numel(); ++i) {
    if (condition.at_f64(i) == 0) continue;
    if (i >= dim) ORCHID_FAIL() << "condition selects index " << i << " beyond the axis size " << dim;
    selected.push_back(i);
  }
  return selected;
}

std::vector<TensorType> infer_compress(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (ctx.input(1).dtype != DType::Bool || ctx.input(1).rank() != 1) {
    ORCHID_FAIL() << "input 1 (condition) must be a 1-D bool tensor";
  }
  const Tensor& condition = require_data_value(ctx, 1, "condition");
  if (!ctx.attrs().has("axis")) {
    return one(x.dtype, {int64_t(compress_selection(condition, x.numel()).size())});
  }
  int64_t axis = normalize_axis(ctx.attrs().get_int("axis", 0), int64_t(x.rank()));
  Shape out = x.shape;
  out[size_t(axis)] = int64_t(compress_selection(condition, x.shape[size_t(axis)]).size());
  return one(x.dtype, out);
}

std::vector<Tensor> eval_compress(const EvalContext& ctx) {
  Tensor x = ctx.input(0);
  int64_t axis = 0;
  if (ctx.attrs().has("axis")) {
    axis = normalize_axis(ctx.attrs().get_int("axis", 0), int64_t(x.rank()));
  } else {
    x = x.reshaped({x.numel()});
  }
  std::vector<int64_t> selected = compress_selection(ctx.input(1), x.dim(size_t(axis)));
  std::vector<int64_t> strides = shape_strides(x.shape());
  return {gather_from(x, ctx.output_types[0], [&](const std::vector<int64_t>& o) {
    std::vector<int64_t> src = o;
    src[size_t(axis)] = selected[size_t(o[size_t(axis)])];
    return flat_offset(src, strides);
  })};
}

// ---------------------------------------------------------------- Unique
// Outputs Y (the unique elements or slices along axis), indices (first
// occurrence of each in X), inverse_indices (for each element/slice of X, its
// position in Y) and counts. sorted=1 (default) orders Y ascending
// (lexicographically for slices); sorted=0 keeps first-occurrence order.
struct UniqueResult {
  Tensor x;  // the input, viewed as [outer, dim, inner] with dim the unique axis
  int64_t outer = 1, dim = 0, inner = 1;
  std::vector<int64_t> first;    // per unique slice: its first index along dim
  std::vector<int64_t> inverse;  // per input slice: its unique slice's position
  std::vector<int64_t> counts;
};

// -1, 0, 1 comparing slices a and b of x (each outer x inner elements).
int compare_slices(const UniqueResult& u, int64_t a, int64_t b) {
  int result = 0;
  ORCHID_DISPATCH(u.x.dtype(), T, {
    using Key = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;
    const T* data = u.x.data<T>();
    for (int64_t o = 0; o < u.outer && result == 0; ++o) {
      for (int64_t i = 0; i < u.inner && result == 0; ++i) {
        Key va = Key(data[(o * u.dim + a) * u.inner + i]);
        Key vb = Key(data[(o * u.dim + b) * u.inner + i]);
        if (va < vb)
          result = -1;
        else if (vb < va)
          result = 1;
      }
    }
  });
  return result;
}

UniqueResult compute_unique(const Tensor& input, const Attributes& attrs) {
  UniqueResult u;
  u.x = input;
  if (attrs.has("axis")) {
    size_t axis = size_t(normalize_axis(attrs.get_int("axis", 0), int64_t(input.rank())));
    u.outer = shape_numel(Shape(input.shape().begin(), input.shape().begin() + int64_t(axis)));
    u.dim = input.dim(axis);
    u.inner = shape_numel(Shape(input.shape().begin() + int64_t(axis) + 1, input.shape().end()));
  } else {
    u.dim = input.numel();
  }
  std::vector<int64_t> order(size_t(u.dim));
  std::iota(order.begin(), order.end(), 0);
  bool sorted = attrs.get_int("sorted", 1) != 0;
  // Stable: equal slices stay in index order, so the first of a run is the first occurrence.
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return compare_slices(u, a, b) < 0; });
  std::vector<int64_t> group_of(size_t(u.dim));
  std::vector<int64_t> group_first;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || compare_slices(u, order[i - 1], order[i]) != 0) group_first.push_back(order[i]);
    group_of[size_t(order[i])] = int64_t(group_first.size()) - 1;
  }
  // Position of each group in Y: sorted order, or by first occurrence.
  std::vector<int64_t> groups(group_first.size());
  std::iota(groups.begin(), groups.end(), 0);
  if (!sorted) {
    std::sort(groups.begin(), groups.end(),
              [&](int64_t a, int64_t b) { return group_first[size_t(a)] < group_first[size_t(b)]; });
  }
  std::vector<int64_t> position(groups.size());
  for (size_t p = 0; p < groups.size(); ++p) position[size_t(groups[p])] = int64_t(p);
  u.counts.assign(groups.size(), 0);
  for (int64_t g : groups) u.first.push_back(group_first[size_t(g)]);
  for (int64_t i = 0; i < u.dim; ++i) {
    int64_t p = position[size_t(group_of[size_t(i)])];
    u.inverse.push_back(p);
    ++u.counts[size_t(p)];
  }
  return u;
}

std::vector<TensorType> infer_unique(const InferContext& ctx) {
  const Tensor& x = require_data_value(ctx, 0, "X");
  UniqueResult u = compute_unique(x, ctx.attrs());
  int64_t n = int64_t(u.first.size());
  Shape y = {n};
  if (ctx.attrs().has("axis")) {
    y = x.shape();
    y[size_t(normalize_axis(ctx.attrs().get_int("axis", 0), int64_t(x.rank())))] = n;
  }
  return {{x.dtype(), y}, {DType::Int64, {n}}, {DType::Int64, {u.dim}}, {DType::Int64, {n}}};
}

std::vector<Tensor> eval_unique(const EvalContext& ctx) {
  UniqueResult u = compute_unique(ctx.input(0), ctx.attrs());
  int64_t n = int64_t(u.first.size());
  Tensor y(ctx.output_types[0]);
  for (int64_t o = 0; o < u.outer; ++o) {
    for (int64_t p = 0; p < n; ++p) {
      for (int64_t i = 0; i < u.inner; ++i) {
        copy_element(y, (o * n + p) * u.inner + i, u.x, (o * u.dim + u.first[size_t(p)]) * u.inner + i);
      }
    }
  }
  return {y, Tensor::vector_i64(u.first), Tensor::vector_i64(u.inverse), Tensor::vector_i64(u.counts)};
}

}  // namespace

void register_index_ops(OpRegistry& registry) {
  registry.add({"Gather", "", infer_gather, eval_gather, 2, 2});
  registry.add({"GatherElements", "", infer_gather_elements, eval_gather_elements, 2, 2});
  registry.add({"GatherND", "", infer_gather_nd, eval_gather_nd, 2, 2});
  registry.add({"ScatterElements", "", infer_scatter_elements,
                [](const EvalContext& ctx) {
                  return eval_scatter_elements(
                      ctx, parse_scatter_reduction(ctx.attrs().get_string("reduction", "none")));
                },
                3, 3});
  // Scatter (opsets 9-10, deprecated): ScatterElements without reduction.
  registry.add({"Scatter", "", infer_scatter_elements,
                [](const EvalContext& ctx) { return eval_scatter_elements(ctx, ScatterReduction::None); }, 3,
                3});
  registry.add({"ScatterND", "", infer_scatter_nd, eval_scatter_nd, 3, 3});
  registry.add({"OneHot", "", infer_one_hot, eval_one_hot, 3, 3});
  registry.add({"NonZero", "", infer_nonzero, eval_nonzero, 1, 1});
  registry.add({"Trilu", "", infer_trilu, eval_trilu, 1, 2});
  registry.add({"Compress", "", infer_compress, eval_compress, 2, 2});
  registry.add({"Unique", "", infer_unique, eval_unique, 1, 1});
}

}  // namespace orchid::reference
