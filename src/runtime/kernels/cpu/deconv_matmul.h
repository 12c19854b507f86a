// ConvTranspose whose kernel equals its stride (U-Net's 2x2 stride 2
// upsampling) as one oneDNN matrix product in channels-last layout.
#pragma once

#include <memory>

#include "runtime/kernel.h"
#include "runtime/kernels/cpu/onednn_linear_spec.h"

namespace orchid::runtime::cpu {

// The kernel ("onednn deconv as matmul") of a float32 2-D ConvTranspose group
// with one group, kernel = stride, no padding or dilation, constant weights
// and bias / eltwise epilogues; nullptr for any other group.
std::unique_ptr<Kernel> make_deconv_matmul_kernel(const Graph& graph, const KernelGroup& group,
                                                  const onednn::LinearSpec& spec);
// Whether the group has that form (make_deconv_matmul_kernel builds it unless
// oneDNN has no matmul for it).
bool deconv_matmul_applies(const Graph& graph, const onednn::LinearSpec& spec);

}  // namespace orchid::runtime::cpu
