// Orchestration (Korch): candidates -> costs -> BLP -> program.
//
// Every candidate kernel (candidates.h) gets a cost: measured on this
// machine when the cost cache has it, else the calibrated analytical
// estimate. The BLP (one per part) picks the cheapest set of kernels. The
// kernels it picks whose costs are only estimates are then built and timed
// (fused ones generated and compiled together), and the BLP is solved again
// with the new numbers, until every chosen kernel's cost is measured: the
// plan is optimal for measured costs of the kernels it uses, while the
// thousands of candidates it never considers competitive are not profiled.
// With profiling off, the estimates alone decide.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "ir/alternatives.h"
#include "orchestration/candidates.h"
#include "runtime/program.h"

namespace orchid::orchestration {

struct Progress {
  std::string stage;   // "candidates", "profiling", "solving", "codegen"
  size_t done = 0;
  size_t total = 0;
  double eta_seconds = -1;  // < 0: unknown
};

struct OrchestrateOptions {
  // The target whose kernels are planned, built and timed; nullptr: the CPU.
  const backend::Backend* backend = nullptr;
  bool profile = true;       // false: analytical costs only (--no-profile)
  int threads = 1;           // the thread count kernels are timed (and will run) with
  std::string cache_dir;     // empty: default_cache_dir()
  // Seconds for all BLP solves of a compile together: when they are spent,
  // each part keeps its best selection so far (the previous round's at
  // worst) and the plan is reported as not proven optimal.
  double solver_time_limit = 20;
  int max_rounds = 16;       // profile-and-resolve rounds
  CandidateOptions candidates;
  std::function<void(const Progress&)> progress;
};

enum class CostSource { Measured, Cached, Estimated };
const char* cost_source_name(CostSource source);

struct KernelCost {
  double seconds = 0;
  CostSource source = CostSource::Estimated;
};

struct OrchestrationReport {
  std::vector<Part> parts;
  size_t clusters = 0;
  size_t candidates = 0;
  size_t generated_candidates = 0;
  size_t measured = 0;         // candidates timed in this compile
  size_t cached = 0;           // candidates whose cost came from the cache
  size_t unbuildable = 0;      // candidates the backend turned down when built (priced out)
  std::string first_unbuildable;  // the first one's name and error
  int rounds = 0;              // BLP solves per part (the most of any part)
  size_t cached_solves = 0;    // part solves whose solution came from the plan cache (plan_cache.h)
  size_t alternatives = 0;     // alternative forms offered (ir/alternatives.h)
  size_t derived_forms_chosen = 0;  // of them, derived forms the plan uses
  std::vector<std::string> derived_nodes_chosen;  // their original primitives' names
  bool proven_optimal = true;  // every part's BLP proven optimal
  double planned_seconds = 0;  // the BLP's objective: chosen kernels and the layout conversions they imply
  double enumerate_seconds = 0, profile_seconds = 0, solve_seconds = 0, codegen_seconds = 0;
  bool library_cached = false;          // the program's generated library came from the cache
  std::vector<KernelCost> kernel_costs;  // per program kernel
};

// The program for a primitive graph (fission's output).
runtime::Program orchestrate(Graph graph, const OrchestrateOptions& options, OrchestrationReport* report = nullptr);
// The same with alternative forms in the graph (ir/alternatives.h): the BLP
// chooses a form per alternative jointly with the kernels, and the program
// holds the chosen forms only.
runtime::Program orchestrate(Graph graph, std::vector<Alternative> alternatives, const OrchestrateOptions& options,
                             OrchestrationReport* report = nullptr);

}  // namespace orchid::orchestration
