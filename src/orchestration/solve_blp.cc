// solve_blp: the lazy-cut loop around a Solver (solver.h). The model alone
// admits cyclic selections of multi-output kernels; each round checks the
// solver's answer for an execution order and, when there is none, adds the
// cut execution_order gives (it excludes that selection and no executable
// one), so the final answer is the cheapest executable selection.
#include <algorithm>

#include "orchestration/solver.h"
#include "support/error.h"

namespace orchid::orchestration {
namespace {

// Each round excludes one more selection, so the loop ends; the cap only
// turns a pathological problem (exponentially many cyclic optima) into an
// error instead of a hang.
constexpr int kMaxRounds = 1000;

}  // namespace

BlpSolution solve_blp(Solver& solver, BlpProblem problem, const SolveOptions& options) {
  double seconds = 0;
  bool every_round_proven = true;
  for (int round = 1; round <= kMaxRounds; ++round) {
    SolveOptions round_options = options;
    round_options.time_limit_seconds = std::max(options.min_round_seconds, options.time_limit_seconds - seconds);
    BlpSolution solution = solver.solve_once(problem, round_options);
    seconds += solution.seconds;
    every_round_proven = every_round_proven && solution.proven_optimal;
    solution.seconds = seconds;
    solution.rounds = round;
    solution.proven_optimal = every_round_proven;
    if (!solution.feasible) return solution;

    OrderResult order = execution_order(problem, solution.chosen);
    if (order.order) {
      solution.chosen = std::move(*order.order);
      return solution;
    }
    problem.cuts.push_back(std::move(order.cut));
    // A cut that let the same selection through would loop forever.
    ORCHID_CHECK(!satisfies_constraints(problem, solution.chosen))
        << "BLP cut does not exclude the selection it was made for";
  }
  ORCHID_CHECK(false) << "BLP: no executable selection after " << kMaxRounds << " rounds of cuts";
  return {};
}

}  // namespace orchid::orchestration
