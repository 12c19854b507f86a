// Orchid's own convolution kernels for the shapes oneDNN 2.6 runs far from
// their bounds in the runtime's NCHW layout: depthwise convolutions (one
// input channel per group, any multiplier, kernel, stride, dilation and
// padding), pointwise ones (1x1, stride 1, one group) as a register-blocked
// GEMM over the NCHW planes, and dense or grouped ones (stride 1, any
// kernel, dilation and padding, sums of at most 2048 terms per group) as an
// implicit GEMM over the padded plane; and ConvTranspose (2-D, one group, at least
// six output channels) as an implicit GEMM per output phase. All apply the group's epilogues
// (linear_epilogue.h) while the output is in cache, and read and write NCHW
// directly: no reorders.
//
// They are an alternative implementation of a linear group, the variant
// "direct" (KernelGroup::variant): orchestration offers it beside oneDNN's
// and the measured faster one is chosen.
#pragma once

#include <memory>

#include "runtime/kernel.h"
#include "runtime/kernels/cpu/onednn_linear_spec.h"

namespace orchid::runtime::cpu {

inline constexpr const char* kDirectVariant = "direct";
// Pointwise convs with pixels as the GEMM's rows and grouped ones with whole
// vectors of output channels per group, written channels-last
// (direct_channels_last.h): kernels that keep native layouts.
inline constexpr const char* kChannelsLastVariant = "direct channels-last";

// Whether a direct kernel computes this group: a float32 2-D Conv with
// constant weights, depthwise, pointwise or dense, and supported epilogues.
bool direct_conv_supported(const Graph& graph, const onednn::LinearSpec& spec);

// The kernel ("direct depthwise conv", "direct pointwise conv", "direct conv
// (implicit GEMM)"); nullptr when direct_conv_supported is false.
std::unique_ptr<Kernel> make_direct_conv_kernel(const Graph& graph, const KernelGroup& group,
                                                const onednn::LinearSpec& spec);

// Whether a channels-last kernel computes this group: a float32 2-D Conv
// with constant weights and supported epilogues (runtime operands of the
// output's shape), 1x1 of stride 1 and one group, or grouped with output
// channels per group a multiple of 16 (any kernel, stride, dilation, pads).
bool channels_last_supported(const Graph& graph, const onednn::LinearSpec& spec);
// That kernel; nullptr when channels_last_supported is false.
std::unique_ptr<Kernel> make_channels_last_kernel(const Graph& graph, const KernelGroup& group,
                                                  const onednn::LinearSpec& spec);

}  // namespace orchid::runtime::cpu
