// ConvTranspose groups as GEMM + col2im (ONNX Runtime's method), for the
// shapes where oneDNN 2.6's deconvolution is slow (see the .cc for numbers).
#pragma once

#include <memory>

#include "runtime/kernel.h"
#include "runtime/kernels/cpu/onednn_linear_spec.h"

namespace orchid::runtime::cpu {

// The kernel ("gemm deconv (col2im)") of a float32 1-D/2-D/3-D ConvTranspose
// group with constant weights and the epilogues linear_epilogue.h applies;
// nullptr for any other group (runtime weights, an eltwise it lacks).
std::unique_ptr<Kernel> make_conv_transpose_gemm_kernel(const Graph& graph, const KernelGroup& group,
                                                        const onednn::LinearSpec& spec);
// Whether make_conv_transpose_gemm_kernel takes the group.
bool conv_transpose_gemm_applies(const Graph& graph, const onednn::LinearSpec& spec);

// Whether the GEMM kernel is the faster one for this ConvTranspose problem
// (the rule derived from the measurements at the top of the .cc).
bool conv_transpose_gemm_preferred(const onednn::LinearSpec& spec);

}  // namespace orchid::runtime::cpu
