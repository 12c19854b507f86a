// Solvers of the orchestration BLP (blp_model.h) behind one small interface.
// solver_cbc.cc is the only file that includes COIN-OR CBC.
#pragma once

#include <memory>

#include "orchestration/blp_model.h"

namespace orchid::orchestration {

struct SolveOptions {
  double time_limit_seconds = 60;  // per solver call; on expiry the best selection found, not proven optimal
};

class Solver {
 public:
  virtual ~Solver() = default;
  // One solve of the model as stated (cuts included); `chosen` in index
  // order. Does not check executability.
  virtual BlpSolution solve_once(const BlpProblem& problem, const SolveOptions& options) = 0;
};

// COIN-OR CBC, exact (proven optimal unless the time limit is hit).
std::unique_ptr<Solver> make_cbc_solver();
// Enumerates every selection: exact, for tests on small problems (at most
// ~22 kernels); orchid::InternalError beyond that.
std::unique_ptr<Solver> make_brute_force_solver();

// Solves to an executable selection: solve_once, then execution_order; while
// the selection has no order, add its cut and solve again. The solution's
// `chosen` is in execution order.
BlpSolution solve_blp(Solver& solver, BlpProblem problem, const SolveOptions& options = {});

}  // namespace orchid::orchestration
