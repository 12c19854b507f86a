// Fused CPU code generation: a group of memory-bound primitives (elementwise,
// layout, reduce) becomes one C++ function (the ABI of
// runtime/kernels/cpu/generated_kernel.h). The group's outputs and its
// reductions are the only values written to memory: every other primitive is
// inlined into the loop that reads it, by substituting its index map (layout)
// or scalar function (elementwise) at the reader's index. Each materialized
// value is one loop nest over its shape, parallel over the outer dimension
// and vectorizable along the innermost; a reduction is an inner loop.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_ir/kernel_ir.h"
#include "ir/graph.h"
#include "runtime/kernel.h"

namespace orchid::codegen::cpu {

// Whether a node can be part of a generated kernel (its op, attributes and
// dtypes are ones the emitter handles).
bool can_fuse(const Graph& graph, const Node& node);

// Whether the emitter generates the whole group: every node can_fuse, and
// the group is one the emitter can schedule (convex; inputs and outputs as
// KernelGroup says).
bool can_generate(const Graph& graph, const runtime::KernelGroup& group);

// The group as a kernel in the kernel IR, with the CPU's schedules.
kir::Kernel lower_kernel(const Graph& graph, const runtime::KernelGroup& group);

// The C++ source of one kernel function named `symbol`, without the prelude.
std::string emit_kernel(const Graph& graph, const runtime::KernelGroup& group, const std::string& symbol);

// What decides a generated kernel's speed: the prelude and the group's code,
// without comments (which name values). Cached costs of generated kernels
// are keyed by it, so that a change to the generator re-measures exactly the
// kernels whose code it changes.
std::string code_identity(const Graph& graph, const runtime::KernelGroup& group);

// A whole translation unit: the prelude (includes, vectorizable math) and one
// function per group, named by each group's `symbol`.
std::string emit_library(const Graph& graph, const std::vector<runtime::KernelGroup>& groups);

}  // namespace orchid::codegen::cpu
