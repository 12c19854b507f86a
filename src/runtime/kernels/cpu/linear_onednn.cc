// STUB (being written): oneDNN Conv / ConvTranspose / MatMul kernels.
#include "runtime/kernels/cpu/registry.h"

namespace orchid::runtime::cpu {

std::unique_ptr<Kernel> make_linear_kernel(const Graph&, const KernelGroup&) { return nullptr; }
bool linear_can_absorb(const Graph&, const KernelGroup&, const Node&) { return false; }

}  // namespace orchid::runtime::cpu
