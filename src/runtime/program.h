// A compiled program: the primitive graph (weights included) and the kernels
// that compute it, in execution order. `orchid compile` writes it as an
// artifact (artifact.h); Executable (executable.h) runs it.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "runtime/kernel.h"

namespace orchid::runtime {

struct Program {
  Graph graph;
  std::vector<KernelGroup> kernels;
  // The fused kernels (KernelGroup::symbol non-empty) live in one shared
  // object generated for this program: its C++ source (codegen/cpu) and the
  // built library's path (in the kernel cache, or kernels.so in an artifact).
  std::string generated_source;
  std::string library_path;
};

// Checks that the kernels cover every node exactly once, in an order where
// each kernel's inputs are graph inputs, constants or outputs of earlier
// kernels; internal error otherwise.
void verify_program(const Program& program);

}  // namespace orchid::runtime
