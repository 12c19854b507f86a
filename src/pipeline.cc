#include "pipeline.h"

#include "fission/fission.h"
#include "orchestration/baseline_plan.h"

namespace orchid {

runtime::Program compile(const Graph& graph, const CompileOptions& options,
                         orchestration::OrchestrationReport* report) {
  Graph primitives = fission::fission(graph);
  if (options.fusion) return orchestration::orchestrate(std::move(primitives), options.orchestration, report);
  runtime::Program program;
  program.graph = std::move(primitives);
  program.kernels = orchestration::plan_baseline(program.graph);
  return program;
}

}  // namespace orchid
