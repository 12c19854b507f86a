// STUB (being written): layout kernels.
#include "runtime/kernels/cpu/registry.h"

namespace orchid::runtime::cpu {

std::unique_ptr<Kernel> make_layout_kernel(const Graph&, const KernelGroup&) { return nullptr; }

}  // namespace orchid::runtime::cpu
