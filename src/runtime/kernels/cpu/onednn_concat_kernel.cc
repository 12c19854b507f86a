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
#include <oneapi/dnnl/dnnl.hpp>

#include <optional>
#include <unordered_map>

#include "reference/ops/op_utils.h"
#include "runtime/kernels/cpu/layout_strided_copy.h"
#include "runtime/kernels/cpu/onednn_common.h"
#include "runtime/kernels/cpu/registry.h"
#include "support/error.h"

namespace orchid::runtime::cpu {

namespace {

using dnnl::memory;

// The node of a group that is one float32 Concat of 3-D to 5-D tensors (the
// ranks of convolution activations), every input non-empty.
const Node* native_concat_node(const Graph& graph, const KernelGroup& group) {
  if (group.nodes.size() != 1 || group.outputs.size() != 1) return nullptr;
  const Node& node = graph.nodes()[group.nodes[0]];
  if (node.op != "Concat" || !node.domain.empty() || node.outputs.size() != 1) return nullptr;
  const TensorType& out = graph.type(node.outputs[0]);
  if (out.dtype != DType::Float32 || out.rank() < 3 || out.rank() > 5) return nullptr;
  for (ValueId id : node.inputs) {
    if (id == kNoValue || graph.type(id).numel() == 0) return nullptr;
  }
  return &node;
}

memory::dims dims_of(const Shape& shape) { return memory::dims(shape.begin(), shape.end()); }

class NativeConcatKernel : public Kernel {
 public:
  NativeConcatKernel(const Graph& graph, const KernelGroup& group, const Node& node,
                     std::unique_ptr<Kernel> row_major)
      : row_major_(std::move(row_major)),
        axis_(int(reference::normalize_axis(node.attrs.require_int("axis"),
                                            int64_t(graph.type(node.outputs[0]).rank())))),
        out_dims_(dims_of(graph.type(node.outputs[0]).shape)),
        given_(group.inputs.size()),
        stream_(onednn::cpu_engine()) {
    for (size_t i = 0; i < group.inputs.size(); ++i) {
      given_[i] = onednn::plain_f32(dims_of(graph.type(group.inputs[i]).shape));
    }
    for (ValueId id : node.inputs) slot_of_source_.push_back(input_slot(group, id));
    dst_ = onednn::plain_f32(out_dims_);
  }

  void run(const KernelArgs& args) override {
    if (!native_) {
      row_major_->run(args);
      return;
    }
    if (copies_) {
      for (size_t k = 0; k < copies_->size(); ++k) {
        run_strided_copy((*copies_)[k], sizeof(float), args.inputs[slot_of_source_[k]], args.outputs[0]);
      }
      return;
    }
    for (size_t k = 0; k < slot_of_source_.size(); ++k) {
      args_[DNNL_ARG_MULTIPLE_SRC + int(k)].set_data_handle(const_cast<void*>(args.inputs[slot_of_source_[k]]));
    }
    args_[DNNL_ARG_DST].set_data_handle(args.outputs[0]);
    primitive_.execute(stream_, args_);
    stream_.wait();
  }

  std::string implementation() const override {
    if (!native_) return row_major_->implementation();
    // A layout kernel in reports either way (report/report_data.cc).
    if (copies_) return "layout Concat (native layouts: copies)";
    return std::string("layout Concat (native layouts: oneDNN ") + pd_.impl_info_str() + ")";
  }

  bool can_read_input_as(size_t input, const NativeLayout& layout) const override {
    return layout.kind == onednn::kOneDnnLayout && input < given_.size() &&
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
  bool can_write_output_as(size_t output, const NativeLayout& layout) const override {
    return output == 0 && layout.kind == onednn::kOneDnnLayout && onednn::layout_desc(layout).dims() == out_dims_;
  }

  void write_output_as(size_t output, const NativeLayout& layout) override {
    ORCHID_CHECK(can_write_output_as(output, layout)) << "output " << output << " cannot take the layout";
    dst_ = onednn::layout_desc(layout);
    build();
  }

 private:
  std::vector<memory::desc> sources() const {
    std::vector<memory::desc> out;
    for (size_t slot : slot_of_source_) out.push_back(given_[slot]);
    return out;
  }

  // Where every input and the output are dense (no padded blocks) and each
  // part's channels start and end on block edges, the Concat is one strided
  // copy per input, whatever mix of layouts they have (oneDNN 2.6's simple
  // concat took 0.31 ms for two nChw8c 1x32x52x52 inputs, ten times their
  // bytes' time, and its reference concat over mixed layouts is slower
  // still); nullopt otherwise.
  std::optional<std::vector<StridedCopy>> physical_copies(const std::vector<memory::desc>& srcs) const {
    std::vector<StridedCopy> copies;
    std::vector<int64_t> offset(out_dims_.size(), 0);
    for (const memory::desc& src : srcs) {
      std::optional<StridedCopy> copy = onednn::layout_copy(src, dst_, offset);
      if (!copy) return std::nullopt;
      copies.push_back(std::move(*copy));
      offset[size_t(axis_)] += src.dims()[size_t(axis_)];
    }
    return copies;
  }

  // oneDNN's primitive for the inputs' layouts and the output's, or the
  // physical copies that do its work.
  void build() {
    native_ = true;
    const std::vector<memory::desc> srcs = sources();
    copies_ = physical_copies(srcs);
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
  std::vector<size_t> slot_of_source_;  // per Concat input: its group input
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

bool concat_takes_native_layouts(const Graph& graph, const KernelGroup& group) {
  return native_concat_node(graph, group) != nullptr;
}

std::unique_ptr<Kernel> make_concat_kernel(const Graph& graph, const KernelGroup& group) {
  const Node* node = native_concat_node(graph, group);
  if (!node) return nullptr;
  std::unique_ptr<Kernel> row_major = make_layout_kernel(graph, group);
  if (!row_major) return nullptr;
  return std::make_unique<NativeConcatKernel>(graph, group, *node, std::move(row_major));
}

}  // namespace orchid::runtime::cpu
