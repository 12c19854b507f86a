// The baseline plan: one kernel per primitive, except that a linear primitive
// (Conv, ConvTranspose, MatMul) takes along the epilogue nodes the backend
// absorbs for free (oneDNN post-ops: bias, activation, an added tensor). The
// `--no-fusion` plan; orchestration improves on it.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "runtime/kernel.h"

namespace orchid::orchestration {

std::vector<runtime::KernelGroup> plan_baseline(const Graph& graph);

}  // namespace orchid::orchestration
