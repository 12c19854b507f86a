// The oneDNN kernel object for an analysed linear group (see
// onednn_linear_spec.h); make_linear_kernel is the registry's entry point.
#pragma once

#include <memory>

#include "runtime/kernel.h"
#include "runtime/kernels/cpu/onednn_linear_spec.h"

namespace orchid::runtime::cpu::onednn {

// The variant that adds a conv's residual (its one runtime Add operand) as
// oneDNN's sum post-op, the residual copied into dst first, instead of as a
// binary post-op: oneDNN 2.6 then keeps brgconv where the binary post-op
// sends it to its older jit kernels (ResNet's 3x3 convs + residual), at
// the cost of the copy (MobileNet-V2's 1x1 projections at 14x14 and 7x7
// were no faster so). Orchestration measures both.
inline constexpr const char* kResidualSumVariant = "onednn residual sum";

// Whether the group's spec has that form: a Conv with exactly one runtime
// binary operand, added.
bool residual_sum_applies(const LinearSpec& spec);

// Creates the primitive (and reorders constant weights) now; throws
// dnnl::error when oneDNN has no implementation for the problem.
// `residual_as_sum`: the kResidualSumVariant (residual_sum_applies must hold).
std::unique_ptr<Kernel> build_linear_kernel(const Graph& graph, const KernelGroup& group, const LinearSpec& spec,
                                            bool residual_as_sum = false);

}  // namespace orchid::runtime::cpu::onednn
