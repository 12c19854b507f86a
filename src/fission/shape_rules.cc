// Fission rules for shape and data-movement operators. Each one becomes
// layout primitives (Reshape, Transpose, Slice, Expand, Gather with constant
// indices) or, for masks (Trilu, OneHot, Dropout's mask), elementwise
// primitives over constants; nothing here does arithmetic on data.
#include <algorithm>

#include "fission/rules.h"
#include "reference/op_registry.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using Outputs = std::vector<ValueId>;

bool has_input(const Node& node, size_t i) { return i < node.inputs.size() && node.inputs[i] != kNoValue; }
bool output_used(const Node& node, size_t i) { return i < node.outputs.size() && node.outputs[i] != kNoValue; }

// The node's output types, from the reference shape inference (the oracle
// the driver compares against).
std::vector<TensorType> output_types(const Node& node, const FissionBuilder& b) {
  std::vector<TensorType> storage;
  storage.reserve(node.inputs.size());
  std::vector<const TensorType*> types;
  std::vector<const Tensor*> values;
  for (ValueId id : node.inputs) {
    if (id != kNoValue) storage.push_back(b.type(id));
    types.push_back(id == kNoValue ? nullptr : &storage.back());
    values.push_back(id == kNoValue ? nullptr : b.constant_value(id));
  }
  return reference::infer_node(node, types, values);
}

// A shape-deciding input; shape inference has already required it constant.
std::vector<int64_t> constant_ints(const Node& node, const FissionBuilder& b, size_t i) {
  const Tensor* value = b.constant_value(node.inputs[i]);
  ORCHID_CHECK(value) << node.describe() << ": input " << i << " must be a constant";
  return value->to_i64_vector();
}

int64_t normalize_axis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

// A runtime or constant tensor of one element as a rank-0 value of `dtype`.
ValueId as_scalar(FissionBuilder& b, ValueId x, DType dtype) { return b.reshape(b.cast(x, dtype), {}); }

// ---------------------------------------------------------------- pure reshapes

// Identity, Squeeze, Unsqueeze and Flatten only relabel the shape.
Outputs reshape_to_output(const Node& node, FissionBuilder& b) {
  return {b.reshape(node.inputs[0], output_types(node, b)[0].shape)};
}

Outputs identity_rule(const Node& node, FissionBuilder&) { return {node.inputs[0]}; }

// Inference: output 0 is the input; the mask is all true. Training mode was
// rejected by shape inference when it is a constant.
Outputs dropout_rule(const Node& node, FissionBuilder& b) {
  Outputs outs = {node.inputs[0], kNoValue};
  if (output_used(node, 1)) {
    Tensor mask(DType::Bool, b.shape(node.inputs[0]));
    std::fill_n(mask.data<bool>(), mask.numel(), true);
    outs[1] = b.constant(std::move(mask));
  }
  return outs;
}

Outputs cast_like_rule(const Node& node, FissionBuilder& b) {
  return {b.cast(node.inputs[0], b.dtype(node.inputs[1]))};
}

// ---------------------------------------------------------------- Split, Tile

Outputs split_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  int64_t axis = normalize_axis(node.attrs.get_int("axis", 0), int64_t(b.rank(x)));
  std::vector<TensorType> types = output_types(node, b);
  Outputs outs(node.outputs.size(), kNoValue);
  int64_t start = 0;
  for (size_t i = 0; i < types.size() && i < outs.size(); ++i) {
    int64_t size = types[i].shape[size_t(axis)];
    if (output_used(node, i)) outs[i] = b.slice(x, {start}, {start + size}, {axis});
    start += size;
  }
  return outs;
}

// Tile(x, r): x of shape [..., d, ...] viewed as [..., 1, d, ...], expanded to
// [..., r, d, ...] and flattened to [..., r * d, ...]. Axes with r = 1 get no
// new axis; axes with d = 1 expand in place.
Outputs tile_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  Shape shape = b.shape(x);  // a copy: adding values may move the graph's storage
  std::vector<int64_t> repeats = constant_ints(node, b, 1);
  Shape viewed, expanded, out;
  for (size_t d = 0; d < shape.size(); ++d) {
    out.push_back(shape[d] * repeats[d]);
    if (repeats[d] != 1 && shape[d] != 1) {
      viewed.push_back(1);
      expanded.push_back(repeats[d]);
    }
    viewed.push_back(shape[d]);
    expanded.push_back(shape[d] == 1 ? repeats[d] : shape[d]);
  }
  if (viewed == expanded) return {b.reshape(x, out)};
  ValueId wide = b.add1("Expand", {b.reshape(x, viewed), b.ints(expanded)});
  return {b.reshape(wide, out)};
}

// ---------------------------------------------------------------- DepthToSpace, SpaceToDepth

// DCR: channel (i * b + j) * C' + c goes to (c, h * b + i, w * b + j); CRD:
// channel c * b * b + i * b + j does.
Outputs depth_to_space_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  Shape s = b.shape(x);  // a copy: adding values may move the graph's storage
  int64_t k = node.attrs.require_int("blocksize");
  int64_t c = s[1] / (k * k);
  bool dcr = node.attrs.get_string("mode", "DCR") == "DCR";
  ValueId split = dcr ? b.reshape(x, {s[0], k, k, c, s[2], s[3]}) : b.reshape(x, {s[0], c, k, k, s[2], s[3]});
  // To [n, c, h, i, w, j].
  ValueId moved = dcr ? b.transpose(split, {0, 3, 4, 1, 5, 2}) : b.transpose(split, {0, 1, 4, 2, 5, 3});
  return {b.reshape(moved, {s[0], c, s[2] * k, s[3] * k})};
}

// The inverse: input (c, h * b + i, w * b + j) goes to channel (i * b + j) * C
// + c (DCR) or c * b * b + i * b + j (CRD).
Outputs space_to_depth_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  Shape s = b.shape(x);  // a copy: adding values may move the graph's storage
  int64_t k = node.attrs.require_int("blocksize");
  bool dcr = node.attrs.get_string("mode", "DCR") == "DCR";
  ValueId split = b.reshape(x, {s[0], s[1], s[2] / k, k, s[3] / k, k});  // [n, c, h, i, w, j]
  ValueId moved = dcr ? b.transpose(split, {0, 3, 5, 1, 2, 4}) : b.transpose(split, {0, 1, 3, 5, 2, 4});
  return {b.reshape(moved, {s[0], s[1] * k * k, s[2] / k, s[3] / k})};
}

// ---------------------------------------------------------------- Pad

// Source coordinate of output coordinate `o` along one axis (as numpy.pad,
// after negative pads crop): edge clamps, wrap is periodic, reflect mirrors
// without repeating the edge element. -1 for the constant.
int64_t pad_source(const std::string& mode, int64_t o, int64_t dim, int64_t begin, int64_t end) {
  int64_t lo = std::max<int64_t>(0, -begin);
  int64_t length = dim - lo - std::max<int64_t>(0, -end);
  int64_t c = o - std::max<int64_t>(0, begin);
  if (c >= 0 && c < length) return lo + c;
  if (mode == "edge") return lo + std::clamp<int64_t>(c, 0, length - 1);
  if (mode == "wrap") return lo + ((c % length) + length) % length;
  if (mode == "reflect") {
    if (length == 1) return lo;
    int64_t period = 2 * (length - 1);
    int64_t m = ((c % period) + period) % period;
    return lo + (m < length ? m : period - m);
  }
  return -1;
}

// Per input axis: the (begin, end) pads.
std::vector<std::pair<int64_t, int64_t>> pad_amounts(const Node& node, const FissionBuilder& b) {
  int64_t rank = int64_t(b.rank(node.inputs[0]));
  std::vector<int64_t> pads = constant_ints(node, b, 1);
  std::vector<int64_t> axes;
  if (has_input(node, 3)) {
    for (int64_t axis : constant_ints(node, b, 3)) axes.push_back(normalize_axis(axis, rank));
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  std::vector<std::pair<int64_t, int64_t>> amounts(size_t(rank), {0, 0});
  for (size_t i = 0; i < axes.size(); ++i) amounts[size_t(axes[i])] = {pads[i], pads[i + axes.size()]};
  return amounts;
}

// Edge, reflect and wrap: one Gather per padded axis with the constant
// source-index vector of that axis.
Outputs pad_by_gather(const Node& node, FissionBuilder& b, const std::string& mode) {
  ValueId y = node.inputs[0];
  std::vector<std::pair<int64_t, int64_t>> amounts = pad_amounts(node, b);
  for (size_t d = 0; d < amounts.size(); ++d) {
    auto [begin, end] = amounts[d];
    if (begin == 0 && end == 0) continue;
    int64_t dim = b.shape(y)[d];
    std::vector<int64_t> source;
    for (int64_t o = 0; o < dim + begin + end; ++o) source.push_back(pad_source(mode, o, dim, begin, end));
    Attributes attrs;
    attrs.set("axis", int64_t(d));
    y = b.add1("Gather", {y, b.ints(source)}, std::move(attrs));
  }
  return {y};
}

// Constant mode with a runtime fill value: pad with zeros, then select the
// value where a constant mask (the zero-padded all-true tensor) is false.
Outputs pad_with_runtime_value(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  ValueId axes = has_input(node, 3) ? node.inputs[3] : kNoValue;
  Tensor ones(DType::Bool, b.shape(x));
  std::fill_n(ones.data<bool>(), ones.numel(), true);
  ValueId inside = b.add1("Pad", {b.constant(std::move(ones)), node.inputs[1], kNoValue, axes});
  ValueId padded = b.add1("Pad", {x, node.inputs[1], kNoValue, axes});
  return {b.add1("Where", {inside, padded, as_scalar(b, node.inputs[2], b.dtype(x))})};
}

Outputs pad_rule(const Node& node, FissionBuilder& b) {
  std::string mode = node.attrs.get_string("mode", "constant");
  if (mode != "constant") return pad_by_gather(node, b, mode);
  return pad_with_runtime_value(node, b);
}

// ---------------------------------------------------------------- Trilu, OneHot

// Keeps element (i, j) of each trailing matrix where j - i >= k (upper) or
// j - i <= k (lower), else 0. Where, not Mul, so NaN and inf outside the
// triangle still become 0. A runtime k compares at run time.
Outputs trilu_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  Shape s = b.shape(x);  // a copy: adding values may move the graph's storage
  int64_t rows = s[s.size() - 2], cols = s[s.size() - 1];
  Tensor offsets(DType::Int64, {rows, cols});
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) offsets.data<int64_t>()[i * cols + j] = j - i;
  }
  ValueId k = has_input(node, 1) ? as_scalar(b, node.inputs[1], DType::Int64) : b.scalar(0, DType::Int64);
  bool upper = node.attrs.get_int("upper", 1) != 0;
  ValueId keep = b.binary(upper ? "GreaterOrEqual" : "LessOrEqual", b.constant(std::move(offsets)), k);
  return {b.add1("Where", {keep, x, b.scalar(0, b.dtype(x))})};
}

// OneHot(indices, depth, [off, on]): Equal(indices with a unit axis, iota over
// depth) selects on or off. Indices truncate to integers (as the reference
// does), negative ones count from depth; others out of range match nothing.
Outputs one_hot_rule(const Node& node, FissionBuilder& b) {
  TensorType out = output_types(node, b)[0];
  int64_t axis = normalize_axis(node.attrs.get_int("axis", -1), int64_t(out.rank()));
  int64_t depth = out.shape[size_t(axis)];
  ValueId index = b.cast(node.inputs[0], DType::Int64);
  ValueId negative = b.binary("Less", index, b.scalar(0, DType::Int64));
  index = b.add1("Where", {negative, b.binary("Add", index, b.scalar(double(depth), DType::Int64)), index});
  Shape with_unit_axis = out.shape;
  with_unit_axis[size_t(axis)] = 1;
  Shape iota_shape(out.rank() - size_t(axis), 1);
  iota_shape[0] = depth;
  Tensor iota(DType::Int64, iota_shape);
  for (int64_t i = 0; i < depth; ++i) iota.data<int64_t>()[i] = i;
  ValueId hot = b.binary("Equal", b.reshape(index, with_unit_axis), b.constant(std::move(iota)));
  ValueId values = node.inputs[2];
  ValueId off = b.reshape(b.slice(b.reshape(values, {2}), {0}, {1}, {0}), {});
  ValueId on = b.reshape(b.slice(b.reshape(values, {2}), {1}, {2}, {0}), {});
  return {b.add1("Where", {hot, on, off})};
}

}  // namespace

void add_shape_rules(FissionRuleTable& table) {
  table.add("Identity", identity_rule);
  table.add("Dropout", dropout_rule);
  table.add("CastLike", cast_like_rule);
  for (const char* op : {"Squeeze", "Unsqueeze", "Flatten"}) table.add(op, reshape_to_output);
  table.add("Split", split_rule);
  table.add("Tile", tile_rule);
  table.add("DepthToSpace", depth_to_space_rule);
  table.add("SpaceToDepth", space_to_depth_rule);
  table.add("Pad", pad_rule);
  table.add("Trilu", trilu_rule);
  table.add("OneHot", one_hot_rule);
}

}  // namespace orchid::fission
