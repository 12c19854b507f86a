// What a oneDNN linear kernel computes, worked out from the graph alone (no
// oneDNN objects): the anchor's problem in oneDNN's logical dimensions and
// the epilogue nodes as bias / eltwise / binary post-ops. linear_group_supported
// and make_linear_kernel both go through these functions, so a group the plan
// forms is exactly a group the kernel can build.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <optional>
#include <vector>

#include "ir/graph.h"
#include "runtime/kernel.h"

namespace orchid::runtime::cpu::onednn {

enum class LinearKind { Conv, ConvTranspose, MatMul };

// The anchor node as a oneDNN problem. Dimensions are oneDNN's logical ones;
// the runtime's row-major buffers are described by the *_strides (elements).
struct LinearAnchor {
  LinearKind kind = LinearKind::Conv;
  ValueId x = kNoValue, w = kNoValue, b = kNoValue;  // b: the operator's own bias input, if any
  dnnl::memory::dims src, weights, dst;
  // The layout of `w` over `weights`: the ONNX weight layout, or for a
  // MatMul whose second operand is a Transpose of w computed in the kernel
  // (a prologue), w's row-major strides permuted.
  dnnl::memory::dims weights_strides;
  // Conv / ConvTranspose only.
  dnnl::memory::dims strides, dilations, pad_l, pad_r;  // dilations as oneDNN counts them (ONNX's - 1)
  int64_t groups = 1;
  // The axis of dst that carries the output channel (bias axis), and its size;
  // 0 channels when there is none (MatMul with a 1-D second operand).
  size_t channel_axis = 1;
  int64_t channels = 0;
};

enum class EpilogueKind { Bias, Eltwise, Binary };

// One epilogue node. Bias: `values` (one per channel) are added to the
// primitive's bias. Eltwise: y = algorithm(x; alpha, beta). Binary: y =
// algorithm(x, tensor), the tensor a runtime value (`tensor`) or a constant
// (`values`, broadcast over dims `broadcast`).
struct Epilogue {
  EpilogueKind kind = EpilogueKind::Eltwise;
  dnnl::algorithm algorithm = dnnl::algorithm::undef;
  float alpha = 0, beta = 0;
  std::vector<float> values;
  dnnl::memory::dims broadcast;
  ValueId tensor = kNoValue;
};

// The anchor of a float32 Conv / ConvTranspose / MatMul node in a form oneDNN
// computes, else nullopt.
std::optional<LinearAnchor> analyze_anchor(const Graph& graph, const Node& node);

// `node` as an epilogue reading `current` (the group's output so far);
// `bias_allowed` while no post-op has been added yet. nullopt if it is not
// absorbable.
std::optional<Epilogue> analyze_epilogue(const Graph& graph, const LinearAnchor& anchor, ValueId current,
                                         const Node& node, bool bias_allowed);

// Appends `e` to a group's epilogues, folding it into the previous one when
// both are affine (eltwise_linear) or both clamps (eltwise_clip). False when
// an eltwise algorithm would occur twice with different alpha/beta: oneDNN
// 2.6's post-op injectors then apply the first one's parameters to both
// (seen with conv: linear(0.2) ... linear(1, 0.5) computed 0.2x twice).
bool append_epilogue(std::vector<Epilogue>& epilogues, Epilogue e);

// The whole group: anchor and epilogues, when every node is supported and the
// group writes only its last node's output. Before a MatMul anchor the group
// may hold the Transpose that computes its second operand from a
// non-constant value (read by the MatMul only, as the group writes one
// value): oneDNN reads the Transpose's input through permuted strides.
struct LinearSpec {
  LinearAnchor anchor;
  std::vector<Epilogue> epilogues;
  TensorType out_type;
};
std::optional<LinearSpec> analyze_group(const Graph& graph, const KernelGroup& group);

// A group's bias per output channel: the anchor's own bias (a constant, or a
// runtime input added before each run) plus the Bias epilogues (folded Adds).
// One float per channel (at least one), at an address that never changes.
class LinearBias {
 public:
  LinearBias(const Graph& graph, const KernelGroup& group, const LinearSpec& spec);
  // Whether the group has a bias at all (oneDNN then binds a bias argument).
  bool present() const { return present_; }
  // Before a run: the constant part plus the runtime bias input, if any.
  void bind(const KernelArgs& args);
  float operator[](int64_t channel) const { return values_[size_t(channel)]; }
  const float* data() const { return values_.data(); }
  float* data() { return values_.data(); }
  bool reads_input(size_t input) const { return int(input) == input_; }

 private:
  std::vector<float> constant_, values_;
  int input_ = -1;  // the runtime bias's group input
  bool present_ = false;
};

// A constant's elements as floats (weights, biases, post-op operands).
std::vector<float> constant_values(const Tensor& t);
// The value of a constant whose elements all equal it (a scalar, or one
// broadcast); nullopt for a runtime value or an uneven constant.
std::optional<float> uniform_constant(const Graph& graph, ValueId id);
// Whether `id` is a float32 value.
bool is_f32(const Graph& graph, ValueId id);

// Row-major strides of `dims`.
dnnl::memory::dims dense_strides(const dnnl::memory::dims& dims);

}  // namespace orchid::runtime::cpu::onednn
