#include "pipeline.h"

#include <algorithm>
#include <memory>

#include "cost/cost_model.h"
#include "fission/fission.h"
#include "orchestration/baseline_plan.h"
#include "runtime/memory_check.h"

namespace orchid {

namespace {

// What a small graph costs as the pipeline plans it: orchestration's planned
// time (measured kernels where profiling is on), or the baseline plan's.
double planned_seconds(const Graph& graph, const PipelineOptions& options) {
  orchestration::OrchestrateOptions o = options.orchestration;
  o.progress = nullptr;
  // A small graph: a few profile rounds and seconds of BLP settle it.
  o.max_rounds = std::min(o.max_rounds, 4);
  o.solver_time_limit = std::min(o.solver_time_limit, 5.0);
  if (!options.fusion) o.candidates.max_kernel_nodes = 1;  // one kernel per primitive, as the baseline
  orchestration::OrchestrationReport report;
  orchestration::orchestrate(graph, o, &report);
  return report.planned_seconds;
}

// Derivation's decisions kept in the cost database, per machine (and thread
// count) and per kind of costs (measured, or estimates with --no-profile).
void keep_decisions(const PipelineOptions& options, derivation::DeriveOptions& d) {
  cost::CostModelOptions cost_options;
  cost_options.cache_path = cost::cost_cache_path(options.orchestration.cache_dir);
  cost_options.threads = options.orchestration.threads;
  cost_options.backend = options.orchestration.backend;
  auto model = std::make_shared<cost::CostModel>(cost_options);
  const std::string costs = options.orchestration.profile ? " measured" : " estimated";
  d.load_decision = [model, costs](const std::string& key) { return model->cache().get_meta(model->machine(), key + costs); };
  d.store_decision = [model, costs](const std::string& key, const std::string& value) {
    model->cache().set_meta(model->machine(), key + costs, value);
  };
}

// Derivation's options; its cost function plans small graphs as the pipeline does.
derivation::DeriveOptions derive_options(const PipelineOptions& options) {
  derivation::DeriveOptions d;
  d.search = options.derive_search;
  d.max_estimate_ratio = options.derive_max_estimate_ratio;
  d.budget_seconds = options.derive_budget_seconds;
  keep_decisions(options, d);
  d.cost = [&options](const Graph& g) { return planned_seconds(g, options); };
  if (options.orchestration.progress) {
    d.progress = [&options](size_t done, size_t total) {
      options.orchestration.progress({"deriving", done, total, -1});
    };
  }
  return d;
}

}  // namespace

Graph derive_primitives(Graph primitives, const PipelineOptions& options, derivation::DeriveReport* report) {
  return derivation::derive(primitives, derive_options(options), report);
}

runtime::Program compile(const Graph& graph, const PipelineOptions& options,
                         orchestration::OrchestrationReport* report, derivation::DeriveReport* derive_report) {
  runtime::check_values_fit(graph);
  Graph primitives = fission::fission(graph);
  if (options.derive && options.fusion && options.derive_jointly) {
    // Derived forms beside their regions: orchestration chooses jointly with fusion.
    derivation::DeriveReport local_derive;
    derivation::DeriveReport& derived_report = derive_report ? *derive_report : local_derive;
    derivation::DerivedGraph derived = derivation::derive_alternatives(primitives, derive_options(options), &derived_report);
    orchestration::OrchestrationReport local;
    orchestration::OrchestrationReport& orchestrated = report ? *report : local;
    runtime::Program program = orchestration::orchestrate(std::move(derived.graph), std::move(derived.alternatives),
                                                          options.orchestration, &orchestrated);
    derivation::note_plan_choices(derived_report, orchestrated.derived_nodes_chosen);
    return program;
  }
  if (options.derive) primitives = derivation::derive(primitives, derive_options(options), derive_report);
  if (options.fusion) return orchestration::orchestrate(std::move(primitives), options.orchestration, report);
  runtime::Program program;
  program.graph = std::move(primitives);
  program.kernels = orchestration::plan_baseline(program.graph);
  return program;
}

}  // namespace orchid
