// The compiler pipeline as one readable function (DESIGN.md): an imported
// graph in, a program of kernels out.
//   fission -> [derive] -> candidates -> costs -> BLP -> codegen   (orchestration/orchestrate.h)
// or, with fusion off, fission -> [derive] -> one kernel per primitive
// (linear primitives keep the epilogues oneDNN absorbs): the baseline plan.
// Derivation (derivation/derive.h) finds derived forms of linear primitives,
// each costed alone as the rest of the pipeline would plan it. With fusion,
// the forms that measure faster or nearly as fast go to orchestration beside
// their originals (ir/alternatives.h), and the BLP chooses each region's
// form jointly with the kernels around it; without fusion, the faster forms
// replace their originals.
#pragma once

#include <limits>

#include "derivation/derive.h"
#include "ir/graph.h"
#include "orchestration/orchestrate.h"
#include "runtime/program.h"

namespace orchid {

struct PipelineOptions {
  bool fusion = true;   // false: the baseline plan (`--no-fusion`)
  bool derive = false;  // `--derive`
  derivation::SearchOptions derive_search = derivation::default_derive_search_options();
  // Derived forms estimated slower than this times the original are not
  // measured (derive.h); `orchid explain --measure-all` lifts it.
  double derive_max_estimate_ratio = 3;
  double derive_budget_seconds = std::numeric_limits<double>::infinity();  // derive.h's budget
  // false: faster forms replace their originals before orchestration (the
  // earlier design, kept to compare with: `--derive-replace`).
  bool derive_jointly = true;
  orchestration::OrchestrateOptions orchestration;
};

runtime::Program compile(const Graph& graph, const PipelineOptions& options = {},
                         orchestration::OrchestrationReport* report = nullptr,
                         derivation::DeriveReport* derive_report = nullptr);

// The derivation stage alone, on a primitive graph (fission's output), with
// the costs compile() would use: for `orchid explain` and the benchmarks.
Graph derive_primitives(Graph primitives, const PipelineOptions& options, derivation::DeriveReport* report);

}  // namespace orchid
