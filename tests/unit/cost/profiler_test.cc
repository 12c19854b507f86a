#include "cost/profiler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "../runtime/runtime_test_util.h"

namespace orchid::cost {
namespace {

using fission::testing::attrs;
using runtime::testing::GraphBuilder;

// Few, short runs: the tests check the mechanics, not the timings.
ProfileOptions quick_profile() {
  ProfileOptions options;
  options.warmup = 1;
  options.min_runs = 3;
  options.max_runs = 10;
  options.min_seconds = 0.001;
  return options;
}

double time_group(const Graph& graph, const std::vector<size_t>& nodes) {
  runtime::KernelGroup group = runtime::make_group(graph, nodes);
  std::unique_ptr<runtime::Kernel> kernel = runtime::make_cpu_kernel(graph, group);
  return time_kernel(*kernel, graph, group, quick_profile());
}

TEST(CostProfiler, TimesAnElementwiseKernel) {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 16, 32, 32});
  Graph graph = b.finish(b.op("Relu", {x}));
  const double seconds = time_group(graph, {0});
  EXPECT_GT(seconds, 0);
  EXPECT_TRUE(std::isfinite(seconds));
}

TEST(CostProfiler, TimesAConvWithItsRealWeights) {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 8, 16, 16});
  ValueId w = b.constant({8, 8, 3, 3});
  ValueId y = b.op("Conv", {x, w}, attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  Graph graph = b.finish(b.op("Relu", {y}));
  const double seconds = time_group(graph, {0, 1});
  EXPECT_GT(seconds, 0);
  EXPECT_TRUE(std::isfinite(seconds));
}

// A oneDNN conv is timed writing its native output unless native_outputs
// is off (what a row-major reader of it costs); only the former switches
// the kernel to it.
TEST(CostProfiler, TimesNativeOutputsOnlyWhenAsked) {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 8, 16, 16});
  Graph graph = b.finish(b.op("Conv", {x, b.constant({16, 8, 3, 3})}, attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}})));
  runtime::KernelGroup group = runtime::make_group(graph, {0});
  std::unique_ptr<runtime::Kernel> kernel = runtime::make_cpu_kernel(graph, group);
  ASSERT_TRUE(has_native_outputs(*kernel, group));
  EXPECT_GT(time_kernel(*kernel, graph, group, quick_profile(), TimedLayouts{.native_outputs = false}), 0);
  EXPECT_TRUE(has_native_outputs(*kernel, group)) << "timed row-major, still free to write natively";
  EXPECT_GT(time_kernel(*kernel, graph, group, quick_profile()), 0);
  EXPECT_FALSE(has_native_outputs(*kernel, group)) << "timed native: it writes natively now";
}

TEST(CostProfiler, TimesAKernelWithIntegerInputs) {
  // Gather with a non-constant index input: the profiler feeds zeros, a
  // valid index whatever the axis length.
  GraphBuilder b;
  ValueId data = b.input("data", {5, 4});
  ValueId indices = b.g.add_value("indices", {DType::Int64, {3}});
  b.g.inputs().push_back(indices);
  Graph graph = b.finish(b.op("Gather", {data, indices}));
  runtime::KernelGroup group = runtime::make_group(graph, {0});
  // Every group has a CPU kernel (the reference kernel at worst): no skip.
  std::unique_ptr<runtime::Kernel> kernel = runtime::make_cpu_kernel(graph, group);
  ASSERT_NE(kernel, nullptr);
  const double seconds = time_kernel(*kernel, graph, group, quick_profile());
  EXPECT_GT(seconds, 0);
}

// A kernel that takes `seconds` per run and counts its runs.
class SlowKernel : public runtime::Kernel {
 public:
  explicit SlowKernel(double seconds) : seconds_(seconds) {}
  void run(const runtime::KernelArgs&) override {
    ++runs;
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds_);
    while (std::chrono::steady_clock::now() < until) {
    }
  }
  std::string implementation() const override { return "slow"; }
  int runs = 0;

 private:
  double seconds_;
};

TEST(CostProfiler, ASlowKernelIsWarmedUpOnceAndTimedThreeTimes) {
  GraphBuilder b;
  ValueId x = b.input("x", {4});
  Graph graph = b.finish(b.op("Relu", {x}));
  runtime::KernelGroup group = runtime::make_group(graph, {0});
  ProfileOptions options;  // the defaults: 2 warm-ups, at least 5 runs
  SlowKernel slow(0.025);
  EXPECT_GE(time_kernel(slow, graph, group, options), 0.025);
  EXPECT_EQ(slow.runs, 1 + options.slow_runs);
  SlowKernel fast(0.001);
  time_kernel(fast, graph, group, options);
  EXPECT_GE(fast.runs, options.warmup + options.min_runs);
}

}  // namespace
}  // namespace orchid::cost
