// Layout operators: Reshape, Transpose, Squeeze, Unsqueeze, Flatten, Concat,
// Split, Slice, Pad, Tile, Expand, DepthToSpace, SpaceToDepth,
// ReverseSequence. All in the newest-opset form (graph.h): Squeeze/Unsqueeze
// axes, Split's split, Slice's starts/ends/axes/steps and Pad's
// pads/constant_value/axes are inputs. Data movement copies element bytes, so
// every dtype is supported.
#include <algorithm>
#include <cstring>
#include <set>

#include "reference/ops/layout_utils.h"
#include "reference/ops/ops.h"
#include "support/error.h"

namespace orchid::reference {
namespace {

// ---------------------------------------------------------------- Reshape
// 0 copies the input's dimension (unless allowzero=1, when it means an empty
// dimension); one -1 is inferred from the element count.
Shape reshape_target(const Shape& in, const std::vector<int64_t>& spec, bool allowzero) {
  Shape out(spec.size());
  int64_t inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == -1) {
      if (inferred >= 0) ORCHID_FAIL() << "shape " << shape_to_string(spec) << " has more than one -1";
      inferred = int64_t(i);
      continue;
    }
    if (d == 0 && !allowzero) {
      if (i >= in.size()) {
        ORCHID_FAIL() << "shape entry " << i << " is 0 (copy) but the input has rank " << in.size();
      }
      d = in[i];
    }
    if (d < 0) ORCHID_FAIL() << "invalid shape entry " << spec[i];
    out[i] = d;
    known *= d;
  }
  int64_t numel = shape_numel(in);
  if (inferred >= 0) {
    if (known == 0 || numel % known != 0) {
      ORCHID_FAIL() << "cannot reshape " << shape_to_string(in) << " to " << shape_to_string(spec);
    }
    out[size_t(inferred)] = numel / known;
  } else if (known != numel) {
    ORCHID_FAIL() << "cannot reshape " << shape_to_string(in) << " (" << numel << " elements) to "
                  << shape_to_string(out);
  }
  return out;
}

std::vector<TensorType> infer_reshape(const InferContext& ctx) {
  require_integer_input(ctx.input(1), 1, "shape");
  const Tensor& shape = ctx.require_value(1, "shape");
  if (shape.rank() != 1) ORCHID_FAIL() << "input 1 (shape) must be 1-D";
  bool allowzero = ctx.attrs().get_int("allowzero", 0) != 0;
  return one(ctx.input(0).dtype, reshape_target(ctx.input(0).shape, shape.to_i64_vector(), allowzero));
}

std::vector<Tensor> eval_reshape_like(const EvalContext& ctx) {
  return {ctx.input(0).reshaped(ctx.output_types[0].shape)};
}

// ---------------------------------------------------------------- Transpose
std::vector<int64_t> transpose_perm(const InferContext& ctx) {
  int64_t rank = int64_t(ctx.input(0).rank());
  std::vector<int64_t> perm = ctx.attrs().get_ints("perm");
  if (!ctx.attrs().has("perm")) {
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (int64_t(perm.size()) != rank) {
    ORCHID_FAIL() << "perm has " << perm.size() << " entries for an input of rank " << rank;
  }
  perm = normalize_axes(perm, rank);
  if (std::set<int64_t>(perm.begin(), perm.end()).size() != perm.size()) {
    ORCHID_FAIL() << "perm " << shape_to_string(perm) << " is not a permutation";
  }
  return perm;
}

std::vector<TensorType> infer_transpose(const InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  Shape out;
  for (int64_t p : transpose_perm(ctx)) out.push_back(in.shape[size_t(p)]);
  return one(in.dtype, out);
}

std::vector<Tensor> eval_transpose(const EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape& out = ctx.output_types[0].shape;
  // Recover perm the same way inference did.
  std::vector<int64_t> perm = ctx.attrs().get_ints("perm");
  if (!ctx.attrs().has("perm")) {
    for (int64_t i = int64_t(x.rank()) - 1; i >= 0; --i) perm.push_back(i);
  }
  perm = normalize_axes(perm, int64_t(x.rank()));
  std::vector<int64_t> in_strides = shape_strides(x.shape());
  return {gather_from(x, ctx.output_types[0], [&](const std::vector<int64_t>& index) {
    int64_t offset = 0;
    for (size_t d = 0; d < out.size(); ++d) offset += index[d] * in_strides[size_t(perm[d])];
    return offset;
  })};
}

// ---------------------------------------------------------------- Squeeze / Unsqueeze / Flatten
std::vector<TensorType> infer_squeeze(const InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  int64_t rank = int64_t(in.rank());
  std::vector<bool> drop(in.rank(), false);
  std::optional<std::vector<int64_t>> axes;
  if (ctx.has_input(1)) {
    require_integer_input(ctx.input(1), 1, "axes");
    axes = ctx.require_value(1, "axes").to_i64_vector();
  }
  if (axes && !axes->empty()) {
    for (int64_t axis : normalize_axes(*axes, rank)) {
      if (in.shape[size_t(axis)] != 1) {
        ORCHID_FAIL() << "cannot squeeze axis " << axis << " of size " << in.shape[size_t(axis)];
      }
      drop[size_t(axis)] = true;
    }
  } else {
    for (size_t i = 0; i < in.rank(); ++i) drop[i] = in.shape[i] == 1;
  }
  Shape out;
  for (size_t i = 0; i < in.rank(); ++i) {
    if (!drop[i]) out.push_back(in.shape[i]);
  }
  return one(in.dtype, out);
}

std::vector<TensorType> infer_unsqueeze(const InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  require_integer_input(ctx.input(1), 1, "axes");
  std::vector<int64_t> axes = ctx.require_value(1, "axes").to_i64_vector();
  int64_t out_rank = int64_t(in.rank() + axes.size());
  std::vector<bool> inserted(size_t(out_rank), false);
  for (int64_t axis : normalize_axes(axes, out_rank)) {
    if (inserted[size_t(axis)]) ORCHID_FAIL() << "axis " << axis << " appears twice in axes";
    inserted[size_t(axis)] = true;
  }
  Shape out;
  size_t next = 0;
  for (size_t i = 0; i < size_t(out_rank); ++i) out.push_back(inserted[i] ? 1 : in.shape[next++]);
  return one(in.dtype, out);
}

std::vector<TensorType> infer_flatten(const InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  int64_t rank = int64_t(in.rank());
  int64_t axis = ctx.attrs().get_int("axis", 1);
  if (axis < -rank || axis > rank) ORCHID_FAIL() << "axis " << axis << " is out of range for rank " << rank;
  if (axis < 0) axis += rank;
  Shape outer(in.shape.begin(), in.shape.begin() + axis);
  Shape inner(in.shape.begin() + axis, in.shape.end());
  return one(in.dtype, {shape_numel(outer), shape_numel(inner)});
}

// ---------------------------------------------------------------- Concat
std::vector<TensorType> infer_concat(const InferContext& ctx) {
  const TensorType& first = ctx.input(0);
  int64_t rank = int64_t(first.rank());
  if (rank == 0) ORCHID_FAIL() << "cannot concatenate scalars";
  int64_t axis = normalize_axis(ctx.attrs().require_int("axis"), rank);
  Shape out = first.shape;
  out[size_t(axis)] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const TensorType& in = ctx.input(i);
    require_same_dtype(first, 0, in, i);
    bool compatible = in.rank() == first.rank();
    for (size_t d = 0; compatible && d < in.rank(); ++d) {
      compatible = int64_t(d) == axis || in.shape[d] == first.shape[d];
    }
    if (!compatible) {
      ORCHID_FAIL() << "input " << i << " has shape " << shape_to_string(in.shape)
                    << ", incompatible with input 0's " << shape_to_string(first.shape)
                    << " for concatenation along axis " << axis;
    }
    out[size_t(axis)] += in.shape[size_t(axis)];
  }
  return one(first.dtype, out);
}

std::vector<Tensor> eval_concat(const EvalContext& ctx) {
  const TensorType& type = ctx.output_types[0];
  int64_t axis = normalize_axis(ctx.attrs().require_int("axis"), int64_t(type.rank()));
  Tensor out(type);
  size_t elem = dtype_size(type.dtype);
  int64_t outer = shape_numel(Shape(type.shape.begin(), type.shape.begin() + axis));
  int64_t inner = shape_numel(Shape(type.shape.begin() + axis + 1, type.shape.end()));
  int64_t out_row = type.shape[size_t(axis)] * inner;  // elements per outer index
  int64_t column = 0;
  for (const Tensor* in : ctx.inputs) {
    int64_t row = in->dim(size_t(axis)) * inner;
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(static_cast<std::byte*>(out.raw()) + size_t(o * out_row + column) * elem,
                  static_cast<const std::byte*>(in->raw()) + size_t(o * row) * elem, size_t(row) * elem);
    }
    column += row;
  }
  return {out};
}

// ---------------------------------------------------------------- Split
// Sizes of the pieces: the split input, or num_outputs (opset 18) / the
// node's output count, in chunks of ceil(dim / n) with a smaller last chunk.
std::vector<int64_t> split_sizes(const Node& node, const Shape& shape, int64_t axis, const Tensor* split) {
  int64_t dim = shape[size_t(axis)];
  if (split && split->numel() > 0) {
    std::vector<int64_t> sizes = split->to_i64_vector();
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0) ORCHID_FAIL() << "negative split size " << s;
      total += s;
    }
    if (total != dim) {
      ORCHID_FAIL() << "split sizes sum to " << total << " but axis " << axis << " has size " << dim;
    }
    return sizes;
  }
  int64_t n = node.attrs.get_int("num_outputs", int64_t(node.outputs.size()));
  if (n <= 0)
    ORCHID_FAIL() << "cannot tell how many outputs to split into (no split, num_outputs or outputs)";
  int64_t chunk = (dim + n - 1) / n;
  std::vector<int64_t> sizes(size_t(n), chunk);
  sizes.back() = dim - chunk * (n - 1);
  if (sizes.back() < 0)
    ORCHID_FAIL() << "cannot split a dimension of size " << dim << " into " << n << " outputs";
  return sizes;
}

std::vector<TensorType> infer_split(const InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  int64_t axis = normalize_axis(ctx.attrs().get_int("axis", 0), int64_t(in.rank()));
  const Tensor* split = nullptr;
  if (ctx.has_input(1)) {
    require_integer_input(ctx.input(1), 1, "split");
    split = &ctx.require_value(1, "split");
  }
  std::vector<TensorType> outs;
  for (int64_t size : split_sizes(ctx.node(), in.shape, axis, split)) {
    Shape shape = in.shape;
    shape[size_t(axis)] = size;
    outs.push_back({in.dtype, shape});
  }
  return outs;
}

std::vector<Tensor> eval_split(const EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t axis = normalize_axis(ctx.attrs().get_int("axis", 0), int64_t(x.rank()));
  std::vector<int64_t> strides = shape_strides(x.shape());
  std::vector<Tensor> outs;
  int64_t start = 0;
  for (const TensorType& type : ctx.output_types) {
    outs.push_back(gather_from(x, type, [&](const std::vector<int64_t>& index) {
      return flat_offset(index, strides) + start * strides[size_t(axis)];
    }));
    start += type.shape[size_t(axis)];
  }
  return outs;
}

// ---------------------------------------------------------------- Slice
struct AxisSlice {
  int64_t start = 0;
  int64_t step = 1;
  int64_t length = 0;
};

// Per-axis start/step/length after the spec's clamping: negative starts and
// ends count from the end; for step > 0 both clamp to [0, dim], for step < 0
// start clamps to [0, dim-1] and end to [-1, dim-1].
std::vector<AxisSlice> slice_params(const Shape& shape, const std::vector<const Tensor*>& inputs) {
  std::vector<int64_t> starts = inputs[1]->to_i64_vector();
  std::vector<int64_t> ends = inputs[2]->to_i64_vector();
  int64_t rank = int64_t(shape.size());
  std::vector<int64_t> axes;
  if (inputs.size() > 3 && inputs[3]) {
    axes = normalize_axes(inputs[3]->to_i64_vector(), rank);
  } else {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  }
  std::vector<int64_t> steps(starts.size(), 1);
  if (inputs.size() > 4 && inputs[4]) steps = inputs[4]->to_i64_vector();
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    ORCHID_FAIL() << "starts, ends, axes and steps must have the same length";
  }
  std::vector<AxisSlice> slices(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) slices[d] = {0, 1, shape[d]};
  std::vector<bool> seen(shape.size(), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    size_t axis = size_t(axes[i]);
    if (axes[i] >= rank) ORCHID_FAIL() << "axis " << axes[i] << " is out of range for rank " << rank;
    if (seen[axis]) ORCHID_FAIL() << "axis " << axis << " is sliced twice";
    seen[axis] = true;
    int64_t dim = shape[axis], step = steps[i], start = starts[i], end = ends[i];
    if (step == 0) ORCHID_FAIL() << "slice step cannot be 0";
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    int64_t length = 0;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      if (end > start) length = (end - start + step - 1) / step;
    } else if (dim > 0) {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      if (start > end) length = (start - end + (-step) - 1) / (-step);
    }
    slices[axis] = {start, step, length};
  }
  return slices;
}

std::vector<TensorType> infer_slice(const InferContext& ctx) {
  std::vector<const Tensor*> values{nullptr};
  const char* names[] = {"data", "starts", "ends", "axes", "steps"};
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) {
      if (i < 3) ctx.input(i);  // errors: starts and ends are required
      values.push_back(nullptr);
      continue;
    }
    require_integer_input(ctx.input(i), i, names[i]);
    values.push_back(&ctx.require_value(i, names[i]));
  }
  if (values.size() < 3) ORCHID_FAIL() << "starts and ends are required";
  Shape out;
  for (const AxisSlice& s : slice_params(ctx.input(0).shape, values)) out.push_back(s.length);
  return one(ctx.input(0).dtype, out);
}

std::vector<Tensor> eval_slice(const EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<AxisSlice> slices = slice_params(x.shape(), ctx.inputs);
  std::vector<int64_t> strides = shape_strides(x.shape());
  return {gather_from(x, ctx.output_types[0], [&](const std::vector<int64_t>& index) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      offset += (slices[d].start + index[d] * slices[d].step) * strides[d];
    }
    return offset;
  })};
}

// ---------------------------------------------------------------- Pad
enum class PadMode { Constant, Reflect, Edge, Wrap };

struct PadParams {
  PadMode mode = PadMode::Constant;
  std::vector<int64_t> begin, end;  // per axis of the input; may be negative (crop)
};

PadParams pad_params(const Attributes& attrs, const Shape& shape, const Tensor& pads_tensor,
                     const Tensor* axes_tensor) {
  PadParams params;
  std::string mode = attrs.get_string("mode", "constant");
  if (mode == "constant")
    params.mode = PadMode::Constant;
  else if (mode == "reflect")
    params.mode = PadMode::Reflect;
  else if (mode == "edge")
    params.mode = PadMode::Edge;
  else if (mode == "wrap")
    params.mode = PadMode::Wrap;
  else
    ORCHID_FAIL() << "unknown pad mode '" << mode << "' (expected constant, reflect, edge or wrap)";
  int64_t rank = int64_t(shape.size());
  std::vector<int64_t> axes;
  if (axes_tensor) {
    axes = normalize_axes(axes_tensor->to_i64_vector(), rank);
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  std::vector<int64_t> pads = pads_tensor.to_i64_vector();
  if (pads.size() != 2 * axes.size()) {
    ORCHID_FAIL() << "pads has " << pads.size() << " entries, expected " << 2 * axes.size();
  }
  params.begin.assign(shape.size(), 0);
  params.end.assign(shape.size(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    params.begin[size_t(axes[i])] = pads[i];
    params.end[size_t(axes[i])] = pads[i + axes.size()];
  }
  return params;
}

std::vector<TensorType> infer_pad(const InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  require_integer_input(ctx.input(1), 1, "pads");
  const Tensor* axes = nullptr;
  if (ctx.has_input(3)) {
    require_integer_input(ctx.input(3), 3, "axes");
    axes = &ctx.require_value(3, "axes");
  }
  // constant_value normally has the data's dtype; the importer's rewrite of
  // opset < 11 Pad passes a float32 scalar, which eval casts.
  if (ctx.has_input(2) && ctx.input(2).numel() > 1) ORCHID_FAIL() << "constant_value must be a scalar";
  PadParams params = pad_params(ctx.attrs(), in.shape, ctx.require_value(1, "pads"), axes);
  Shape out = in.shape;
  for (size_t d = 0; d < out.size(); ++d) {
    out[d] += params.begin[d] + params.end[d];
    if (out[d] < 0) ORCHID_FAIL() << "pads make axis " << d << " negative";
    if (params.mode != PadMode::Constant && (params.begin[d] > 0 || params.end[d] > 0) &&
        in.shape[d] + std::min<int64_t>(params.begin[d], 0) + std::min<int64_t>(params.end[d], 0) <= 0) {
      ORCHID_FAIL() << "cannot pad the empty axis " << d << " in a non-constant mode";
    }
  }
  return one(in.dtype, out);
}

// Source coordinate for output coordinate `o` along one axis, or -1 for the
// constant. Negative pads crop first; the mode then pads the cropped range
// [lo, lo + length) as numpy.pad does (reflect excludes the edge element).
int64_t pad_source(PadMode mode, int64_t o, int64_t dim, int64_t begin, int64_t end) {
  int64_t lo = std::max<int64_t>(0, -begin);
  int64_t length = dim - lo - std::max<int64_t>(0, -end);
  int64_t c = o - std::max<int64_t>(0, begin);
  if (c >= 0 && c < length) return lo + c;
  switch (mode) {
    case PadMode::Constant:
      return -1;
    case PadMode::Edge:
      return lo + std::clamp<int64_t>(c, 0, length - 1);
    case PadMode::Wrap:
      return lo + ((c % length) + length) % length;
    case PadMode::Reflect: {
      if (length == 1) return lo;
      int64_t period = 2 * (length - 1);
      int64_t m = ((c % period) + period) % period;
      return lo + (m < length ? m : period - m);
    }
  }
  return -1;
}

std::vector<Tensor> eval_pad(const EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  PadParams params =
      pad_params(ctx.attrs(), x.shape(), ctx.input(1), ctx.has_input(3) ? ctx.inputs[3] : nullptr);
  Tensor fill_value(x.dtype(), {});  // zero unless constant_value is given
  if (ctx.has_input(2) && ctx.input(2).numel() > 0) fill_value = ctx.input(2).cast(x.dtype());
  std::vector<int64_t> strides = shape_strides(x.shape());
  return {gather_from(
      x, ctx.output_types[0],
      [&](const std::vector<int64_t>& index) {
        int64_t offset = 0;
        for (size_t d = 0; d < index.size(); ++d) {
          int64_t c = pad_source(params.mode, index[d], x.dim(d), params.begin[d], params.end[d]);
          if (c < 0) return int64_t(-1);
          offset += c * strides[d];
        }
        return offset;
      },
      &fill_value)};
}

// ---------------------------------------------------------------- Tile / Expand
std::vector<TensorType> infer_tile(const InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  require_integer_input(ctx.input(1), 1, "repeats");
  std::vector<int64_t> repeats = ctx.require_value(1, "repeats").to_i64_vector();
  if (repeats.size() != in.rank()) {
    ORCHID_FAIL() << "repeats has " << repeats.size() << " entries for an input of rank " << in.rank();
  }
  Shape out = in.shape;
  for (size_t d = 0; d < out.size(); ++d) {
    if (repeats[d] < 0) ORCHID_FAIL() << "negative repeat " << repeats[d];
    out[d] *= repeats[d];
  }
  return one(in.dtype, out);
}

std::vector<Tensor> eval_tile(const EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> strides = shape_strides(x.shape());
  return {gather_from(x, ctx.output_types[0], [&](const std::vector<int64_t>& index) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) offset += (index[d] % x.dim(d)) * strides[d];
    return offset;
  })};
}

std::vector<TensorType> infer_expand(const InferContext& ctx) {
  require_integer_input(ctx.input(1), 1, "shape");
  Shape shape = ctx.require_value(1, "shape").to_i64_vector();
  return one(ctx.input(0).dtype, broadcast_shapes(ctx.input(0).shape, shape));
}

std::vector<Tensor> eval_expand(const EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  const TensorType& type = ctx.output_types[0];
  BroadcastIndexer indexer(x.shape(), type.shape);
  Tensor out(type);
  for (int64_t i = 0; i < out.numel(); ++i) copy_element(out, i, x, indexer(i));
  return {out};
}

// ---------------------------------------------------------------- DepthToSpace / SpaceToDepth
int64_t blocksize_of(const InferContext& ctx) {
  if (ctx.input(0).rank() != 4) ORCHID_FAIL() << "expected a 4-D input, got rank " << ctx.input(0).rank();
  int64_t b = ctx.attrs().require_int("blocksize");
  if (b <= 0) ORCHID_FAIL() << "blocksize must be positive, got " << b;
  return b;
}

std::vector<TensorType> infer_depth_to_space(const InferContext& ctx) {
  int64_t b = blocksize_of(ctx);
  std::string mode = ctx.attrs().get_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") ORCHID_FAIL() << "unknown mode '" << mode << "' (expected DCR or CRD)";
  const Shape& s = ctx.input(0).shape;
  if (s[1] % (b * b) != 0) ORCHID_FAIL() << "channels " << s[1] << " are not divisible by blocksize^2";
  return one(ctx.input(0).dtype, {s[0], s[1] / (b * b), s[2] * b, s[3] * b});
}

// DCR: input channel (i * b + j) * C_out + c; CRD: c * b * b + i * b + j, for
// output (n, c, h * b + i, w * b + j).
std::vector<Tensor> eval_depth_to_space(const EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t b = ctx.attrs().require_int("blocksize");
  bool dcr = ctx.attrs().get_string("mode", "DCR") == "DCR";
  int64_t c_out = ctx.output_types[0].shape[1];
  std::vector<int64_t> strides = shape_strides(x.shape());
  return {gather_from(x, ctx.output_types[0], [&](const std::vector<int64_t>& o) {
    int64_t i = o[2] % b, j = o[3] % b;
    int64_t c = dcr ? (i * b + j) * c_out + o[1] : o[1] * b * b + i * b + j;
    return flat_offset({o[0], c, o[2] / b, o[3] / b}, strides);
  })};
}

std::vector<TensorType> infer_space_to_depth(const InferContext& ctx) {
  int64_t b = blocksize_of(ctx);
  std::string mode = ctx.attrs().get_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") ORCHID_FAIL() << "unknown mode '" << mode << "' (expected DCR or CRD)";
  const Shape& s = ctx.input(0).shape;
  if (s[2] % b != 0 || s[3] % b != 0) {
    ORCHID_FAIL() << "spatial size " << s[2] << "x" << s[3] << " is not divisible by blocksize " << b;
  }
  return one(ctx.input(0).dtype, {s[0], s[1] * b * b, s[2] / b, s[3] / b});
}

// Output channel (i * b + j) * C + c (DCR, the default) or c * b * b + i * b + j
// (CRD, a later opset's attribute) holds input (n, c, h * b + i, w * b + j).
std::vector<Tensor> eval_space_to_depth(const EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t b = ctx.attrs().require_int("blocksize");
  bool dcr = ctx.attrs().get_string("mode", "DCR") == "DCR";
  int64_t c_in = x.dim(1);
  std::vector<int64_t> strides = shape_strides(x.shape());
  return {gather_from(x, ctx.output_types[0], [&](const std::vector<int64_t>& o) {
    int64_t block = dcr ? o[1] / c_in : o[1] % (b * b);
    int64_t c = dcr ? o[1] % c_in : o[1] / (b * b);
    return flat_offset({o[0], c, o[2] * b + block / b, o[3] * b + block % b}, strides);
  })};
}

// ---------------------------------------------------------------- ReverseSequence
std::vector<TensorType> infer_reverse_sequence(const InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  if (in.rank() < 2) ORCHID_FAIL() << "expected an input of rank >= 2, got " << in.rank();
  require_integer_input(ctx.input(1), 1, "sequence_lens");
  int64_t batch_axis = ctx.attrs().get_int("batch_axis", 1);
  int64_t time_axis = ctx.attrs().get_int("time_axis", 0);
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0))) {
    ORCHID_FAIL() << "batch_axis and time_axis must be 0 and 1 in some order";
  }
  if (ctx.input(1).shape != Shape{in.shape[size_t(batch_axis)]}) {
    ORCHID_FAIL() << "sequence_lens must have shape [" << in.shape[size_t(batch_axis)] << "]";
  }
  return one(in.dtype, in.shape);
}

std::vector<Tensor> eval_reverse_sequence(const EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> lens = ctx.input(1).to_i64_vector();
  size_t batch_axis = size_t(ctx.attrs().get_int("batch_axis", 1));
  size_t time_axis = size_t(ctx.attrs().get_int("time_axis", 0));
  std::vector<int64_t> strides = shape_strides(x.shape());
  return {gather_from(x, ctx.output_types[0], [&](const std::vector<int64_t>& index) {
    int64_t len = std::clamp<int64_t>(lens[size_t(index[batch_axis])], 0, x.dim(time_axis));
    std::vector<int64_t> src = index;
    if (src[time_axis] < len) src[time_axis] = len - 1 - src[time_axis];
    return flat_offset(src, strides);
  })};
}

}  // namespace

void register_layout_ops(OpRegistry& registry) {
  registry.add({"Reshape", "", infer_reshape, eval_reshape_like, 2, 2});
  registry.add({"Transpose", "", infer_transpose, eval_transpose, 1, 1});
  registry.add({"Squeeze", "", infer_squeeze, eval_reshape_like, 1, 2});
  registry.add({"Unsqueeze", "", infer_unsqueeze, eval_reshape_like, 2, 2});
  registry.add({"Flatten", "", infer_flatten, eval_reshape_like, 1, 1});
  registry.add({"Concat", "", infer_concat, eval_concat, 1, SIZE_MAX});
  registry.add({"Split", "", infer_split, eval_split, 1, 2});
  registry.add({"Slice", "", infer_slice, eval_slice, 3, 5});
  registry.add({"Pad", "", infer_pad, eval_pad, 2, 4});
  registry.add({"Tile", "", infer_tile, eval_tile, 2, 2});
  registry.add({"Expand", "", infer_expand, eval_expand, 2, 2});
  registry.add({"DepthToSpace", "", infer_depth_to_space, eval_depth_to_space, 1, 1});
  registry.add({"SpaceToDepth", "", infer_space_to_depth, eval_space_to_depth, 1, 1});
  registry.add({"ReverseSequence", "", infer_reverse_sequence, eval_reverse_sequence, 2, 2});
}

}  // namespace orchid::reference
