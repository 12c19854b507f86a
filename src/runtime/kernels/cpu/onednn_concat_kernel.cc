// Concat in oneDNN's native layouts. A CSP block, a U-Net skip or a
// pyramid's Concat sits between convolutions; when the convs' tensors stay in
// the blocked or channels-last layout oneDNN computes in, the Concat must
// read and write that layout too, or every conv around it converts to and
// from row-major. With row-major inputs and output (no native producer) the
// kernel is the layout library's strided copies; once a producer writes an
// input natively (layout negotiation, runtime/kernel.h), or its readers want
// the output in the layout they compute in, it copies each input from its
// layout into the output's (or runs oneDNN's concat primitive where blocks
// are cut), and offers its output in the layout that primitive picks.
//
// The Concat may take along the Slices that compute its inputs (YOLOX's
// Focus: four strided Slices of the image, concatenated on channels): each
// part is then one strided copy from a view of the Slices' source, written
// row-major.
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "ir/graph_utils.h"
#include "reference/ops/op_utils.h"
#include "runtime/kernels/cpu/layout_strided_copy.h"
#include "runtime/kernels/cpu/onednn_common.h"
#include "runtime/kernels/cpu/registry.h"
#include "support/error.h"

namespace orchid::runtime::cpu {

namespace {

using dnnl::memory;

// A Concat's input as the kernel reads it: group input `slot`, directly or
// through the Slices of the group that compute it (`view`).
struct Part {
  size_t slot = 0;
  Shape shape;
  std::optional<StridedView> view;
};

// Value `id` as a part: a group input, or a Slice of the group (of a Slice
// ...) of one.
std::optional<Part> part_of(const Graph& graph, const KernelGroup& group, ValueId id) {
  if (std::find(group.inputs.begin(), group.inputs.end(), id) != group.inputs.end()) {
    return Part{input_slot(group, id), graph.type(id).shape, std::nullopt};
  }
  for (size_t index : group.nodes) {
    const Node& node = graph.nodes()[index];
    if (node.outputs.size() != 1 || node.outputs[0] != id) continue;
    if (node.op != "Slice" || !node.domain.empty()) return std::nullopt;
    std::optional<Part> source = part_of(graph, group, node.inputs[0]);
    if (!source) return std::nullopt;
    const StridedView from = source->view ? *source->view : row_major_view(source->shape);
    std::optional<StridedView> view = slice_view(graph, node, from);
    if (!view) return std::nullopt;
    return Part{source->slot, graph.type(id).shape, std::move(view)};
  }
  return std::nullopt;
}

// A group that is one float32 Concat of 3-D to 5-D tensors (the ranks of
// convolution activations), every input non-empty, and the Slices computing
// its inputs: the Concat and its parts.
struct ConcatGroup {
  const Node* concat = nullptr;
  std::vector<Part> parts;  // per Concat input
};

std::optional<ConcatGroup> native_concat_group(const Graph& graph, const KernelGroup& group) {
  if (group.outputs.size() != 1) return std::nullopt;
  const Node* concat = nullptr;
  for (size_t index : group.nodes) {
    const Node& node = graph.nodes()[index];
    if (node.op == "Concat" && node.outputs.size() == 1 && node.outputs[0] == group.outputs[0]) concat = &node;
  }
  if (!concat || !concat->domain.empty()) return std::nullopt;
  const TensorType& out = graph.type(concat->outputs[0]);
  if (out.dtype != DType::Float32 || out.rank() < 3 || out.rank() > 5) return std::nullopt;
  ConcatGroup result{concat, {}};
  size_t slices = 0;
  for (ValueId id : concat->inputs) {
    if (id == kNoValue || graph.type(id).numel() == 0) return std::nullopt;
    std::optional<Part> part = part_of(graph, group, id);
    if (!part) return std::nullopt;
    result.parts.push_back(std::move(*part));
  }
  for (size_t index : group.nodes) slices += graph.nodes()[index].op == "Slice";
  if (slices + 1 != group.nodes.size()) return std::nullopt;
  return result;
}

memory::dims dims_of(const Shape& shape) { return memory::dims(shape.begin(), shape.end()); }

class NativeConcatKernel : public Kernel {
 public:
  NativeConcatKernel(const Graph& graph, const KernelGroup& group, ConcatGroup concat,
                     std::unique_ptr<Kernel> row_major)
      : row_major_(std::move(row_major)),
        axis_(int(reference::normalize_axis(concat.concat->attrs.require_int("axis"),
                                            int64_t(graph.type(concat.concat->outputs[0]).rank())))),
        out_dims_(dims_of(graph.type(concat.concat->outputs[0]).shape)),
        given_(group.inputs.size()),
        parts_(std::move(concat.parts)),
        stream_(onednn::cpu_engine()) {
    for (size_t i = 0; i < group.inputs.size(); ++i) {
      given_[i] = onednn::plain_f32(dims_of(graph.type(group.inputs[i]).shape));
    }
    for (const Part& part : parts_) has_views_ = has_views_ || part.view.has_value();
    dst_ = onednn::plain_f32(out_dims_);
    if (has_views_) build();  // copies from the views, row-major until a reader asks otherwise
  }

  void run(const KernelArgs& args) override {
    if (!native_) {
      row_major_->run(args);
      return;
    }
    if (copies_) {
      for (size_t k = 0; k < copies_->size(); ++k) {
        run_strided_copy((*copies_)[k], sizeof(float), args.inputs[parts_[k].slot], args.outputs[0]);
      }
      return;
    }
    for (size_t k = 0; k < parts_.size(); ++k) {
      args_[DNNL_ARG_MULTIPLE_SRC + int(k)].set_data_handle(const_cast<void*>(args.inputs[parts_[k].slot]));
    }
    args_[DNNL_ARG_DST].set_data_handle(args.outputs[0]);
    primitive_.execute(stream_, args_);
    stream_.wait();
  }

  std::string implementation() const override {
    if (!native_) return row_major_->implementation();
    // A layout kernel in reports either way (report/report_data.cc).
    if (has_views_) return "layout Slice+Concat (copies)";
    if (copies_) return "layout Concat (native layouts: copies)";
    return std::string("layout Concat (native layouts: oneDNN ") + pd_.impl_info_str() + ")";
  }

  // Inputs that Slices read stay row-major (the views are of row-major buffers).
  bool can_read_input_as(size_t input, const NativeLayout& layout) const override {
    return !has_views_ && layout.kind == onednn::kOneDnnLayout && input < given_.size() &&
           onednn::layout_desc(layout).dims() == given_[input].dims();
  }

  void read_input_as(size_t input, const NativeLayout& layout) override {
    ORCHID_CHECK(can_read_input_as(input, layout)) << "input " << input << " cannot take the layout";
    given_[input] = onednn::layout_desc(layout);
    any_native_input_ = true;
    build();
  }

  // Offered once an input is native: the layout oneDNN's concat picks for
  // the inputs' layouts, unless that is row-major.
  std::optional<NativeLayout> native_output_layout(size_t output) const override {
    if (output != 0 || !any_native_input_) return std::nullopt;
    const memory::desc any(out_dims_, memory::data_type::f32, memory::format_tag::any);
    const memory::desc picked = dnnl::concat::primitive_desc(any, axis_, sources(), onednn::cpu_engine()).dst_desc();
    if (picked == onednn::plain_f32(out_dims_)) return std::nullopt;
    return onednn::native_layout(picked);
  }

  void use_native_output(size_t output) override {
    std::optional<NativeLayout> layout = native_output_layout(output);
    ORCHID_CHECK(layout) << "no native layout for output " << output;
    dst_ = onednn::layout_desc(*layout);
    build();
  }

  // Any oneDNN layout of the output's shape: the copies (or oneDNN's
  // concat) write it as cheaply as row-major.
  // Not with Slices: their stride-2 reads written channels-last took 1.25 ms
  // on YOLOX's Focus, against 0.31 row-major plus the conv's 0.45 reorder.
  bool can_write_output_as(size_t output, const NativeLayout& layout) const override {
    return !has_views_ && output == 0 && layout.kind == onednn::kOneDnnLayout &&
           onednn::layout_desc(layout).dims() == out_dims_;
  }

  void write_output_as(size_t output, const NativeLayout& layout) override {
    ORCHID_CHECK(can_write_output_as(output, layout)) << "output " << output << " cannot take the layout";
    dst_ = onednn::layout_desc(layout);
    build();
  }

 private:
  std::vector<memory::desc> sources() const {
    std::vector<memory::desc> out;
    for (const Part& part : parts_) out.push_back(given_[part.slot]);
    return out;
  }

  // Where every input and the output are dense (no padded blocks) and each
  // part's channels start and end on block edges, the Concat is one strided
  // copy per input, whatever mix of layouts they have (oneDNN 2.6's simple
  // concat took 0.31 ms for two nChw8c 1x32x52x52 inputs, ten times their
  // bytes' time, and its reference concat over mixed layouts is slower
  // still); a part read through Slices is copied from its view. nullopt
  // otherwise.
  std::optional<std::vector<StridedCopy>> copies_into(const memory::desc& dst) const {
    std::vector<StridedCopy> copies;
    std::vector<int64_t> offset(out_dims_.size(), 0);
    for (const Part& part : parts_) {
      std::optional<StridedCopy> copy = part.view ? onednn::view_copy(part.shape, *part.view, dst, offset)
                                                  : onednn::layout_copy(given_[part.slot], dst, offset);
      if (!copy) return std::nullopt;
      copies.push_back(std::move(*copy));
      offset[size_t(axis_)] += part.shape[size_t(axis_)];
    }
    return copies;
  }

  // oneDNN's primitive for the inputs' layouts and the output's, or the
  // physical copies that do its work.
  void build() {
    native_ = true;
    copies_ = copies_into(dst_);
    if (has_views_) {
      ORCHID_CHECK(copies_) << "no copies into the output's layout";
      return;
    }
    const std::vector<memory::desc> srcs = sources();
    pd_ = dnnl::concat::primitive_desc(dst_, axis_, srcs, onednn::cpu_engine());
    primitive_ = dnnl::concat(pd_);
    args_.clear();
    for (size_t k = 0; k < srcs.size(); ++k) {
      args_[DNNL_ARG_MULTIPLE_SRC + int(k)] = memory(pd_.src_desc(int(k)), onednn::cpu_engine(), DNNL_MEMORY_NONE);
    }
    args_[DNNL_ARG_DST] = memory(pd_.dst_desc(), onednn::cpu_engine(), DNNL_MEMORY_NONE);
  }

  std::unique_ptr<Kernel> row_major_;  // while every input and the output are row-major
  int axis_;
  memory::dims out_dims_;
  std::vector<memory::desc> given_;      // per group input: the layout it arrives in
  std::vector<Part> parts_;              // per Concat input
  bool has_views_ = false;               // a part is read through Slices
  bool any_native_input_ = false;
  bool native_ = false;  // an input or the output is native
  std::optional<std::vector<StridedCopy>> copies_;
  memory::desc dst_;  // the output's layout
  dnnl::stream stream_;
  dnnl::concat::primitive_desc pd_;
  dnnl::primitive primitive_;
  std::unordered_map<int, memory> args_;
};

}  // namespace

std::optional<std::vector<size_t>> find_sliced_concat(const Graph& graph, const std::vector<size_t>& producers,
                                                      size_t concat) {
  const Node& node = graph.nodes()[concat];
  if (node.op != "Concat" || !node.domain.empty()) return std::nullopt;
  std::vector<size_t> nodes = {concat};
  std::vector<ValueId> frontier(node.inputs.begin(), node.inputs.end());
  while (!frontier.empty()) {
    const ValueId id = frontier.back();
    frontier.pop_back();
    const size_t p = id == kNoValue ? kNoNode : producers[size_t(id)];
    if (p == kNoNode || graph.nodes()[p].op != "Slice" || !graph.nodes()[p].domain.empty()) continue;
    if (std::find(nodes.begin(), nodes.end(), p) != nodes.end()) continue;
    nodes.push_back(p);
    frontier.push_back(graph.nodes()[p].inputs[0]);
  }
  if (nodes.size() == 1) return std::nullopt;
  std::sort(nodes.begin(), nodes.end());
  // No Slice's output read elsewhere, every parameter constant.
  if (!native_concat_group(graph, make_group(graph, nodes))) return std::nullopt;
  return nodes;
}

bool concat_takes_native_layouts(const Graph& graph, const KernelGroup& group) {
  return native_concat_group(graph, group).has_value();
}

std::unique_ptr<Kernel> make_concat_kernel(const Graph& graph, const KernelGroup& group) {
  std::optional<ConcatGroup> concat = native_concat_group(graph, group);
  if (!concat) return nullptr;
  // A lone Concat runs as the layout library's Concat while everything is row-major.
  std::unique_ptr<Kernel> row_major;
  if (group.nodes.size() == 1 && !(row_major = make_layout_kernel(graph, group))) return nullptr;
  return std::make_unique<NativeConcatKernel>(graph, group, std::move(*concat), std::move(row_major));
}

}  // namespace orchid::runtime::cpu
