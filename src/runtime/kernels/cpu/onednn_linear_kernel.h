// The oneDNN kernel object for an analysed linear group (see
// onednn_linear_spec.h); make_linear_kernel is the registry's entry point.
#pragma once

#include <memory>

#include "runtime/kernel.h"
#include "runtime/kernels/cpu/onednn_linear_spec.h"

namespace orchid::runtime::cpu::onednn {

// Creates the primitive (and reorders constant weights) now; throws
// dnnl::error when oneDNN has no implementation for the problem.
std::unique_ptr<Kernel> build_linear_kernel(const Graph& graph, const KernelGroup& group, const LinearSpec& spec);

}  // namespace orchid::runtime::cpu::onednn
