// The compiler pipeline as one readable function (DESIGN.md): an imported
// graph in, a program of kernels out.
//   fission -> candidates -> costs -> BLP -> codegen   (orchestration/orchestrate.h)
// or, with fusion off, fission -> one kernel per primitive (linear
// primitives keep the epilogues oneDNN absorbs): the baseline plan.
#pragma once

#include "ir/graph.h"
#include "orchestration/orchestrate.h"
#include "runtime/program.h"

namespace orchid {

struct CompileOptions {
  bool fusion = true;  // false: the baseline plan (`--no-fusion`)
  orchestration::OrchestrateOptions orchestration;
};

runtime::Program compile(const Graph& graph, const CompileOptions& options = {},
                         orchestration::OrchestrationReport* report = nullptr);

}  // namespace orchid
