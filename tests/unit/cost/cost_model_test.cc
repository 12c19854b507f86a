#include "cost/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "../runtime/runtime_test_util.h"
#include "cost/kernel_key.h"
#include "cost_test_util.h"

namespace orchid::cost {
namespace {

using runtime::testing::GraphBuilder;
using testing::TempDir;

// Stores made-up peaks for this machine, so the tests skip the second-long
// measurement.
void preset_peaks(const std::string& path, int threads) {
  CostCache cache(path);
  cache.set_meta(machine_fingerprint(threads), kPeakFlopsMeta, "1e11");
  cache.set_meta(machine_fingerprint(threads), kPeakBytesMeta, "2e10");
  cache.set_meta(machine_fingerprint(threads), kPeakSamplesMeta, std::to_string(kPeakSamples));
}

CostModelOptions options_for(const std::string& path) {
  CostModelOptions options;
  options.cache_path = path;
  options.threads = 1;
  options.profile.warmup = 1;
  options.profile.min_runs = 3;
  options.profile.max_runs = 10;
  options.profile.min_seconds = 0.001;
  return options;
}

Graph relu_graph() {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 16, 32, 32});
  return b.finish(b.op("Relu", {x}));
}

TEST(CostModel, MeasuredCostsAreCachedForLaterModels) {
  TempDir dir;
  const std::string path = dir.file("costs.sqlite");
  preset_peaks(path, 1);
  Graph graph = relu_graph();
  runtime::KernelGroup group = runtime::make_group(graph, {0});

  CostModel first(options_for(path));
  EXPECT_DOUBLE_EQ(first.peaks().flops_per_second, 1e11);
  EXPECT_DOUBLE_EQ(first.peaks().bytes_per_second, 2e10);
  EXPECT_EQ(first.machine(), machine_fingerprint(1));
  EXPECT_FALSE(first.cached(graph, group));
  EXPECT_GT(first.estimate(graph, group, KernelClass::Library), 0);
  std::unique_ptr<runtime::Kernel> kernel = runtime::make_cpu_kernel(graph, group);
  const double seconds = first.measure(*kernel, graph, group, KernelClass::Library);
  EXPECT_GT(seconds, 0);
  EXPECT_TRUE(std::isfinite(seconds));

  CostModel second(options_for(path));
  std::optional<double> cached = second.cached(graph, group);
  ASSERT_TRUE(cached);
  EXPECT_DOUBLE_EQ(*cached, seconds);
  std::optional<CostRecord> record = second.cache().lookup(kernel_key(graph, group), second.machine());
  ASSERT_TRUE(record);
  EXPECT_EQ(record->kind, KernelClass::Library);
  EXPECT_GT(record->estimate, 0);
}

TEST(CostModel, CalibratesFromTheCachedRecordsOfThisMachine) {
  TempDir dir;
  const std::string path = dir.file("costs.sqlite");
  preset_peaks(path, 1);
  {
    CostCache cache(path);
    for (int i = 0; i < 3; ++i) {
      cache.store("mine" + std::to_string(i), machine_fingerprint(1), CostRecord{4e-6, 1e-6, KernelClass::Generated});
      cache.store("other" + std::to_string(i), "another machine", CostRecord{9e-6, 1e-6, KernelClass::Library});
    }
  }
  Graph graph = relu_graph();
  runtime::KernelGroup group = runtime::make_group(graph, {0});
  CostModel model(options_for(path));
  AnalyticalModel raw(model.peaks());
  EXPECT_DOUBLE_EQ(model.estimate(graph, group, KernelClass::Generated), 4.0 * raw.raw_estimate(graph, group));
  EXPECT_DOUBLE_EQ(model.estimate(graph, group, KernelClass::Library), raw.raw_estimate(graph, group));
}

TEST(CostModel, ThreadCountIsPartOfTheMachine) {
  EXPECT_NE(machine_fingerprint(1), machine_fingerprint(2));
  EXPECT_EQ(machine_fingerprint(2), machine_fingerprint(2));
}

// The stored peaks are the best of kPeakSamples measurements, per peak; a
// low one (a busy host) does not stay.
TEST(CostMachine, PeaksAreTheBestOfTheirFirstMeasurements) {
  TempDir dir;
  CostCache cache(dir.file("costs.sqlite"));
  const std::vector<MachinePeaks> measured = {{1e11, 3e10}, {2e11, 2e10}, {1.5e11, 4e10}};
  ASSERT_EQ(int(measured.size()), kPeakSamples);
  size_t calls = 0;
  const auto measure = [&] { return measured.at(calls++); };
  MachinePeaks peaks = machine_peaks(cache, "m", measure);
  EXPECT_DOUBLE_EQ(peaks.flops_per_second, 1e11);
  peaks = machine_peaks(cache, "m", measure);
  EXPECT_DOUBLE_EQ(peaks.flops_per_second, 2e11);
  EXPECT_DOUBLE_EQ(peaks.bytes_per_second, 3e10);
  peaks = machine_peaks(cache, "m", measure);
  EXPECT_DOUBLE_EQ(peaks.flops_per_second, 2e11);
  EXPECT_DOUBLE_EQ(peaks.bytes_per_second, 4e10);
  peaks = machine_peaks(cache, "m", measure);  // enough samples: from the cache, no measurement
  EXPECT_EQ(calls, measured.size());
  EXPECT_DOUBLE_EQ(peaks.flops_per_second, 2e11);
  EXPECT_DOUBLE_EQ(peaks.bytes_per_second, 4e10);
  // Peaks stored before counts were kept count as one measurement.
  cache.set_meta("old", kPeakFlopsMeta, "5e10");
  cache.set_meta("old", kPeakBytesMeta, "1e10");
  calls = 1;
  peaks = machine_peaks(cache, "old", measure);
  EXPECT_DOUBLE_EQ(peaks.flops_per_second, 2e11);
  EXPECT_EQ(cache.get_meta("old", kPeakSamplesMeta), "2");
}

// Measures the real peaks (about a second per thread count) and keeps them.
TEST(CostMachine, MeasuresAndStoresPeaks) {
  TempDir dir;
  CostCache cache(dir.file("costs.sqlite"));
  for (int threads : {1, 2}) {
    const std::string machine = machine_fingerprint(threads);
    MachinePeaks peaks = machine_peaks(cache, machine, [&] { return measure_peaks(threads); });
    EXPECT_GT(peaks.flops_per_second, 1e8);
    EXPECT_GT(peaks.bytes_per_second, 1e8);
    std::cout << "[ peaks    ] " << machine << ": " << peaks.flops_per_second / 1e9 << " GFLOP/s, "
              << peaks.bytes_per_second / 1e9 << " GB/s\n";
    // Measured again until kPeakSamples stand behind them: never lower.
    MachinePeaks again = machine_peaks(cache, machine, [] { return MachinePeaks{1, 1}; });
    EXPECT_DOUBLE_EQ(again.flops_per_second, peaks.flops_per_second);
    EXPECT_DOUBLE_EQ(again.bytes_per_second, peaks.bytes_per_second);
  }
}

}  // namespace
}  // namespace orchid::cost
