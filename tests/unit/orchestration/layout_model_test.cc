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
      add_native_layouts(problem, {KernelLayout::Native, KernelLayout::RowMajor}, [](int) { return 0.8; }, {false, true});
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

TEST(LayoutModel, NativelyWrittenAvailableTensorIsFreeInNativeFormAndCostsAReorderRowMajor) {
  // x was written natively by an earlier part's oneDNN kernel; y is read by
  // a later part (either form).
  BlpProblem problem = conv_problem(3.5, 3.4);
  const LayoutExtension layouts = add_native_layouts(problem, {KernelLayout::Native, KernelLayout::RowMajor}, [](int) { return 0.8; }, {false, false});
  ASSERT_TRUE(layouts.of_available[0]);
  start_available_in(problem, layouts, 0, true);
  const int native_x = problem.kernels[layouts.real_kernels].inputs[0];
  EXPECT_EQ(problem.available, (std::vector<int>{native_x}));
  EXPECT_EQ(problem.kernels[layouts.real_kernels].outputs, (std::vector<int>{0}));
  // The direct conv now pays x's conversion: 3.4 + 0.8 against 3.5.
  BlpSolution solution = solve(problem);
  ASSERT_TRUE(solution.feasible);
  EXPECT_NEAR(solution.cost, 3.5, 1e-9);
  EXPECT_EQ(solution.chosen, (std::vector<size_t>{0}));
  // Back to row-major (the earlier part wrote x row-major after all): the direct conv, free.
  start_available_in(problem, layouts, 0, false);
  EXPECT_EQ(problem.available, (std::vector<int>{0}));
  solution = solve(problem);
  ASSERT_TRUE(solution.feasible);
  EXPECT_NEAR(solution.cost, 3.4, 1e-9);
  EXPECT_EQ(solution.chosen, (std::vector<size_t>{1}));
}

// x(0) -> A -> a(1) -> concat -> c(2) -> B -> y(3), y a graph output; the
// concat works in either form, A and B are native (convs) or row-major
// (generated) as asked.
BlpProblem concat_problem() {
  BlpProblem problem;
  problem.num_tensors = 4;
  problem.available = {0};
  problem.required = {3};
  problem.kernels = {{2.0, {0}, {1}}, {0.5, {1}, {2}}, {2.0, {2}, {3}}};
  return problem;
}

TEST(LayoutModel, EitherKernelStaysNativeBetweenNativeKernels) {
  BlpProblem problem = concat_problem();
  const LayoutExtension layouts = add_native_layouts(
      problem, {KernelLayout::Native, KernelLayout::Either, KernelLayout::Native}, [](int) { return 0.8; },
      {false, false, false, true});
  ASSERT_EQ(layouts.native_copy_of, (std::vector<size_t>{1}));
  const size_t copy = problem.kernels.size() - 1;
  EXPECT_TRUE(layouts.is_native_copy(copy));
  EXPECT_EQ(layouts.candidate_of(copy), std::optional<size_t>(1));
  EXPECT_EQ(layouts.candidate_of(layouts.real_kernels), std::nullopt);  // a reorder
  // x's reorder in and y's reorder out, none around the concat.
  BlpSolution solution = solve(problem);
  ASSERT_TRUE(solution.feasible);
  EXPECT_NEAR(solution.cost, 4.5 + 1.6, 1e-9);
  EXPECT_TRUE(std::find(solution.chosen.begin(), solution.chosen.end(), copy) != solution.chosen.end());
}

// t(0) -> matmul -> a(1) -> transpose -> b(2) -> conv -> c(3) -> transpose -> d(4)
// -> matmul -> e(5): a token map made an image for a conv and back. The
// transposes relabel (the first writes its output's native form, the
// second reads its input's) or copy at 1.0 each.
BlpProblem token_image_problem() {
  BlpProblem problem;
  problem.num_tensors = 6;
  problem.available = {0};
  problem.required = {5};
  problem.kernels = {{2.0, {0}, {1}}, {1.0, {1}, {2}}, {2.0, {2}, {3}}, {1.0, {3}, {4}}, {2.0, {4}, {5}}};
  return problem;
}

TEST(LayoutModel, RelabelingsCostNothingNextToNativeKernels) {
  BlpProblem problem = token_image_problem();
  const std::vector<KernelLayout> kinds = {KernelLayout::RowMajor, KernelLayout::RelabelToNative,
                                           KernelLayout::Native, KernelLayout::RelabelFromNative,
                                           KernelLayout::RowMajor};
  const LayoutExtension layouts = add_native_layouts(problem, kinds, [](int) { return 0.8; }, {});
  ASSERT_EQ(layouts.native_copy_of, (std::vector<size_t>{1, 3}));
  const size_t to_native = problem.kernels.size() - 2, from_native = problem.kernels.size() - 1;
  EXPECT_TRUE(layouts.is_relabeling(to_native));
  EXPECT_TRUE(layouts.writes_native_form(to_native));
  EXPECT_FALSE(layouts.writes_native_form(from_native));
  // Only the conv's tensors have twins: a and d are row-major only.
  EXPECT_EQ(layouts.reorder_tensors, (std::vector<int>{2, 2, 3, 3}));
  EXPECT_EQ(problem.kernels[to_native].inputs, (std::vector<int>{1}));
  EXPECT_NE(problem.kernels[to_native].outputs, (std::vector<int>{2}));
  EXPECT_EQ(problem.kernels[from_native].outputs, (std::vector<int>{4}));
  EXPECT_NEAR(problem.kernels[to_native].cost, kRelabelSeconds, 1e-12);
  // The matmuls and the conv, nothing for the transposes and no reorders.
  BlpSolution solution = solve(problem);
  ASSERT_TRUE(solution.feasible);
  EXPECT_NEAR(solution.cost, 6.0 + 2 * kRelabelSeconds, 1e-9);
  // A row-major conv instead: the transposes copy (a relabeling and a
  // reorder, which together are the copy, would cost 1.5).
  BlpProblem row_major = token_image_problem();
  std::vector<KernelLayout> row_kinds = kinds;
  row_kinds[2] = KernelLayout::RowMajor;
  add_native_layouts(row_major, row_kinds, [](int) { return 1.5; }, {});
  solution = solve(row_major);
  ASSERT_TRUE(solution.feasible);
  EXPECT_NEAR(solution.cost, 8.0, 1e-9);
}

TEST(LayoutModel, EitherKernelStaysRowMajorBetweenRowMajorKernels) {
  BlpProblem problem = concat_problem();
  add_native_layouts(problem, {KernelLayout::RowMajor, KernelLayout::Either, KernelLayout::RowMajor},
                     [](int) { return 0.8; }, {false, false, false, true});
  BlpSolution solution = solve(problem);
  ASSERT_TRUE(solution.feasible);
  EXPECT_NEAR(solution.cost, 4.5, 1e-9);
  EXPECT_EQ(solution.chosen, (std::vector<size_t>{0, 1, 2}));
}

TEST(LayoutModel, NativeCopiesJoinTheCutsOfTheirKernel) {
  // A node-cover cut naming the concat is met by its native copy too.
  BlpProblem problem = concat_problem();
  problem.cuts.push_back({{}, {1}});
  problem.cuts.push_back({{1}, {0}});
  add_native_layouts(problem, {KernelLayout::Native, KernelLayout::Either, KernelLayout::Native},
                     [](int) { return 0.8; }, {false, false, false, true});
  const size_t copy = problem.kernels.size() - 1;
  EXPECT_EQ(problem.cuts[0].one_of, (std::vector<size_t>{1, copy}));
  ASSERT_GE(problem.cuts.size(), 3u);
  EXPECT_EQ(problem.cuts[2].all_of, (std::vector<size_t>{copy}));
  EXPECT_EQ(problem.cuts[2].one_of, (std::vector<size_t>{0}));
}

}  // namespace
}  // namespace orchid::orchestration
