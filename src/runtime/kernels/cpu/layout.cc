// Layout kernels: Transpose, Reshape, Slice, Concat, Pad (constant mode),
// Expand and Gather. Each node becomes a plan of strided copies fixed when
// the kernel is made (shapes are static and the shape-deciding inputs are
// constants), so run() only moves bytes; Gather reads its indices at run time.
// Semantics follow the interpreter (reference/ops/layout.cc, index.cc).
#include <algorithm>
#include <cstring>
#include <optional>

#include "ir/graph_utils.h"
#include "reference/ops/op_utils.h"
#include "runtime/kernels/cpu/layout_strided_copy.h"
#include "runtime/kernels/cpu/registry.h"
#include "support/error.h"
#include "support/parallel.h"

namespace orchid::runtime::cpu {

namespace {

// What a copy-only layout kernel does: optionally fill the output with one
// element, then run strided copies, each from one of the kernel's inputs.
struct CopyPlan {
  std::optional<std::vector<std::byte>> fill;          // one element's bytes
  std::vector<std::pair<size_t, StridedCopy>> copies;  // (group input, copy)
};

class CopyKernel : public Kernel {
 public:
  CopyKernel(CopyPlan plan, TensorType out, std::string op)
      : plan_(std::move(plan)), out_(std::move(out)), op_(std::move(op)) {}

  void run(const KernelArgs& args) override {
    size_t elem = dtype_size(out_.dtype);
    if (plan_.fill) fill_elements(args.outputs[0], out_.numel(), plan_.fill->data(), elem);
    for (const auto& [input, copy] : plan_.copies) run_strided_copy(copy, elem, args.inputs[input], args.outputs[0]);
  }

  std::string implementation() const override { return "layout " + op_; }
  std::optional<size_t> output_is_input_bytes() const override {
    if (op_ != "Reshape" || plan_.fill || plan_.copies.size() != 1) return std::nullopt;
    return plan_.copies[0].first;
  }

 private:
  CopyPlan plan_;
  TensorType out_;
  std::string op_;
};

bool input_present(const Node& node, size_t i) { return i < node.inputs.size() && node.inputs[i] != kNoValue; }

// A plan of one coalesced copy of input 0.
CopyPlan single_copy(const KernelGroup& group, const Node& node, StridedCopy copy) {
  CopyPlan plan;
  plan.copies.push_back({input_slot(group, node.inputs[0]), coalesce(std::move(copy))});
  return plan;
}

// ------------------------------------------------------------ Transpose
std::optional<CopyPlan> plan_transpose(const Graph& graph, const KernelGroup& group, const Node& node) {
  const std::optional<std::vector<int64_t>> strides = transpose_read_strides(graph, node);
  if (!strides) return std::nullopt;
  return single_copy(group, node, dense_output_copy(graph.type(node.outputs[0]).shape, *strides));
}

// ------------------------------------------------------------ Reshape
// Row-major order is unchanged: one contiguous copy, whatever the shape input.
std::optional<CopyPlan> plan_reshape(const Graph& graph, const KernelGroup& group, const Node& node) {
  int64_t n = graph.type(node.inputs[0]).numel();
  return single_copy(group, node, dense_output_copy({n}, {1}));
}

// ------------------------------------------------------------ Slice
std::optional<CopyPlan> plan_slice(const Graph& graph, const KernelGroup& group, const Node& node) {
  const std::optional<StridedView> view = slice_view(graph, node, row_major_view(graph.type(node.inputs[0]).shape));
  if (!view) return std::nullopt;
  return single_copy(group, node, dense_output_copy(graph.type(node.outputs[0]).shape, view->strides, view->base));
}

// ------------------------------------------------------------ Concat
// Input k fills columns [column, column + row_k) of each outer row.
std::optional<CopyPlan> plan_concat(const Graph& graph, const KernelGroup& group, const Node& node) {
  const Shape& out = graph.type(node.outputs[0]).shape;
  size_t axis = size_t(reference::normalize_axis(node.attrs.require_int("axis"), int64_t(out.size())));
  int64_t outer = shape_numel(Shape(out.begin(), out.begin() + int64_t(axis)));
  int64_t inner = shape_numel(Shape(out.begin() + int64_t(axis) + 1, out.end()));
  int64_t out_row = out[axis] * inner;
  CopyPlan plan;
  int64_t column = 0;
  for (ValueId id : node.inputs) {
    if (id == kNoValue) continue;
    int64_t row = graph.type(id).shape[axis] * inner;
    StridedCopy copy{{{outer, row, out_row}, {row, 1, 1}}, 0, column};
    plan.copies.push_back({input_slot(group, id), coalesce(std::move(copy))});
    column += row;
  }
  return plan;
}

// ------------------------------------------------------------ Pad
// The output is the fill value except for the box the (possibly cropped)
// input lands in: negative pads crop the input, positive ones shift it.
std::optional<CopyPlan> plan_pad(const Graph& graph, const KernelGroup& group, const Node& node) {
  const std::optional<ConstantPads> pads = constant_pads(graph, node);
  if (!pads) return std::nullopt;
  const TensorType& in = graph.type(node.inputs[0]);
  const Shape& out = graph.type(node.outputs[0]).shape;
  const std::vector<int64_t>& begin = pads->begin;
  const std::vector<int64_t>& end = pads->end;
  std::vector<int64_t> in_strides = shape_strides(in.shape), out_strides = shape_strides(out);
  StridedCopy copy;
  for (size_t d = 0; d < in.shape.size(); ++d) {
    int64_t lo = std::max<int64_t>(0, -begin[d]);
    int64_t length = std::max<int64_t>(0, in.shape[d] - lo - std::max<int64_t>(0, -end[d]));
    copy.dims.push_back({length, in_strides[d], out_strides[d]});
    copy.in_base += lo * in_strides[d];
    copy.out_base += std::max<int64_t>(0, begin[d]) * out_strides[d];
  }
  CopyPlan plan = single_copy(group, node, std::move(copy));
  if (copy_numel(plan.copies[0].second) != shape_numel(out)) {
    Tensor value(in.dtype, {});  // zero unless constant_value is given
    if (pads->value && pads->value->numel() > 0) value = pads->value->cast(in.dtype);
    const std::byte* bytes = static_cast<const std::byte*>(value.raw());
    plan.fill = std::vector<std::byte>(bytes, bytes + dtype_size(in.dtype));
  }
  return plan;
}

// ------------------------------------------------------------ Expand
// Numpy broadcasting, right-aligned: size-1 input axes read with stride 0.
std::optional<CopyPlan> plan_expand(const Graph& graph, const KernelGroup& group, const Node& node) {
  const Shape& in = graph.type(node.inputs[0]).shape;
  const Shape& out = graph.type(node.outputs[0]).shape;
  if (in.size() > out.size()) return std::nullopt;
  std::vector<int64_t> in_strides = shape_strides(in);
  std::vector<int64_t> strides(out.size(), 0);
  size_t offset = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) strides[d + offset] = in[d] == 1 ? 0 : in_strides[d];
  return single_copy(group, node, dense_output_copy(out, strides));
}

std::optional<CopyPlan> plan_copies(const Graph& graph, const KernelGroup& group, const Node& node) {
  if (node.op == "Transpose") return plan_transpose(graph, group, node);
  if (node.op == "Reshape") return plan_reshape(graph, group, node);
  if (node.op == "Slice") return plan_slice(graph, group, node);
  if (node.op == "Concat") return plan_concat(graph, group, node);
  if (node.op == "Pad") return plan_pad(graph, group, node);
  if (node.op == "Expand") return plan_expand(graph, group, node);
  return std::nullopt;
}

// ------------------------------------------------------------ Gather
// out[a, i, b] = data[a, indices[i], b] over data seen as [outer, axis, inner];
// indices are int32/int64 read at run time, negative ones counting from the
// end, and any out of range is a user error as in the interpreter.
class GatherKernel : public Kernel {
 public:
  GatherKernel(const Graph& graph, const KernelGroup& group, const Node& node)
      : name_(node.name),
        data_slot_(input_slot(group, node.inputs[0])),
        index_slot_(input_slot(group, node.inputs[1])),
        index_dtype_(graph.type(node.inputs[1]).dtype),
        num_indices_(graph.type(node.inputs[1]).numel()),
        elem_(dtype_size(graph.type(node.inputs[0]).dtype)) {
    const Shape& data = graph.type(node.inputs[0]).shape;
    size_t axis = size_t(reference::normalize_axis(node.attrs.get_int("axis", 0), int64_t(data.size())));
    outer_ = shape_numel(Shape(data.begin(), data.begin() + int64_t(axis)));
    axis_dim_ = data[axis];
    inner_ = shape_numel(Shape(data.begin() + int64_t(axis) + 1, data.end()));
  }

  void run(const KernelArgs& args) override {
    if (outer_ * num_indices_ * inner_ == 0) return;  // nothing read, so no index is checked
    const std::vector<int64_t> rows = checked_indices(args.inputs[index_slot_]);
    const std::byte* data = static_cast<const std::byte*>(args.inputs[data_slot_]);
    std::byte* out = static_cast<std::byte*>(args.outputs[0]);
    const size_t row_bytes = size_t(inner_) * elem_;
    // Consecutive indices (a pad's interior, a slice) are one copy each.
    const std::vector<Run> runs = runs_of(rows);
    const bool streaming = size_t(outer_ * num_indices_) * row_bytes >= kStreamingBytes;
    if (runs.size() * 4 <= rows.size() || row_bytes >= 256) {
      const int64_t per_task = std::max<int64_t>(1, 65536 / int64_t(row_bytes * rows.size() / runs.size()));
      const int64_t num_runs = int64_t(runs.size());
      parallel_for(outer_ * num_runs, per_task, [&](int64_t begin, int64_t end) {
        int64_t a = begin / num_runs, k = begin % num_runs;
        for (int64_t r = begin; r < end; ++r) {
          const Run& run = runs[size_t(k)];
          copy_bytes(out + size_t(a * num_indices_ + run.first) * row_bytes,
                     data + size_t(a * axis_dim_ + run.source) * row_bytes, size_t(run.length) * row_bytes, streaming);
          if (++k == num_runs) k = 0, ++a;
        }
        if (streaming) stream_fence();
      });
      return;
    }
    if (inner_ == 1 && elem_ == 4) return gather_elements<uint32_t>(rows, data, out);
    parallel_for(outer_ * num_indices_, std::max<int64_t>(1, 65536 / int64_t(row_bytes)),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t r = begin; r < end; ++r) {
                     int64_t a = r / num_indices_, i = r % num_indices_;
                     const std::byte* src = data + size_t(a * axis_dim_ + rows[size_t(i)]) * row_bytes;
                     std::memcpy(out + size_t(r) * row_bytes, src, row_bytes);
                   }
                 });
  }

  std::string implementation() const override { return "layout Gather"; }

 private:
  // Output rows [first, first + length) come from input rows [source, ...).
  struct Run {
    int64_t first = 0, source = 0, length = 0;
  };
  static std::vector<Run> runs_of(const std::vector<int64_t>& rows) {
    std::vector<Run> runs;
    for (int64_t i = 0; i < int64_t(rows.size()); ++i) {
      if (!runs.empty() && runs.back().source + runs.back().length == rows[size_t(i)]) {
        ++runs.back().length;
      } else {
        runs.push_back({i, rows[size_t(i)], 1});
      }
    }
    return runs;
  }

  // Sixteen outputs of a gather along the last axis whose sources lie
  // within sixteen elements from `from`: one vector load and one permute
  // (a nearest Resize's x2 reads 8 elements for 16 outputs).
  using Lanes = int32_t __attribute__((vector_size(64)));
  struct LaneBlock {
    int64_t first = 0, from = 0;
    Lanes lanes{};
  };
  // v[lanes[j]] in lane j: one vpermd with GCC's __builtin_shuffle (Clang,
  // the fuzz build's compiler, has no variable shuffle; lane by lane there).
  static Lanes permute(Lanes v, Lanes lanes) {
#if defined(__GNUC__) && !defined(__clang__)
    return __builtin_shuffle(v, lanes);
#else
    Lanes out;
    for (int j = 0; j < 16; ++j) out[j] = v[lanes[j] & 15];
    return out;
#endif
  }

  std::vector<LaneBlock> lane_blocks(const std::vector<int64_t>& rows) const {
    std::vector<LaneBlock> blocks;
    for (int64_t first = 0; first + 16 <= num_indices_; first += 16) {
      const auto [lo, hi] = std::minmax_element(rows.begin() + first, rows.begin() + first + 16);
      if (*hi - *lo >= 16 || *lo + 16 > axis_dim_) break;  // the rest element by element
      LaneBlock block{first, *lo, {}};
      for (int j = 0; j < 16; ++j) block.lanes[j] = int32_t(rows[size_t(first + j)] - *lo);
      blocks.push_back(block);
    }
    return blocks;
  }

  // Single elements of one size (a gather along the last axis): a plain
  // indexed loop per outer row, not a copy call per element; float-sized
  // ones sixteen at a time where every block of sixteen reads one vector.
  template <typename E>
  void gather_elements(const std::vector<int64_t>& rows, const std::byte* data, std::byte* out) const {
    const E* in = reinterpret_cast<const E*>(data);
    E* dst = reinterpret_cast<E*>(out);
    const std::vector<LaneBlock> blocks = sizeof(E) == 4 ? lane_blocks(rows) : std::vector<LaneBlock>{};
    const int64_t vectorized = blocks.empty() ? 0 : blocks.back().first + 16;
    parallel_for(outer_, std::max<int64_t>(1, 16384 / num_indices_), [&](int64_t begin, int64_t end) {
      for (int64_t a = begin; a < end; ++a) {
        const E* src = in + a * axis_dim_;
        E* row = dst + a * num_indices_;
        for (const LaneBlock& block : blocks) {
          Lanes v;
          std::memcpy(&v, src + block.from, sizeof v);
          v = permute(v, block.lanes);
          std::memcpy(row + block.first, &v, sizeof v);
        }
        for (int64_t i = vectorized; i < num_indices_; ++i) row[i] = src[rows[size_t(i)]];
      }
    });
  }

  std::vector<int64_t> checked_indices(const void* raw) const {
    std::vector<int64_t> rows(static_cast<size_t>(num_indices_));
    for (int64_t i = 0; i < num_indices_; ++i) {
      int64_t index =
          index_dtype_ == DType::Int32 ? static_cast<const int32_t*>(raw)[i] : static_cast<const int64_t*>(raw)[i];
      if (index < -axis_dim_ || index >= axis_dim_) {
        ORCHID_FAIL() << "Gather " << name_ << ": index " << index << " is out of range for a dimension of size "
                      << axis_dim_;
      }
      rows[size_t(i)] = index < 0 ? index + axis_dim_ : index;
    }
    return rows;
  }

  std::string name_;
  size_t data_slot_, index_slot_;
  DType index_dtype_;
  int64_t num_indices_;
  size_t elem_;
  int64_t outer_ = 1, axis_dim_ = 0, inner_ = 1;
};

std::unique_ptr<Kernel> make_gather_kernel(const Graph& graph, const KernelGroup& group, const Node& node) {
  if (node.inputs.size() != 2 || node.inputs[1] == kNoValue) return nullptr;
  DType index_dtype = graph.type(node.inputs[1]).dtype;
  if (index_dtype != DType::Int32 && index_dtype != DType::Int64) return nullptr;
  if (graph.type(node.inputs[0]).rank() == 0) return nullptr;
  return std::make_unique<GatherKernel>(graph, group, node);
}

}  // namespace

StridedView row_major_view(const Shape& shape) { return {shape_strides(shape), 0}; }

// Start of each axis after the interpreter's clamping (negative starts count
// from the end; step > 0 clamps to [0, dim], step < 0 to [0, dim - 1]).
std::optional<StridedView> slice_view(const Graph& graph, const Node& slice, const StridedView& in) {
  const Shape& shape = graph.type(slice.inputs[0]).shape;
  const int64_t rank = int64_t(shape.size());
  const Tensor *starts = constant_input(graph, slice, 1), *ends = constant_input(graph, slice, 2);
  const Tensor *axes_t = constant_input(graph, slice, 3), *steps_t = constant_input(graph, slice, 4);
  if (!starts || !ends || (input_present(slice, 3) && !axes_t) || (input_present(slice, 4) && !steps_t)) {
    return std::nullopt;
  }
  const std::vector<int64_t> begin = starts->to_i64_vector();
  std::vector<int64_t> axes;
  if (axes_t) {
    axes = reference::normalize_axes(axes_t->to_i64_vector(), rank);
  } else {
    for (size_t i = 0; i < begin.size(); ++i) axes.push_back(int64_t(i));
  }
  const std::vector<int64_t> steps = steps_t ? steps_t->to_i64_vector() : std::vector<int64_t>(begin.size(), 1);
  if (axes.size() != begin.size() || steps.size() != begin.size() || in.strides.size() != shape.size()) {
    return std::nullopt;
  }
  StridedView out = in;
  for (size_t i = 0; i < begin.size(); ++i) {
    const size_t axis = size_t(axes[i]);
    const int64_t dim = shape[axis], step = steps[i];
    int64_t start = begin[i];
    if (step == 0) return std::nullopt;
    if (start < 0) start += dim;
    start =
        step > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
    out.strides[axis] = in.strides[axis] * step;
    out.base += start * in.strides[axis];
  }
  return out;
}

std::optional<ConstantPads> constant_pads(const Graph& graph, const Node& pad) {
  if (pad.attrs.get_string("mode", "constant") != "constant") return std::nullopt;
  const int64_t rank = int64_t(graph.type(pad.inputs[0]).rank());
  const Tensor* pads_t = constant_input(graph, pad, 1);
  const Tensor* value_t = constant_input(graph, pad, 2);
  const Tensor* axes_t = constant_input(graph, pad, 3);
  if (!pads_t || (input_present(pad, 2) && !value_t) || (input_present(pad, 3) && !axes_t)) return std::nullopt;
  std::vector<int64_t> axes;
  if (axes_t) {
    axes = reference::normalize_axes(axes_t->to_i64_vector(), rank);
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  const std::vector<int64_t> p = pads_t->to_i64_vector();
  if (p.size() != 2 * axes.size()) return std::nullopt;
  ConstantPads pads{std::vector<int64_t>(size_t(rank), 0), std::vector<int64_t>(size_t(rank), 0), value_t};
  for (size_t i = 0; i < axes.size(); ++i) {
    pads.begin[size_t(axes[i])] = p[i];
    pads.end[size_t(axes[i])] = p[i + axes.size()];
  }
  return pads;
}

std::unique_ptr<Kernel> make_layout_kernel(const Graph& graph, const KernelGroup& group) {
  if (group.nodes.size() != 1 || group.outputs.size() != 1) return nullptr;
  const Node& node = graph.nodes()[group.nodes[0]];
  if (!node.domain.empty() || node.outputs.size() != 1 || group.outputs[0] != node.outputs[0]) return nullptr;
  if (node.inputs.empty() || node.inputs[0] == kNoValue) return nullptr;
  size_t elem = dtype_size(graph.type(node.outputs[0]).dtype);
  if (elem != 1 && elem != 2 && elem != 4 && elem != 8) return nullptr;
  if (node.op == "Gather") return make_gather_kernel(graph, group, node);
  std::optional<CopyPlan> plan = plan_copies(graph, group, node);
  if (!plan) return nullptr;
  return std::make_unique<CopyKernel>(std::move(*plan), graph.type(node.outputs[0]), node.op);
}

}  // namespace orchid::runtime::cpu
