// Solvers of the orchestration BLP (blp_model.h) behind one small interface.
// solver_cbc.cc is the only file that includes COIN-OR CBC.
#pragma once

#include <memory>
#include <string>

#include "orchestration/blp_model.h"

namespace orchid::orchestration {

struct SolveOptions {
  double time_limit_seconds = 60;  // on expiry the best selection found, not proven optimal
  // An executable selection to start from (kernel indices; empty: none): the
  // solver's first incumbent, so a solve cut short by the time limit returns
  // nothing worse. Cuts never exclude it (they only exclude selections
  // without an execution order).
  std::vector<size_t> start = {};
  // solve_blp gives every round at least this long, even once the time
  // limit is spent: enough to read back a start selection or to find a first
  // one on a small part. Tests set 0 to hit the limit deterministically.
  double min_round_seconds = 0.5;
};

class Solver {
 public:
  virtual ~Solver() = default;
  // One solve of the model as stated (cuts included); `chosen` in index
  // order. Does not check executability. feasible=false with
  // proven_optimal=true: proven infeasible; with proven_optimal=false: the
  // time limit came before any selection was found.
  virtual BlpSolution solve_once(const BlpProblem& problem, const SolveOptions& options) = 0;
  // Which solver, and how configured: a selection one solver's time limit
  // cut short is not the best another one finds (plan_cache.h).
  virtual std::string identity() const = 0;
};

// COIN-OR CBC, exact (proven optimal unless the time limit is hit).
std::unique_ptr<Solver> make_cbc_solver();
// Exact depth-first search over selections with pruning, for tests on small
// problems (about 25 kernels take milliseconds, 36 about a second); at most
// 40 kernels, orchid::InternalError beyond that. Honours the time limit.
std::unique_ptr<Solver> make_brute_force_solver();

// Solves to an executable selection: solve_once, then execution_order; while
// the selection has no order, add its cut and solve again. The solution's
// `chosen` is in execution order; `seconds` and `rounds` cover every round,
// proven_optimal holds only if every round was proven. The time limit covers
// all rounds together. More than 1000 rounds throw orchid::InternalError.
BlpSolution solve_blp(Solver& solver, BlpProblem problem, const SolveOptions& options = {});

}  // namespace orchid::orchestration
