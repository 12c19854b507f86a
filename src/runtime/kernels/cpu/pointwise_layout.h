// Pointwise kernels in any layout. A kernel whose nodes are all elementwise
// and whose runtime inputs and outputs all have one shape (scalars aside)
// computes the same values on any arrangement of those elements, as long as
// every operand has the same arrangement. So between convolutions that keep
// their tensors channels-last or blocked (a SiLU the plan did not fuse into
// the conv, a residual Add), such a kernel reads and writes that layout
// instead of making each conv around it convert to and from row-major.
#pragma once

#include <memory>

#include "runtime/kernel.h"

namespace orchid::runtime::cpu {

// Whether `group` is such a kernel: every node an elementwise primitive of
// the default domain; every output float32 of one shape of rank 3 to 5;
// every input either of a single element or a float32 runtime value of that
// shape.
bool is_pointwise_group(const Graph& graph, const KernelGroup& group);

// `kernel` (which computes `group` on row-major buffers) wrapped so that it
// takes the first oneDNN layout a producer offers for one of its inputs and
// then computes in it: inputs that arrive row-major are converted into it
// first, outputs whose readers want row-major are converted back, and the
// others are offered in it. The kernel itself unless is_pointwise_group.
std::unique_ptr<Kernel> in_any_layout(std::unique_ptr<Kernel> kernel, const Graph& graph, const KernelGroup& group);

}  // namespace orchid::runtime::cpu
