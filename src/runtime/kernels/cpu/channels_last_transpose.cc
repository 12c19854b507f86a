// A float32 Transpose between a channels-last image [N, spatial..., C] and
// the channels-first one [N, C, spatial...] (fission/token_images.h makes
// them). Row-major on both sides it is the layout library's copy. But the
// channels-last row-major bytes are the channels-first image in oneDNN's
// channels-last layout (nhwc and its 3-D and 5-D kin), the layout a
// convolution computes in: so the kernel offers that layout for its
// channels-first side (its output, or its input), and once the layout
// negotiation takes it, its output is its input's bytes — the memory plan
// gives the two one buffer and the kernel does not run.
#include <cstring>

#include "runtime/kernels/cpu/onednn_common.h"
#include "runtime/kernels/cpu/registry.h"

namespace orchid::runtime::cpu {

namespace {

using onednn::kOneDnnLayout;

class ChannelsLastTransposeKernel : public Kernel {
 public:
  ChannelsLastTransposeKernel(const Graph& graph, const KernelGroup& group, ChannelsLastTranspose direction,
                              std::unique_ptr<Kernel> copy)
      : direction_(direction), copy_(std::move(copy)) {
    const Node& node = graph.nodes()[group.nodes[0]];
    const ValueId image = direction == ChannelsLastTranspose::ToChannelsFirst ? node.outputs[0] : node.inputs[0];
    const Shape& shape = graph.type(image).shape;
    image_layout_ = onednn::native_layout(onednn::channels_last_f32(dnnl::memory::dims(shape.begin(), shape.end())));
    bytes_ = size_t(graph.type(image).nbytes());
  }

  void run(const KernelArgs& args) override {
    if (relabeled_) {
      std::memcpy(args.outputs[0], args.inputs[0], bytes_);  // (where the memory plan could not alias them)
    } else {
      copy_->run(args);
    }
  }

  std::string implementation() const override {
    return relabeled_ ? "layout Transpose (channels-last relabeled)" : copy_->implementation();
  }

  std::optional<NativeLayout> native_output_layout(size_t output) const override {
    if (output != 0 || direction_ != ChannelsLastTranspose::ToChannelsFirst) return std::nullopt;
    return image_layout_;
  }
  void use_native_output(size_t /*output*/) override { relabeled_ = true; }

  bool can_read_input_as(size_t input, const NativeLayout& layout) const override {
    return input == 0 && direction_ == ChannelsLastTranspose::ToChannelsLast && layout.kind == kOneDnnLayout &&
           onednn::layout_desc(layout) == onednn::layout_desc(image_layout_);
  }
  std::optional<NativeLayout> native_input_layout(size_t input) const override {
    if (input != 0 || direction_ != ChannelsLastTranspose::ToChannelsLast) return std::nullopt;
    return image_layout_;
  }
  void read_input_as(size_t /*input*/, const NativeLayout& /*layout*/) override { relabeled_ = true; }

  std::optional<size_t> output_is_input_bytes() const override {
    return relabeled_ ? std::optional<size_t>(0) : std::nullopt;
  }

 private:
  ChannelsLastTranspose direction_;
  std::unique_ptr<Kernel> copy_;  // the row-major Transpose
  NativeLayout image_layout_;     // the channels-first side's channels-last layout
  size_t bytes_ = 0;
  bool relabeled_ = false;
};

}  // namespace

std::optional<ChannelsLastTranspose> channels_last_transpose(const Graph& graph, const KernelGroup& group) {
  if (group.nodes.size() != 1 || group.inputs.size() != 1 || group.outputs.size() != 1) return std::nullopt;
  const Node& node = graph.nodes()[group.nodes[0]];
  if (node.op != "Transpose" || !node.domain.empty() || node.outputs.size() != 1) return std::nullopt;
  const TensorType& type = graph.type(node.inputs[0]);
  const int64_t rank = int64_t(type.rank());
  if (type.dtype != DType::Float32 || rank < 3 || rank > 5) return std::nullopt;
  const std::vector<int64_t> perm = node.attrs.get_ints("perm");
  if (perm == channels_first_perm(rank)) return ChannelsLastTranspose::ToChannelsFirst;
  if (perm == channels_last_perm(rank)) return ChannelsLastTranspose::ToChannelsLast;
  return std::nullopt;
}

std::unique_ptr<Kernel> make_channels_last_transpose_kernel(const Graph& graph, const KernelGroup& group) {
  const std::optional<ChannelsLastTranspose> direction = channels_last_transpose(graph, group);
  if (!direction) return nullptr;
  std::unique_ptr<Kernel> copy = make_layout_kernel(graph, group);
  if (!copy) return nullptr;
  return std::make_unique<ChannelsLastTransposeKernel>(graph, group, *direction, std::move(copy));
}

}  // namespace orchid::runtime::cpu
