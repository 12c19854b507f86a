#include "pipeline.h"

#include "fission/fission.h"
#include "orchestration/baseline_plan.h"

namespace orchid {

runtime::Program compile(const Graph& graph, const CompileOptions& /*options*/) {
  runtime::Program program;
  program.graph = fission::fission(graph);
  program.kernels = orchestration::plan_baseline(program.graph);
  return program;
}

}  // namespace orchid
