// The compiler pipeline as one readable function (DESIGN.md): an imported
// graph in, a program of kernels out.
#pragma once

#include "ir/graph.h"
#include "runtime/program.h"

namespace orchid {

struct CompileOptions {
  // Reserved for orchestration: false keeps the baseline plan (one kernel per
  // primitive, linear epilogues absorbed), which is all that exists today.
  bool fusion = false;
};

runtime::Program compile(const Graph& graph, const CompileOptions& options = {});

}  // namespace orchid
