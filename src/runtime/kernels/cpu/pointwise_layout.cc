#include "runtime/kernels/cpu/pointwise_layout.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <optional>
#include <vector>

#include "ir/op_traits.h"
#include "runtime/kernels/cpu/layout_strided_copy.h"
#include "runtime/kernels/cpu/onednn_common.h"
#include "support/error.h"

namespace orchid::runtime::cpu {

namespace {

using dnnl::memory;

// The shape every output has, when the group is pointwise.
std::optional<Shape> pointwise_shape(const Graph& graph, const KernelGroup& group) {
  for (size_t index : group.nodes) {
    const Node& node = graph.nodes()[index];
    const OpTraits* traits = op_traits(node.op);
    if (!node.domain.empty() || !traits || traits->kind != PrimitiveKind::Elementwise) return std::nullopt;
  }
  if (group.outputs.empty()) return std::nullopt;
  const TensorType& first = graph.type(group.outputs[0]);
  if (first.rank() < 3 || first.rank() > 5) return std::nullopt;
  for (ValueId id : group.outputs) {
    if (graph.type(id) != TensorType{DType::Float32, first.shape}) return std::nullopt;
  }
  for (ValueId id : group.inputs) {
    const TensorType& type = graph.type(id);
    if (type.numel() == 1) continue;
    if (type != first || graph.value(id).is_constant()) return std::nullopt;
  }
  return first.shape;
}

class PointwiseLayoutKernel : public Kernel {
 public:
  PointwiseLayoutKernel(std::unique_ptr<Kernel> inner, const Graph& graph, const KernelGroup& group, const Shape& shape)
      : inner_(std::move(inner)),
        dims_(shape.begin(), shape.end()),
        numel_(shape_numel(shape)),
        full_input_(group.inputs.size()),
        native_input_(group.inputs.size(), false),
        native_output_(group.outputs.size(), false) {
    for (size_t i = 0; i < group.inputs.size(); ++i) full_input_[i] = graph.type(group.inputs[i]).shape == shape;
  }

  void run(const KernelArgs& args) override {
    if (!layout_) return inner_->run(args);
    KernelArgs local = args;
    for (size_t i = 0; i < local.inputs.size(); ++i) {
      if (!full_input_[i] || native_input_[i]) continue;
      run_strided_copy(*into_layout_, sizeof(float), args.inputs[i], scratch(i));
      local.inputs[i] = scratch(i);
    }
    for (size_t o = 0; o < local.outputs.size(); ++o) {
      if (!native_output_[o]) local.outputs[o] = scratch(local.inputs.size() + o);
    }
    inner_->run(local);
    for (size_t o = 0; o < local.outputs.size(); ++o) {
      if (!native_output_[o]) run_strided_copy(*out_of_layout_, sizeof(float), local.outputs[o], args.outputs[o]);
    }
  }

  // Says when it computes in a native layout, and how many of its operands
  // it converts to do so (each a read and a write of a tensor).
  std::string implementation() const override {
    if (!layout_) return inner_->implementation();
    size_t converted = 0;
    for (size_t i = 0; i < full_input_.size(); ++i) converted += full_input_[i] && !native_input_[i];
    for (bool native : native_output_) converted += !native;
    return inner_->implementation() + " (in a native layout" +
           (converted ? ", converting " + std::to_string(converted) + ")" : ")");
  }

  bool reads_input_at_run(size_t input) const override { return inner_->reads_input_at_run(input); }
  bool adapts_to_neighbours() const override { return true; }

  // The first layout offered, if the copies can convert row-major operands
  // into it and out of it; after that, only the same one.
  bool can_read_input_as(size_t input, const NativeLayout& layout) const override {
    if (layout.kind != onednn::kOneDnnLayout || input >= full_input_.size() || !full_input_[input]) return false;
    const memory::desc& md = onednn::layout_desc(layout);
    if (layout_) return md == *layout_;
    const memory::desc plain = onednn::plain_f32(dims_);
    return md.dims() == dims_ && md.get_size() == plain.get_size() && onednn::layout_copy(plain, md) &&
           onednn::layout_copy(md, plain);
  }

  void read_input_as(size_t input, const NativeLayout& layout) override {
    ORCHID_CHECK(can_read_input_as(input, layout)) << "input " << input << " cannot take the layout";
    native_input_[input] = true;
    if (layout_) return;
    layout_ = onednn::layout_desc(layout);
    const memory::desc plain = onednn::plain_f32(dims_);
    into_layout_ = onednn::layout_copy(plain, *layout_);
    out_of_layout_ = onednn::layout_copy(*layout_, plain);
  }

  std::optional<NativeLayout> native_output_layout(size_t output) const override {
    if (!layout_ || output >= native_output_.size()) return std::nullopt;
    return onednn::native_layout(*layout_);
  }

  void use_native_output(size_t output) override {
    ORCHID_CHECK(layout_ && output < native_output_.size()) << "no native layout for output " << output;
    native_output_[output] = true;
  }

 private:
  // A buffer of one operand's elements: per input, then per output.
  float* scratch(size_t slot) {
    if (scratch_.size() <= slot) scratch_.resize(slot + 1);
    if (scratch_[slot].empty()) scratch_[slot].assign(size_t(numel_), 0.f);
    return scratch_[slot].data();
  }

  std::unique_ptr<Kernel> inner_;
  memory::dims dims_;
  int64_t numel_;
  std::vector<bool> full_input_;  // per input: of the outputs' shape (not a scalar)
  std::vector<bool> native_input_;
  std::vector<bool> native_output_;
  std::optional<memory::desc> layout_;  // the layout it computes in, once it takes one
  std::optional<StridedCopy> into_layout_, out_of_layout_;
  std::vector<std::vector<float>> scratch_;
};

}  // namespace

bool is_pointwise_group(const Graph& graph, const KernelGroup& group) {
  return pointwise_shape(graph, group).has_value();
}

std::unique_ptr<Kernel> in_any_layout(std::unique_ptr<Kernel> kernel, const Graph& graph, const KernelGroup& group) {
  std::optional<Shape> shape = pointwise_shape(graph, group);
  if (!shape) return kernel;
  return std::make_unique<PointwiseLayoutKernel>(std::move(kernel), graph, group, *shape);
}

}  // namespace orchid::runtime::cpu
