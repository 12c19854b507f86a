// Shared by the direct convolution kernels (direct_conv.cc: the entry
// points and depthwise; direct_gemm_conv.cc: pointwise and dense, and
// direct_conv_transpose.cc, on the register-blocked GEMM of direct_gemm.h).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/kernels/cpu/onednn_linear_spec.h"

namespace orchid::runtime::cpu::direct {

// A 2-D convolution's sizes, ONNX's layouts: X [n, cin, ih, iw], W [cout,
// cin / groups, kh, kw], Y [n, cout, oh, ow].
struct ConvShape {
  int64_t n = 1, cin = 1, ih = 1, iw = 1, cout = 1, oh = 1, ow = 1, kh = 1, kw = 1, groups = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
};
ConvShape conv_shape(const Graph& graph, const onednn::LinearAnchor& anchor);

// What every direct conv needs: a float32 2-D Conv or ConvTranspose with
// constant weights whose epilogues LinearEpilogue applies.
bool operands_supported(const Graph& graph, const onednn::LinearSpec& spec);

// Outputs larger than this (twice the L2 of both cores here) are written
// with stores that bypass the caches (simd::store_stream) where the kernel
// writes them in a pass of its own and does not read them back: reading
// each line before writing it was a quarter of GCN's 21-channel 256 -> 512
// upsampling. (Dense convs write their rows from the GEMM's registers; a
// streamed copy of cached rows made GCN's 21 -> 21 3x3 conv 7% slower.)
inline constexpr int64_t kStreamBytes = int64_t(8) << 20;

std::unique_ptr<Kernel> make_depthwise(const Graph& graph, const KernelGroup& group, const onednn::LinearSpec& spec,
                                       const ConvShape& s);
std::unique_ptr<Kernel> make_pointwise(const Graph& graph, const KernelGroup& group, const onednn::LinearSpec& spec,
                                       const ConvShape& s);
// Any kernel, stride 1, one GEMM per group: an implicit GEMM over the padded plane.
std::unique_ptr<Kernel> make_dense(const Graph& graph, const KernelGroup& group, const onednn::LinearSpec& spec,
                                   const ConvShape& s);

// ConvTranspose, 2-D, one group: an implicit GEMM per output phase.
std::unique_ptr<Kernel> make_conv_transpose(const Graph& graph, const KernelGroup& group,
                                            const onednn::LinearSpec& spec);

}  // namespace orchid::runtime::cpu::direct
