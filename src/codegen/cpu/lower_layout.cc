// Layout primitives inlined as index maps: a read of the output at an index
// becomes a read of the input at the mapped index (Reshape keeps the linear
// index, Transpose permutes, Slice scales and shifts, Gather looks the index
// up in a constant table). Pad and Concat select between reads.
#include <algorithm>

#include "codegen/cpu/lower_internal.h"
#include "reference/ops/op_utils.h"
#include "support/error.h"

namespace orchid::codegen::cpu::detail {

namespace {

std::vector<int64_t> constant_ints(const Graph& graph, ValueId id) {
  return graph.value(id).constant->to_i64_vector();
}

// The optional `axes` input at `position`, normalized; 0..count-1 when absent.
std::vector<size_t> axes_input(const Graph& graph, const Node& node, size_t position, size_t count, size_t rank) {
  std::vector<int64_t> axes;
  if (node.inputs.size() > position && node.inputs[position] != kNoValue) {
    axes = constant_ints(graph, node.inputs[position]);
  } else {
    for (size_t i = 0; i < count; ++i) axes.push_back(int64_t(i));
  }
  std::vector<size_t> result;
  for (int64_t axis : axes) result.push_back(size_t(reference::normalize_axis(axis, int64_t(rank))));
  return result;
}

Index dims_index(std::vector<Expr> dims) {
  Index index;
  index.dims = std::move(dims);
  index.has_dims = true;
  return index;
}

// a && b, where either may be absent (null).
Expr conjunction(const Expr& a, const Expr& b) { return a ? kir::binary(kir::Op::And, a, b) : b; }

}  // namespace

Expr Lowering::compute_layout(const Node& node, ValueId value, Index& index) {
  const Shape& out = graph_.type(value).shape;
  const ValueId x = node.inputs[0];
  if (node.op == "Reshape") return value_at(x, reshape_index(graph_.type(x).shape, out, index));
  if (node.op == "Expand") return value_at(x, broadcast_index(x, out, index));
  const std::vector<Expr> dims = dims_of(out, index);
  if (node.op == "Transpose") return inline_transpose(node, dims);
  if (node.op == "Slice") return inline_slice(node, dims);
  if (node.op == "Pad") return inline_pad(node, value, dims);
  if (node.op == "Concat") return inline_concat(node, value, dims);
  if (node.op == "Gather") return inline_gather(node, value, dims);
  ORCHID_CHECK(false) << "codegen: cannot inline " << node.describe();
  return nullptr;
}

// The axes a Reshape keeps at the end of both shapes ([1, h, w, C] from
// [1, L, C]: C) keep their coordinates, so a broadcast read of the input
// along them (a bias over C) needs no division of the linear index by C;
// the leading axes map through their own linear index. Without known
// coordinates, the linear index is the input's.
Index Lowering::reshape_index(const Shape& in, const Shape& out, Index& index) {
  size_t kept = 0;
  while (kept < in.size() && kept < out.size() && in[in.size() - 1 - kept] == out[out.size() - 1 - kept]) ++kept;
  if (!index.has_dims || index.lazy_from || kept == 0) {
    Index next;
    next.linear = linear_of(out, index);
    return next;
  }
  const size_t out_lead = out.size() - kept, in_lead = in.size() - kept;
  Index lead = dims_index({index.dims.begin(), index.dims.begin() + long(out_lead)});
  Index mapped;
  mapped.linear = linear_of(Shape(out.begin(), out.begin() + long(out_lead)), lead);
  std::vector<Expr> dims = in_lead ? dims_of(Shape(in.begin(), in.begin() + long(in_lead)), mapped) : std::vector<Expr>{};
  dims.insert(dims.end(), index.dims.begin() + long(out_lead), index.dims.end());
  return dims_index(std::move(dims));
}

std::vector<int64_t> transpose_perm(const Node& node, size_t rank) {
  std::vector<int64_t> perm = node.attrs.get_ints("perm");
  if (perm.empty()) {
    for (size_t d = 0; d < rank; ++d) perm.push_back(int64_t(rank - 1 - d));
  }
  for (int64_t& p : perm) p = reference::normalize_axis(p, int64_t(rank));
  return perm;
}

Expr Lowering::inline_transpose(const Node& node, const std::vector<Expr>& dims) {
  const size_t rank = dims.size();
  const std::vector<int64_t> perm = transpose_perm(node, rank);
  std::vector<Expr> in(rank);
  for (size_t d = 0; d < rank; ++d) in[size_t(perm[d])] = dims[d];
  return value_at(node.inputs[0], dims_index(in));
}

// Starts clamped as the interpreter does (reference/ops/layout.cc); the
// output shape already says how many elements each axis takes.
Expr Lowering::inline_slice(const Node& node, const std::vector<Expr>& dims) {
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
  std::vector<Expr> mapped;
  for (size_t d = 0; d < in.size(); ++d) mapped.push_back(kir::add(kir::mul(dims[d], step[d]), start[d]));
  return value_at(node.inputs[0], dims_index(mapped));
}

Expr Lowering::inline_pad(const Node& node, ValueId value, const std::vector<Expr>& dims) {
  const ValueId x = node.inputs[0];
  const Shape& in = graph_.type(x).shape;
  const Shape& out = graph_.type(value).shape;
  const size_t rank = in.size();
  const std::vector<int64_t> pads = constant_ints(graph_, node.inputs[1]);
  const std::vector<size_t> axes = axes_input(graph_, node, 3, rank, rank);
  std::vector<int64_t> begin(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) begin[axes[i]] = pads[i];
  const kir::Type type = data_type(graph_.type(value).dtype);
  double fill_value = 0;
  if (node.inputs.size() > 2 && node.inputs[2] != kNoValue && graph_.type(node.inputs[2]).numel() == 1) {
    fill_value = graph_.value(node.inputs[2]).constant->at_f64(0);
  }
  const Expr fill = type == kir::Type::Bool ? kir::bool_const(fill_value != 0) : kir::float_const(fill_value);
  // Which output indices fall inside the input, and the input index. Along
  // the inner loop's dimension the inside is a range of the loop: noted
  // (pad_breaks_) so the stage can be lowered again in runs, and inside a
  // run that lies within it or outside it the test is known.
  Expr inside;
  std::vector<Expr> raw(rank);
  std::vector<bool> known_inside(rank, false);
  for (size_t d = 0; d < rank; ++d) {
    raw[d] = let(kir::Type::I64, kir::add(dims[d], -begin[d]));
    if (!inner_var_.empty() && kir::is_var(dims[d], inner_var_) && run_base_ && kir::is_var(run_base_, inner_var_)) {
      const int64_t low = begin[d], high = begin[d] + in[d];
      pad_breaks_.insert(low);
      pad_breaks_.insert(high);
      if (run_begin_ >= low && run_end_ <= high) {
        known_inside[d] = true;
        continue;
      }
      if (run_end_ <= low || run_begin_ >= high) return fill;  // the run lies in the padding
    }
    if (begin[d] > 0) inside = conjunction(inside, kir::binary(kir::Op::Ge, raw[d], kir::int_const(0)));
    if (out[d] - begin[d] > in[d]) inside = conjunction(inside, kir::binary(kir::Op::Lt, raw[d], kir::int_const(in[d])));
  }
  if (!inside) return value_at(x, dims_index(raw));  // a pure crop, or inside along every padded axis
  // A buffer is read by a conditional load at the unclamped index: the
  // address stays affine in the loop index, which GCC vectorizes with masked
  // loads, where a clamped index would be a gather or scalar code.
  if (buffer_.count(x) && graph_.type(x).numel() > 1) {
    Index at = dims_index(raw);
    return let(type, kir::select(inside, load_buffer(x, at), fill));
  }
  // An inlined input is computed at a clamped index (always valid, and
  // branch-free), then the pad value selected.
  std::vector<Expr> clamped(rank);
  for (size_t d = 0; d < rank; ++d) {
    clamped[d] = in[d] == 1         ? kir::int_const(0)
                 : known_inside[d] ? raw[d]
                                   : let(kir::Type::I64, kir::clamp(raw[d], 0, in[d] - 1));
  }
  const Expr v = value_at(x, dims_index(clamped));
  return let(type, kir::select(inside, v, fill));
}

// Every input is read at an index clamped into it, and the one whose range
// holds the output index selected: branch-free, so the loop vectorizes.
Expr Lowering::inline_concat(const Node& node, ValueId value, const std::vector<Expr>& dims) {
  const Shape& out = graph_.type(value).shape;
  const size_t axis = size_t(reference::normalize_axis(node.attrs.get_int("axis", 0), int64_t(out.size())));
  int64_t offset = 0;
  std::vector<std::pair<Expr, Expr>> parts;  // (condition, value)
  for (ValueId input : node.inputs) {
    const int64_t size = graph_.type(input).shape[axis];
    if (size == 0) continue;
    std::vector<Expr> at = dims;
    const Expr local = let(kir::Type::I64, kir::add(dims[axis], -offset));
    at[axis] = size == 1 ? kir::int_const(0) : let(kir::Type::I64, kir::clamp(local, 0, size - 1));
    parts.push_back({kir::binary(kir::Op::Lt, dims[axis], kir::int_const(offset + size)),
                     value_at(input, dims_index(at))});
    offset += size;
  }
  Expr result = parts.back().second;
  for (size_t k = parts.size() - 1; k-- > 0;) result = kir::select(parts[k].first, parts[k].second, result);
  return let(data_type(graph_.type(value).dtype), result);
}

// out[a..., q..., b...] = data[a..., indices[q...], b...]; the indices are a
// table of the kernel (declare_buffers), or a literal when there is one.
Expr Lowering::inline_gather(const Node& node, ValueId value, const std::vector<Expr>& dims) {
  const ValueId x = node.inputs[0];
  const Shape& in = graph_.type(x).shape;
  const size_t rank = in.size();
  const size_t axis = size_t(reference::normalize_axis(node.attrs.get_int("axis", 0), int64_t(rank)));
  const Shape& ishape = graph_.type(node.inputs[1]).shape;
  const size_t q = ishape.size();
  std::vector<Expr> mapped(rank);
  for (size_t d = 0; d < axis; ++d) mapped[d] = dims[d];
  for (size_t d = axis + 1; d < rank; ++d) mapped[d] = dims[d + q - 1];
  if (shape_numel(ishape) == 1) {
    const int64_t i = graph_.value(node.inputs[1]).constant->at_i64(0);
    mapped[axis] = kir::int_const(i < 0 ? i + in[axis] : i);
  } else {
    Index position = dims_index({dims.begin() + long(axis), dims.begin() + long(axis + q)});
    std::string table = tables_.at(value);
    Expr at = linear_of(ishape, position);
    // A table read at another table's read (a pad of a pad, a resize of a
    // pad): one composed table, one load.
    if (kir::is_var(at)) {
      if (auto read = table_reads_.find(at->name); read != table_reads_.end()) {
        table = composed_table(table, read->second.first);
        at = read->second.second;
      }
    }
    mapped[axis] = table_index(table, at);
  }
  return value_at(x, dims_index(mapped));
}

Expr Lowering::table_index(const std::string& table, const Expr& at) {
  int64_t literal = 0;
  if (kir::is_int_const(at, &literal)) return kir::int_const(table_values_.at(table).at(size_t(literal)));
  if (!inner_var_.empty() && kir::is_var(at, inner_var_)) {
    inner_tables_.insert(table);
    if (auto run = run_offsets_.find(table); run != run_offsets_.end()) return kir::add(run_base_, run->second);
  }
  const Expr local = let(kir::Type::I64, kir::load(table, kir::Type::I64, at));
  if (kir::is_var(local)) table_reads_[local->name] = {table, at};
  return local;
}

std::string Lowering::composed_table(const std::string& outer, const std::string& inner) {
  auto [it, added] = composed_.emplace(std::make_pair(outer, inner), "");
  if (!added) return it->second;
  const std::vector<int64_t>& o = table_values_.at(outer);
  std::vector<int64_t> values;
  for (int64_t k : table_values_.at(inner)) values.push_back(o.at(size_t(k)));
  it->second = declare_table(values);
  return it->second;
}

std::string Lowering::declare_table(const std::vector<int64_t>& values) {
  kir::Buffer table;
  table.name = "table" + std::to_string(table_values_.size());
  table.kind = kir::BufferKind::Table;
  table.type = kir::Type::I64;
  table.size = int64_t(values.size());
  table.values = values;
  kernel_.buffers.push_back(table);
  table_values_[table.name] = values;
  return table.name;
}

}  // namespace orchid::codegen::cpu::detail
