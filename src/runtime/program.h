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
  std::string generated_source = {};
  std::string library_path = {};
  std::string library_sha256 = {};  // recorded when built; checked before loading
};

// Checks that the kernels run in an order where each kernel's inputs are
// graph inputs, constants or outputs of earlier kernels, that each value has
// at most one writer, and that every graph output is written; internal error
// otherwise. (A node may be computed in several kernels, or in none when no
// one reads it.)
void verify_program(const Program& program);

}  // namespace orchid::runtime
