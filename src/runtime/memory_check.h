// Refuses, before allocating, what would not fit in memory_limit_bytes()
// (support/memory_limit.h): orchid::Error naming the largest tensor.
#pragma once

#include "ir/graph.h"
#include "runtime/program.h"

namespace orchid::runtime {

// Each value of `graph` alone, and its inputs, constants and outputs
// together (what any run holds at once), within the limit. For a graph just
// imported: before compiling or making inputs.
void check_values_fit(const Graph& graph);

// The program's weights, its planned arena (dense layouts) and its outputs
// within the limit. Executable checks this before it allocates.
void check_program_fits(const Program& program);

}  // namespace orchid::runtime
