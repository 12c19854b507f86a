// Layout primitives inlined as index maps: a read of the output at an index
// becomes a read of the input at the mapped index (Reshape keeps the linear
// index, Transpose permutes, Slice scales and shifts, Gather looks the index
// up in a constant table). Pad and Concat select between reads.
#include <algorithm>

#include "codegen/cpu/emitter_internal.h"
#include "support/error.h"

namespace orchid::codegen::cpu::detail {

namespace {

std::vector<int64_t> constant_ints(const Graph& graph, ValueId id) {
  return graph.value(id).constant->to_i64_vector();
}

int64_t normalize(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

// The optional `axes` input at `position`, normalized; 0..count-1 when absent.
std::vector<size_t> axes_input(const Graph& graph, const Node& node, size_t position, size_t count, size_t rank) {
  std::vector<int64_t> axes;
  if (node.inputs.size() > position && node.inputs[position] != kNoValue) {
    axes = constant_ints(graph, node.inputs[position]);
  } else {
    for (size_t i = 0; i < count; ++i) axes.push_back(int64_t(i));
  }
  std::vector<size_t> result;
  for (int64_t axis : axes) result.push_back(size_t(normalize(axis, int64_t(rank))));
  return result;
}

Index dims_index(std::vector<std::string> dims) {
  Index index;
  index.dims = std::move(dims);
  index.has_dims = true;
  return index;
}

}  // namespace

std::string KernelWriter::compute_layout(const Node& node, ValueId value, Index& index) {
  const Shape& out = graph_.type(value).shape;
  const ValueId x = node.inputs[0];
  if (node.op == "Reshape") {
    Index next;
    next.linear = linear_of(out, index);
    return value_at(x, next);
  }
  if (node.op == "Expand") return value_at(x, broadcast_index(x, out, index));
  const std::vector<std::string> dims = dims_of(out, index);
  if (node.op == "Transpose") return inline_transpose(node, dims);
  if (node.op == "Slice") return inline_slice(node, dims);
  if (node.op == "Pad") return inline_pad(node, value, dims);
  if (node.op == "Concat") return inline_concat(node, value, dims);
  if (node.op == "Gather") return inline_gather(node, value, dims);
  ORCHID_CHECK(false) << "codegen: cannot inline " << node.describe();
  return "";
}

std::vector<int64_t> transpose_perm(const Node& node, size_t rank) {
  std::vector<int64_t> perm = node.attrs.get_ints("perm");
  if (perm.empty()) {
    for (size_t d = 0; d < rank; ++d) perm.push_back(int64_t(rank - 1 - d));
  }
  for (int64_t& p : perm) p = normalize(p, int64_t(rank));
  return perm;
}

std::string KernelWriter::inline_transpose(const Node& node, const std::vector<std::string>& dims) {
  const size_t rank = dims.size();
  const std::vector<int64_t> perm = transpose_perm(node, rank);
  std::vector<std::string> in(rank);
  for (size_t d = 0; d < rank; ++d) in[size_t(perm[d])] = dims[d];
  return value_at(node.inputs[0], dims_index(in));
}

// Starts clamped as the interpreter does (reference/ops/layout.cc); the
// output shape already says how many elements each axis takes.
std::string KernelWriter::inline_slice(const Node& node, const std::vector<std::string>& dims) {
  const Shape& in = graph_.type(node.inputs[0]).shape;
  const std::vector<int64_t> starts = constant_ints(graph_, node.inputs[1]);
  const std::vector<size_t> axes = axes_input(graph_, node, 3, starts.size(), in.size());
  std::vector<int64_t> steps(starts.size(), 1);
  if (node.inputs.size() > 4 && node.inputs[4] != kNoValue) steps = constant_ints(graph_, node.inputs[4]);
  std::vector<int64_t> start(in.size(), 0), step(in.size(), 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t dim = in[axes[i]];
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    s = steps[i] > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
    start[axes[i]] = s;
    step[axes[i]] = steps[i];
  }
  std::vector<std::string> mapped;
  for (size_t d = 0; d < in.size(); ++d) mapped.push_back(index_add(index_mul(dims[d], step[d]), start[d]));
  return value_at(node.inputs[0], dims_index(mapped));
}

std::string KernelWriter::inline_pad(const Node& node, ValueId value, const std::vector<std::string>& dims) {
  const ValueId x = node.inputs[0];
  const Shape& in = graph_.type(x).shape;
  const Shape& out = graph_.type(value).shape;
  const size_t rank = in.size();
  const std::vector<int64_t> pads = constant_ints(graph_, node.inputs[1]);
  const std::vector<size_t> axes = axes_input(graph_, node, 3, rank, rank);
  std::vector<int64_t> begin(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) begin[axes[i]] = pads[i];
  const DType dtype = graph_.type(value).dtype;
  double fill_value = 0;
  if (node.inputs.size() > 2 && node.inputs[2] != kNoValue && graph_.type(node.inputs[2]).numel() == 1) {
    fill_value = graph_.value(node.inputs[2]).constant->at_f64(0);
  }
  const std::string fill = dtype == DType::Bool ? (fill_value != 0 ? "true" : "false") : float_literal(fill_value);
  // Which output indices fall inside the input, and the input index.
  std::string inside;
  std::vector<std::string> raw(rank);
  for (size_t d = 0; d < rank; ++d) {
    raw[d] = let("int64_t", index_add(dims[d], -begin[d]));
    if (begin[d] > 0) inside += (inside.empty() ? "" : " && ") + raw[d] + " >= 0";
    if (out[d] - begin[d] > in[d]) inside += (inside.empty() ? "" : " && ") + raw[d] + " < " + std::to_string(in[d]);
  }
  if (inside.empty()) return value_at(x, dims_index(raw));  // a pure crop
  // A buffer is read by a conditional load at the unclamped index: the
  // address stays affine in the loop index, which GCC vectorizes with masked
  // loads, where a clamped index would be a gather or scalar code.
  auto buffer = buffer_.find(x);
  if (buffer != buffer_.end() && graph_.type(x).numel() > 1) {
    Index at = dims_index(raw);
    return let(c_type(dtype), "((" + inside + ") ? " + buffer->second + "[" + linear_of(in, at) + "] : " + fill + ")");
  }
  // An inlined input is computed at a clamped index (always valid, and
  // branch-free), then the pad value selected.
  std::vector<std::string> clamped(rank);
  for (size_t d = 0; d < rank; ++d) {
    clamped[d] = in[d] == 1 ? "0"
                            : let("int64_t", "std::min<int64_t>(std::max<int64_t>(" + raw[d] + ", 0), " +
                                                 std::to_string(in[d] - 1) + ")");
  }
  const std::string v = value_at(x, dims_index(clamped));
  return let(c_type(dtype), "((" + inside + ") ? " + v + " : " + fill + ")");
}

// Every input is read at an index clamped into it, and the one whose range
// holds the output index selected: branch-free, so the loop vectorizes.
std::string KernelWriter::inline_concat(const Node& node, ValueId value, const std::vector<std::string>& dims) {
  const Shape& out = graph_.type(value).shape;
  const size_t axis = size_t(normalize(node.attrs.get_int("axis", 0), int64_t(out.size())));
  int64_t offset = 0;
  std::vector<std::pair<std::string, std::string>> parts;  // (condition, value)
  for (ValueId input : node.inputs) {
    const int64_t size = graph_.type(input).shape[axis];
    if (size == 0) continue;
    std::vector<std::string> at = dims;
    const std::string local = let("int64_t", index_add(dims[axis], -offset));
    at[axis] = size == 1 ? "0"
                         : let("int64_t", "std::min<int64_t>(std::max<int64_t>(" + local + ", 0), " +
                                              std::to_string(size - 1) + ")");
    parts.push_back({dims[axis] + " < " + std::to_string(offset + size), value_at(input, dims_index(at))});
    offset += size;
  }
  std::string result = parts.back().second;
  for (size_t k = parts.size() - 1; k-- > 0;) {
    result = "(" + parts[k].first + " ? " + parts[k].second + " : " + result + ")";
  }
  return let(c_type(graph_.type(value).dtype), result);
}

// out[a..., q..., b...] = data[a..., indices[q...], b...]; the indices are a
// table in the function (declare_buffers), or a literal when there is one.
std::string KernelWriter::inline_gather(const Node& node, ValueId value, const std::vector<std::string>& dims) {
  const ValueId x = node.inputs[0];
  const Shape& in = graph_.type(x).shape;
  const size_t rank = in.size();
  const size_t axis = size_t(normalize(node.attrs.get_int("axis", 0), int64_t(rank)));
  const Shape& ishape = graph_.type(node.inputs[1]).shape;
  const size_t q = ishape.size();
  std::vector<std::string> mapped(rank);
  for (size_t d = 0; d < axis; ++d) mapped[d] = dims[d];
  for (size_t d = axis + 1; d < rank; ++d) mapped[d] = dims[d + q - 1];
  if (shape_numel(ishape) == 1) {
    const int64_t i = graph_.value(node.inputs[1]).constant->at_i64(0);
    mapped[axis] = std::to_string(i < 0 ? i + in[axis] : i);
  } else {
    Index position = dims_index({dims.begin() + long(axis), dims.begin() + long(axis + q)});
    std::string table = tables_.at(value), at = linear_of(ishape, position);
    // A table read at another table's read (a pad of a pad, a resize of a
    // pad): one composed table, one load.
    if (auto read = table_reads_.find(at); read != table_reads_.end()) {
      table = composed_table(table, read->second.first);
      at = read->second.second;
    }
    mapped[axis] = table_index(table, at);
  }
  return value_at(x, dims_index(mapped));
}

std::string KernelWriter::table_index(const std::string& table, const std::string& at) {
  int64_t literal = 0;
  if (is_int_literal(at, &literal)) return std::to_string(table_values_.at(table).at(size_t(literal)));
  if (!inner_var_.empty() && at == inner_var_) {
    inner_tables_.insert(table);
    if (auto run = run_offsets_.find(table); run != run_offsets_.end()) return index_add(at, run->second);
  }
  const std::string local = let("int64_t", table + "[" + at + "]");
  table_reads_[local] = {table, at};
  return local;
}

std::string KernelWriter::composed_table(const std::string& outer, const std::string& inner) {
  auto [it, added] = composed_.emplace(std::make_pair(outer, inner), "");
  if (!added) return it->second;
  const std::vector<int64_t>& o = table_values_.at(outer);
  std::vector<int64_t> values;
  for (int64_t k : table_values_.at(inner)) values.push_back(o.at(size_t(k)));
  it->second = declare_table(values);
  return it->second;
}

std::string KernelWriter::declare_table(const std::vector<int64_t>& values) {
  const std::string name = fresh("gather");
  std::string text = "  static const int64_t " + name + "[] = {";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + std::to_string(values[i]);
  table_decls_.push_back(text + "};");
  table_values_[name] = values;
  return name;
}

}  // namespace orchid::codegen::cpu::detail
