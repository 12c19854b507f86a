// Solved BLPs kept in the cost database. A warm compile states the same
// problems again (the same candidates, every cost read from the cache), so
// their solutions are read back instead of solved: CBC is the largest part
// of a warm compile on large models. The key is the problem itself, costs
// included (as exact hex floats), so a changed cost or candidate is a new
// problem; a record that does not solve its problem (a stale or corrupt
// one) is ignored and the problem solved again.
#pragma once

#include <string>

#include "cost/cost_cache.h"
#include "orchestration/solver.h"

namespace orchid::orchestration {

// The canonical text of a problem: tensors, kernels with their exact costs, cuts.
std::string blp_problem_text(const BlpProblem& problem);

struct PlanCacheEntry {
  cost::CostCache* cache = nullptr;  // nullptr: no caching
  std::string machine;               // the cost database's machine key
  // The compile's solver time limit (all parts together). A plan the limit
  // cut short is reused by compiles with the same limit or a smaller one
  // and the same solver (Solver::identity), not by one given more time or a
  // better solver to do better.
  double compile_time_limit = 0;
};

// solve_blp, through the cache: a stored solution is reused when it was
// proven optimal or solved by the same solver within at least this
// compile's time limit; what is solved is stored. *from_cache tells which
// happened.
BlpSolution cached_solve_blp(const PlanCacheEntry& entry, Solver& solver, const BlpProblem& problem,
                             const SolveOptions& options, bool* from_cache = nullptr);

}  // namespace orchid::orchestration
