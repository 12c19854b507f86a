// The plan cache (plan_cache.h): solved BLPs read back by problem, never a
// solution of another problem, and the problem text its key hashes.
#include "orchestration/plan_cache.h"

#include <gtest/gtest.h>

#include <cmath>

#include "../cost/cost_test_util.h"
#include "support/sha256.h"

namespace orchid::orchestration {
namespace {

// x(0) -> a(1) -> b(2): two single kernels (2 + 2) or one fused kernel (3).
BlpProblem chain() {
  BlpProblem problem;
  problem.num_tensors = 3;
  problem.available = {0};
  problem.required = {2};
  problem.kernels = {{2.0, {0}, {1}}, {2.0, {1}, {2}}, {3.0, {0}, {2}}};
  problem.cuts = {{{}, {0, 2}}};
  return problem;
}

// Counts the solves that reach the solver.
class CountingSolver : public Solver {
 public:
  BlpSolution solve_once(const BlpProblem& problem, const SolveOptions& options) override {
    ++calls;
    return inner_->solve_once(problem, options);
  }
  std::string identity() const override { return inner_->identity(); }
  int calls = 0;

 private:
  std::unique_ptr<Solver> inner_ = make_brute_force_solver();
};

TEST(PlanCache, ProblemTextIsExactAboutCosts) {
  BlpProblem problem = chain();
  EXPECT_EQ(blp_problem_text(problem),
            "tensors 3\navailable 0\nrequired 2\n"
            "kernel 0x1p+1 in 0\n out 1\nkernel 0x1p+1 in 1\n out 2\nkernel 0x1.8p+1 in 0\n out 2\n"
            "cut\n then 0 2\n");
  BlpProblem nudged = problem;
  nudged.kernels[2].cost = std::nextafter(3.0, 4.0);
  EXPECT_NE(blp_problem_text(problem), blp_problem_text(nudged));
}

TEST(PlanCache, ASolvedProblemIsReadBack) {
  cost::testing::TempDir dir;
  cost::CostCache cache(dir.file("costs.sqlite"));
  const PlanCacheEntry entry{&cache, "machine"};
  CountingSolver solver;
  bool from_cache = true;
  const BlpSolution first = cached_solve_blp(entry, solver, chain(), {}, &from_cache);
  EXPECT_FALSE(from_cache);
  EXPECT_EQ(first.chosen, std::vector<size_t>{2});
  const int solves = solver.calls;
  const BlpSolution again = cached_solve_blp(entry, solver, chain(), {}, &from_cache);
  EXPECT_TRUE(from_cache);
  EXPECT_EQ(solver.calls, solves);
  EXPECT_EQ(again.chosen, first.chosen);
  EXPECT_DOUBLE_EQ(again.cost, 3.0);
  EXPECT_TRUE(again.proven_optimal);
  EXPECT_TRUE(again.feasible);

  // Another cost is another problem; another machine another record.
  BlpProblem dearer = chain();
  dearer.kernels[2].cost = 5.0;
  const BlpSolution other = cached_solve_blp(entry, solver, dearer, {}, &from_cache);
  EXPECT_FALSE(from_cache);
  EXPECT_EQ(other.chosen, (std::vector<size_t>{0, 1}));
  cached_solve_blp({&cache, "another machine"}, solver, chain(), {}, &from_cache);
  EXPECT_FALSE(from_cache);
}

TEST(PlanCache, ARecordThatDoesNotSolveItsProblemIsIgnored) {
  cost::testing::TempDir dir;
  cost::CostCache cache(dir.file("costs.sqlite"));
  const PlanCacheEntry entry{&cache, "machine"};
  CountingSolver solver;
  bool from_cache = true;
  cached_solve_blp(entry, solver, chain(), {}, &from_cache);
  const std::string name = "blp " + sha256_of_text(blp_problem_text(chain()));
  ASSERT_TRUE(cache.get_meta("machine", name));
  for (const char* stale : {R"({"chosen":[0],"proven_optimal":true})",   // does not write the required tensor
                            R"({"chosen":[7],"proven_optimal":true})",   // no such kernel
                            R"({"chosen":[-1],"proven_optimal":true})", R"({"chosen":"2"})", "not json"}) {
    cache.set_meta("machine", name, stale);
    const BlpSolution solution = cached_solve_blp(entry, solver, chain(), {}, &from_cache);
    EXPECT_FALSE(from_cache) << stale;
    EXPECT_EQ(solution.chosen, std::vector<size_t>{2}) << stale;
  }
}

TEST(PlanCache, AnUnprovenPlanIsReusedOnlyWithinItsTimeLimit) {
  cost::testing::TempDir dir;
  cost::CostCache cache(dir.file("costs.sqlite"));
  const std::string name = "blp " + sha256_of_text(blp_problem_text(chain()));
  cache.set_meta("machine", name, R"({"chosen":[0,1],"proven_optimal":false,"time_limit":5,"solver":"brute force"})");
  CountingSolver solver;
  bool from_cache = false;
  BlpSolution solution = cached_solve_blp({&cache, "machine", 5}, solver, chain(), {}, &from_cache);
  EXPECT_TRUE(from_cache);
  EXPECT_FALSE(solution.proven_optimal);
  EXPECT_EQ(solution.chosen, (std::vector<size_t>{0, 1}));
  solution = cached_solve_blp({&cache, "machine", 60}, solver, chain(), {}, &from_cache);
  EXPECT_FALSE(from_cache);  // more time than it had
  EXPECT_TRUE(solution.proven_optimal);
  EXPECT_EQ(solution.chosen, std::vector<size_t>{2});
}

TEST(PlanCache, AnUnprovenPlanOfAnotherSolverIsSolvedAgain) {
  cost::testing::TempDir dir;
  cost::CostCache cache(dir.file("costs.sqlite"));
  const std::string name = "blp " + sha256_of_text(blp_problem_text(chain()));
  for (const char* record : {R"({"chosen":[0,1],"proven_optimal":false,"time_limit":60})",
                             R"({"chosen":[0,1],"proven_optimal":false,"time_limit":60,"solver":"cbc, bare"})"}) {
    cache.set_meta("machine", name, record);
    CountingSolver solver;
    bool from_cache = true;
    const BlpSolution solution = cached_solve_blp({&cache, "machine", 5}, solver, chain(), {}, &from_cache);
    EXPECT_FALSE(from_cache) << record;
    EXPECT_TRUE(solution.proven_optimal);
    EXPECT_EQ(solution.chosen, std::vector<size_t>{2});
  }
  // A proven one is reused whichever solver proved it.
  cache.set_meta("machine", name, R"({"chosen":[2],"proven_optimal":true,"time_limit":1,"solver":"cbc, bare"})");
  CountingSolver solver;
  bool from_cache = false;
  cached_solve_blp({&cache, "machine", 5}, solver, chain(), {}, &from_cache);
  EXPECT_TRUE(from_cache);
  EXPECT_EQ(solver.calls, 0);
}

TEST(PlanCache, WithoutACacheItSolves) {
  CountingSolver solver;
  bool from_cache = true;
  const BlpSolution solution = cached_solve_blp({}, solver, chain(), {}, &from_cache);
  EXPECT_FALSE(from_cache);
  EXPECT_GT(solver.calls, 0);
  EXPECT_EQ(solution.chosen, std::vector<size_t>{2});
}

}  // namespace
}  // namespace orchid::orchestration
