#include "cost/analytical_model.h"

#include <gtest/gtest.h>

#include "../runtime/runtime_test_util.h"

namespace orchid::cost {
namespace {

using fission::testing::attrs;
using runtime::testing::GraphBuilder;

// Conv 3 -> 4 channels, 3x3, padding 1, on 8x8, followed by a Relu.
Graph conv_relu_graph() {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 3, 8, 8});
  ValueId w = b.constant({4, 3, 3, 3});
  ValueId y = b.op("Conv", {x, w}, attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  return b.finish(b.op("Relu", {y}));
}

TEST(CostAnalytical, ConvFlopsAndBytes) {
  Graph graph = conv_relu_graph();
  KernelWork conv = kernel_work(graph, runtime::make_group(graph, {0}));
  // 2 * N * C_out * spatial_out * C_in * kernel elements.
  EXPECT_DOUBLE_EQ(conv.flops, 2.0 * 1 * 4 * 64 * 3 * 9);
  // x, w and y, float32.
  EXPECT_DOUBLE_EQ(conv.bytes, 4.0 * (192 + 108 + 256));
}

TEST(CostAnalytical, ValuesInsideAGroupMoveNoBytes) {
  Graph graph = conv_relu_graph();
  KernelWork fused = kernel_work(graph, runtime::make_group(graph, {0, 1}));
  // The Relu adds a flop per element; the Conv's output never reaches memory.
  EXPECT_DOUBLE_EQ(fused.flops, 2.0 * 1 * 4 * 64 * 3 * 9 + 256);
  EXPECT_DOUBLE_EQ(fused.bytes, 4.0 * (192 + 108 + 256));
}

// The bound is whichever of flops at the peak and bytes at the bandwidth
// takes longer, and says which.
TEST(CostAnalytical, RooflineBoundTakesTheSlowerSide) {
  const MachinePeaks peaks{/*flops_per_second=*/100e9, /*bytes_per_second=*/10e9};
  const RooflineBound compute = roofline_bound(KernelWork{2e9, 1e6}, peaks);
  EXPECT_DOUBLE_EQ(compute.seconds, 2e-2);
  EXPECT_FALSE(compute.memory_bound);
  const RooflineBound memory = roofline_bound(KernelWork{1e6, 4e8}, peaks);
  EXPECT_DOUBLE_EQ(memory.seconds, 4e-2);
  EXPECT_TRUE(memory.memory_bound);
  // The analytical estimate is the bound plus the fixed per-kernel overhead.
  Graph graph = conv_relu_graph();
  const runtime::KernelGroup conv = runtime::make_group(graph, {0});
  EXPECT_GT(AnalyticalModel(peaks).raw_estimate(graph, conv), roofline_bound(kernel_work(graph, conv), peaks).seconds);
}

TEST(CostAnalytical, ProgramWorkCountsEachComputedNodeOnce) {
  runtime::Program program;
  program.graph = conv_relu_graph();
  // The Conv is computed twice (alone, and again fused with the Relu): its
  // flops count once; only the graph's input, weight and output move.
  program.kernels = {runtime::make_group(program.graph, {0}), runtime::make_group(program.graph, {0, 1})};
  ProgramWork work = program_work(program);
  EXPECT_DOUBLE_EQ(work.linear_flops, 2.0 * 1 * 4 * 64 * 3 * 9);
  EXPECT_DOUBLE_EQ(work.flops, work.linear_flops + 256);
  EXPECT_DOUBLE_EQ(work.min_bytes, 4.0 * (192 + 108 + 256));
}

TEST(CostAnalytical, GroupedConvFlops) {
  GraphBuilder b;
  ValueId x = b.input("x", {2, 4, 6, 6});
  ValueId w = b.constant({4, 2, 3, 3});
  Graph graph = b.finish(b.op("Conv", {x, w}, attrs({{"group", int64_t(2)}})));  // output 2x4x4x4
  EXPECT_DOUBLE_EQ(kernel_work(graph, runtime::make_group(graph, {0})).flops, 2.0 * 2 * 4 * 16 * (4 / 2) * 9);
}

TEST(CostAnalytical, ConvTransposeFlops) {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 2, 4, 4});
  ValueId w = b.constant({2, 3, 3, 3});
  Graph graph = b.finish(b.op("ConvTranspose", {x, w}));  // output 1x3x6x6
  // 2 * N * C_in * spatial_in * C_out * kernel elements.
  EXPECT_DOUBLE_EQ(kernel_work(graph, runtime::make_group(graph, {0})).flops, 2.0 * 1 * 2 * 16 * 3 * 9);
}

TEST(CostAnalytical, BroadcastMatMulFlopsAndBytes) {
  GraphBuilder b;
  ValueId a = b.input("a", {2, 1, 4, 5});
  ValueId c = b.input("c", {3, 5, 6});
  Graph graph = b.finish(b.op("MatMul", {a, c}));  // output 2x3x4x6
  KernelWork work = kernel_work(graph, runtime::make_group(graph, {0}));
  EXPECT_DOUBLE_EQ(work.flops, 2.0 * (2 * 3) * 4 * 6 * 5);
  EXPECT_DOUBLE_EQ(work.bytes, 4.0 * (40 + 90 + 144));
}

TEST(CostAnalytical, RawEstimateIsARooflinePlusOverhead) {
  Graph graph = conv_relu_graph();
  runtime::KernelGroup group = runtime::make_group(graph, {0});
  KernelWork work = kernel_work(graph, group);
  // Compute bound: a slow core and a fast memory.
  AnalyticalModel compute_bound({1e6, 1e12});
  const double compute = compute_bound.raw_estimate(graph, group);
  EXPECT_GT(compute, work.flops / 1e6);
  EXPECT_LT(compute, work.flops / 1e6 + 1e-4);
  // Memory bound.
  AnalyticalModel memory_bound({1e15, 1e6});
  const double memory = memory_bound.raw_estimate(graph, group);
  EXPECT_GT(memory, work.bytes / 1e6);
  EXPECT_LT(memory, work.bytes / 1e6 + 1e-4);
}

TEST(CostAnalytical, CalibrationScalesEachClassByItsMedianRatio) {
  Graph graph = conv_relu_graph();
  runtime::KernelGroup group = runtime::make_group(graph, {0});
  AnalyticalModel model({1e10, 1e10});
  const double raw = model.raw_estimate(graph, group);
  EXPECT_DOUBLE_EQ(model.estimate(graph, group, KernelClass::Linear), raw);

  std::vector<CostRecord> records = {
      // Linear: ratios 3, 3 and 9, median 3.
      {3e-3, 1e-3, KernelClass::Linear},
      {6e-6, 2e-6, KernelClass::Linear},
      {9e-3, 1e-3, KernelClass::Linear},
      // Generated: only 2 records, too few to calibrate.
      {1e-3, 2e-3, KernelClass::Generated},
      {1e-3, 2e-3, KernelClass::Generated},
      // Library: no estimate, ignored.
      {5e-3, 0.0, KernelClass::Library},
      {5e-3, 0.0, KernelClass::Library},
      {5e-3, 0.0, KernelClass::Library},
  };
  model.calibrate(records);
  EXPECT_DOUBLE_EQ(model.scale(KernelClass::Linear), 3.0);
  EXPECT_DOUBLE_EQ(model.scale(KernelClass::Generated), 1.0);
  EXPECT_DOUBLE_EQ(model.scale(KernelClass::Library), 1.0);
  EXPECT_DOUBLE_EQ(model.estimate(graph, group, KernelClass::Linear), 3.0 * raw);
  EXPECT_DOUBLE_EQ(model.estimate(graph, group, KernelClass::Library), raw);
}

}  // namespace
}  // namespace orchid::cost
