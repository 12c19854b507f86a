// The layout extension of the BLP (layout_model.h): native twins, the
// reorder pseudo-kernels, and what an available tensor costs in each form.
#include "orchestration/layout_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "orchestration/solver.h"

namespace orchid::orchestration {
namespace {

// x(0) -> conv -> y(1): the conv is native (a oneDNN kernel) or row-major
// (a direct kernel), the two implementations offered side by side.
BlpProblem conv_problem(double native_cost, double direct_cost) {
  BlpProblem problem;
  problem.num_tensors = 2;
  problem.available = {0};
  problem.required = {1};
  problem.kernels = {{native_cost, {0}, {1}}, {direct_cost, {0}, {1}}};
  return problem;
}

BlpSolution solve(const BlpProblem& problem) {
  std::unique_ptr<Solver> solver = make_cbc_solver();
  return solve_blp(*solver, problem);
}

TEST(LayoutModel, AvailableTensorIsRowMajorItsNativeFormCostsAReorder) {
  BlpProblem problem = conv_problem(3.0, 3.4);
  const LayoutExtension layouts =
      add_native_layouts(problem, {true, false}, [](int) { return 0.8; }, {false, true});
  // x gets one reorder (row-major -> native, it is there row-major); y two.
  ASSERT_EQ(layouts.real_kernels, 2u);
  EXPECT_EQ(layouts.reorder_tensors, (std::vector<int>{0, 1, 1}));
  EXPECT_EQ(layouts.of_available, (std::vector<bool>{true, false, false}));
  EXPECT_EQ(problem.available, (std::vector<int>{0}));
  // The native conv costs 3.0 + 0.8 (x) + 0.8 (y is a graph output, row-major): the direct one wins.
  BlpSolution solution = solve(problem);
  ASSERT_TRUE(solution.feasible);
  EXPECT_EQ(solution.chosen, (std::vector<size_t>{1}));
  EXPECT_NEAR(solution.cost, 3.4, 1e-9);
}

TEST(LayoutModel, NativelyWrittenAvailableTensorIsFreeInNativeForm) {
  // The caller prices the available tensor's reorder at zero when an earlier
  // part's oneDNN kernel writes it; y is read by a later part (either form).
  BlpProblem problem = conv_problem(3.0, 3.4);
  const LayoutExtension layouts = add_native_layouts(problem, {true, false}, [](int) { return 0.8; }, {false, false});
  for (size_t r = 0; r < layouts.reorder_tensors.size(); ++r) {
    if (layouts.of_available[r]) problem.kernels[layouts.real_kernels + r].cost = 0.0;
  }
  BlpSolution solution = solve(problem);
  ASSERT_TRUE(solution.feasible);
  EXPECT_NEAR(solution.cost, 3.0, 1e-9);
  EXPECT_TRUE(std::find(solution.chosen.begin(), solution.chosen.end(), size_t(0)) != solution.chosen.end());
}

}  // namespace
}  // namespace orchid::orchestration
