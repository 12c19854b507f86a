// The CPU renderer of the kernel IR: one C++ function with the ABI of
// runtime/kernels/cpu/generated_kernel.h, for GCC or Clang with OpenMP. A
// parallel Region is an OpenMP parallel region with the buffers re-declared
// __restrict inside it; a Shared loop in one is an `omp for`. Scalar
// functions use the prelude of emit_library (fast_math, orchid_max/min,
// orchid_fold).
#pragma once

#include <string>

#include "codegen/kernel_ir/kernel_ir.h"

namespace orchid::codegen::cpu {

std::string render(const kir::Kernel& kernel, const std::string& symbol);

// A C++ literal of a float (exact: hexadecimal, inf and NaN spelled out).
std::string float_literal(double value);

}  // namespace orchid::codegen::cpu
