// The epilogues of Orchid's own linear kernels (direct convolutions, GEMM
// deconvolution): what oneDNN would run as bias and post-ops
// (onednn_linear_spec.h), applied to runs of one output channel while they
// are in cache.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/kernels/cpu/onednn_linear_spec.h"

namespace orchid::runtime::cpu {

// Whether LinearEpilogue applies this epilogue: bias, the eltwise
// algorithms fission's activations become, and binary ops with a runtime
// tensor of the output's shape or per-channel constants.
bool epilogue_supported(const onednn::Epilogue& e);

// y = e(y) over n floats, oneDNN's eltwise semantics (vectorized float
// exp / sigmoid / tanh of fast_math).
void apply_eltwise(const onednn::Epilogue& e, float* y, int64_t n);

// A group's bias (onednn::LinearBias) and its other epilogues in order, on
// runs of one output channel (Conv, ConvTranspose: channel axis 1) or of
// consecutive channels (MatMul: the channel is the column).
class LinearEpilogue {
 public:
  // Requires every epilogue of `spec` to be epilogue_supported.
  LinearEpilogue(const Graph& graph, const KernelGroup& group, const onednn::LinearSpec& spec);
  // Before a run: reads the runtime bias and the binary operands.
  void bind(const KernelArgs& args);
  // After bind: binary operand `input` (a group input) is read from `data`
  // instead (a copy of it in the layout the kernel writes its output in).
  void rebind_tensor(size_t input, const float* data);
  // The group inputs that are runtime binary operands.
  std::vector<size_t> tensor_inputs() const;
  float bias(int64_t channel) const { return bias_[channel]; }
  const float* biases() const { return bias_.data(); }
  // The epilogues after the bias on y[0, n), which are the output's elements
  // [offset, offset + n) of channel `channel`.
  void apply(float* y, int64_t offset, int64_t channel, int64_t n) const { apply_run(y, offset, channel, n, false); }
  // The same on y[0, n) that are the output's elements [offset, offset + n)
  // of channels [channel, channel + n) (a row segment of a MatMul).
  void apply_columns(float* y, int64_t offset, int64_t channel, int64_t n) const {
    apply_run(y, offset, channel, n, true);
  }
  // Whether nothing follows the bias (apply does nothing).
  bool only_bias() const { return tail_.empty(); }
  // Whether no epilogue after the bias has per-channel constants: apply may
  // then run over elements of several channels at once where the runtime
  // operands are laid out as the output is (a channels-last kernel's
  // tensors, their offsets the output's).
  bool without_channel_constants() const;
  // Whether the kernel reads group input `input` at run time.
  bool reads_input(size_t input) const;

 private:
  struct Step {
    onednn::Epilogue epilogue;
    int tensor_input = -1;  // Binary with a runtime tensor: its group input
    const float* tensor = nullptr;
  };
  void apply_run(float* y, int64_t offset, int64_t channel, int64_t n, bool columns) const;

  onednn::LinearBias bias_;
  std::vector<Step> tail_;
};

}  // namespace orchid::runtime::cpu
