// What the channels-last direct convolutions share (the variant "direct
// channels-last", direct_conv.h): pointwise ones with pixels as the GEMM's
// rows (direct_pointwise_channels_last.cc), grouped ones whose groups
// have whole vectors of output channels (direct_grouped_channels_last.cc)
// and depthwise ones (direct_depthwise_channels_last.cc).
// They compute their output channels-last (oneDNN's acdb), which is where
// the tensor lives when its readers take it (a native layout), else they
// transpose it to NCHW; they read their input in the layouts their compute
// takes in place, else convert it to channels-last first; and a runtime
// operand of the epilogue (a residual Add) is read channels-last, in place
// or converted once per run.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/kernels/cpu/direct_internal.h"
#include "runtime/kernels/cpu/layout_strided_copy.h"
#include "runtime/kernels/cpu/linear_epilogue.h"

namespace orchid::runtime::cpu::direct {

// Where element (n, c, h, w) of a 4-D tensor lies in a oneDNN layout with
// dense planes (h sh = h w sw) and at most one inner block, on the channels:
// offset + n sn + (c / block) sc + (h w + w) sw + (c % block) channel, where
// NCHW and NHWC are one block of all channels (channel = their stride).
struct ChannelBlockedLayout {
  int64_t sn = 0, sc = 0, sw = 0, block = 1, channel = 1, offset = 0;
  // Whether the `channels` channels of a pixel are consecutive (NHWC).
  bool channels_last(int64_t channels) const { return channel == 1 && block >= channels && sw >= channels; }
};
std::optional<ChannelBlockedLayout> channel_blocked(const dnnl::memory::desc& md);

// n zeroed floats in `storage`, starting on a 64-byte boundary (packed
// weights: a vector load across two cache lines costs two).
float* aligned_floats(std::vector<float>& storage, int64_t n);

// The input pixels a tile of `tile` (<= kMaxTapTile) consecutive output
// pixels of a conv of shape `s` reads, from output pixel q0 (flat over the
// image's rows): pixels[t * tile + r] is where output pixel q0 + r reads
// tap t of `image` (a pixel's channel 0; pixels `pixel` floats apart), or
// `zeros` in the padding; past `rows`, the last pixel again.
inline constexpr int64_t kMaxTapTile = 16;
void tap_pixels(const ConvShape& s, const float* image, int64_t pixel, const float* zeros, int64_t q0, int64_t rows,
                int64_t tile, const float** pixels);

// Whether the spec's epilogues after the bias are one ReLU.
bool only_relu(const onednn::LinearSpec& spec);

class ChannelsLastConvKernel : public Kernel {
 public:
  void run(const KernelArgs& args) final;
  bool reads_input_at_run(size_t input) const override;
  std::optional<NativeLayout> native_output_layout(size_t output) const override;
  void use_native_output(size_t output) override;
  bool can_read_input_as(size_t input, const NativeLayout& layout) const override;
  std::optional<NativeLayout> native_input_layout(size_t input) const override;
  void read_input_as(size_t input, const NativeLayout& layout) override;

 protected:
  // `in_place(layout, s)`: whether compute reads x in a layout as it is
  // (else x is converted to channels-last first).
  using InPlace = bool (*)(const ChannelBlockedLayout&, const ConvShape&);
  ChannelsLastConvKernel(const Graph& graph, const KernelGroup& group, const onednn::LinearSpec& spec,
                         const ConvShape& s, InPlace in_place);
  // y [n][oh][ow][cout] = the conv of x (in layout `in`), epilogue applied
  // (its runtime operands already channels-last).
  virtual void compute(const float* x, const ChannelBlockedLayout& in, float* y) = 0;

  ConvShape s_;
  LinearEpilogue epilogue_;
  bool relu_ = false;  // the epilogue is one ReLU (a tile may apply it)

 private:
  // A runtime operand of the epilogue, and how it becomes channels-last
  // (nullopt: it is).
  struct Operand {
    size_t input;
    std::optional<StridedCopy> to_channels_last;
  };
  const Operand* operand(size_t input) const;

  InPlace in_place_;
  int x_input_ = -1;
  dnnl::memory::desc in_md_, out_md_;  // channels-last x and y
  ChannelBlockedLayout in_;
  std::optional<StridedCopy> x_to_channels_last_;  // when compute cannot read x as it is
  StridedCopy row_major_out_;                      // channels-last -> NCHW
  bool native_out_ = false;
  std::vector<Operand> operands_;
};

// The kernels (nullptr when the shape is not theirs).
std::unique_ptr<Kernel> make_channels_last_pointwise(const Graph& graph, const KernelGroup& group,
                                                     const onednn::LinearSpec& spec, const ConvShape& s);
std::unique_ptr<Kernel> make_channels_last_grouped(const Graph& graph, const KernelGroup& group,
                                                   const onednn::LinearSpec& spec, const ConvShape& s);
std::unique_ptr<Kernel> make_channels_last_depthwise(const Graph& graph, const KernelGroup& group,
                                                     const onednn::LinearSpec& spec, const ConvShape& s);
bool channels_last_pointwise_shape(const ConvShape& s);
bool channels_last_grouped_shape(const ConvShape& s);
// One channel per group, whole vectors of channels.
bool channels_last_depthwise_shape(const ConvShape& s);

}  // namespace orchid::runtime::cpu::direct
