// The orchestrator end to end on real rules: candidates, analytical costs
// (no profiling, so the tests do not time anything), the BLP, generated
// kernels compiled and run. Every program is checked against the reference
// interpreter; random graphs of memory-bound primitives exercise fusion
// shapes no hand-written case would.
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "../runtime/runtime_test_util.h"
#include "fission/fission.h"
#include "orchestration/orchestrate.h"
#include "reference/compare.h"
#include "reference/interpreter.h"
#include "runtime/executable.h"

namespace orchid::orchestration {
namespace {

using runtime::testing::GraphBuilder;
using fission::testing::random_feeds;
using fission::testing::random_tensor;

std::string test_cache_dir() {
  const std::string dir = std::filesystem::temp_directory_path() / ("orchid-orchestrate-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

OrchestrateOptions estimate_only() {
  OrchestrateOptions options;
  options.profile = false;
  options.cache_dir = test_cache_dir();
  return options;
}

// Orchestrates `graph` (already primitives) and expects the program's outputs
// to match the interpreter's. Returns the report.
OrchestrationReport expect_orchestrated_matches(const Graph& graph, const OrchestrateOptions& options) {
  const std::map<std::string, Tensor> feeds = random_feeds(graph, 7);
  const std::vector<Tensor> expected = reference::run_graph(graph, feeds);
  OrchestrationReport report;
  runtime::Executable executable(orchestrate(graph, options, &report));
  const std::vector<Tensor> actual = executable.run(feeds);
  EXPECT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size() && i < expected.size(); ++i) {
    const reference::Comparison c = reference::compare_tensors(actual[i], expected[i], 1e-4, 1e-5);
    EXPECT_TRUE(c.ok) << "output " << i << ": " << c.mismatch;
  }
  return report;
}

TEST(Orchestrate, SoftmaxBecomesOneGeneratedKernel) {
  GraphBuilder b;
  ValueId x = b.input("x", {8, 33});
  Attributes a;
  a.set("axis", int64_t(-1));
  Graph g = fission::fission(b.finish(b.op("Softmax", {x}, a)));
  const OrchestrationReport report = expect_orchestrated_matches(g, estimate_only());
  EXPECT_GT(report.generated_candidates, 0u);
  EXPECT_EQ(report.kernel_costs.size(), 1u);
  EXPECT_TRUE(report.proven_optimal);
}

TEST(Orchestrate, ConvWithEpilogueAndPoolMatchesTheInterpreter) {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 3, 12, 12});
  Attributes conv;
  conv.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  ValueId c = b.op("Conv", {x, b.constant({8, 3, 3, 3}), b.constant({8})}, conv);
  ValueId r = b.op("Relu", {c});
  Attributes pool;
  pool.set("kernel_shape", std::vector<int64_t>{3, 3});
  pool.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  pool.set("strides", std::vector<int64_t>{2, 2});
  Graph g = fission::fission(b.finish(b.op("MaxPool", {r}, pool)));
  const OrchestrationReport report = expect_orchestrated_matches(g, estimate_only());
  EXPECT_LE(report.kernel_costs.size(), 2u);  // conv (+relu), then one pool kernel
}

TEST(Orchestrate, LayerNormAndResidualMatchTheInterpreter) {
  GraphBuilder b;
  ValueId x = b.input("x", {4, 10, 16});
  ValueId y = b.op("MatMul", {x, b.constant({16, 16})});
  ValueId sum = b.op("Add", {x, y});
  Attributes ln;
  ln.set("axis", int64_t(-1));
  Graph g = fission::fission(b.finish(b.op("LayerNormalization", {sum, b.constant({16}), b.constant({16})}, ln)));
  expect_orchestrated_matches(g, estimate_only());
}

// A random DAG of elementwise, reduce and layout primitives on one [4, 6, 10]
// shape (reductions keep dims, so everything broadcasts back).
Graph random_graph(uint32_t seed) {
  std::mt19937 rng(seed);
  GraphBuilder b;
  b.seed = seed * 100 + 1;
  std::vector<ValueId> values = {b.input("x", {4, 6, 10}), b.input("y", {4, 6, 10})};
  const int count = 3 + int(rng() % 10);
  for (int i = 0; i < count; ++i) {
    const ValueId a = values[rng() % values.size()];
    const ValueId c = values[rng() % values.size()];
    switch (rng() % 7) {
      case 0: values.push_back(b.op("Add", {a, c})); break;
      case 1: values.push_back(b.op("Mul", {a, c})); break;
      case 2: values.push_back(b.op("Tanh", {a})); break;
      case 3: values.push_back(b.op("Max", {a, c})); break;
      case 4: {
        Attributes keep;
        keep.set("keepdims", int64_t(1));
        const int64_t axis = int64_t(rng() % 3);
        values.push_back(b.op("ReduceSum", {a, b.g.add_constant("axes" + std::to_string(i),
                                                                Tensor::from_vector(DType::Int64, {1}, std::vector<int64_t>{axis}))},
                              keep));
        values.back() = b.op("Add", {values.back(), c});
        break;
      }
      case 5: values.push_back(b.op("Sub", {a, b.scalar(0.5f)})); break;
      case 6: {
        Attributes perm;
        perm.set("perm", std::vector<int64_t>{0, 1, 2});
        values.push_back(b.op("Sigmoid", {b.op("Transpose", {a}, perm)}));
        break;
      }
    }
  }
  Graph g = b.finish(values.back());
  // A second output from the middle makes some kernels multi-output.
  if (values.size() > 4) g.outputs().push_back(values[values.size() / 2 + 1]);
  return g;
}

TEST(Orchestrate, RandomMemoryBoundGraphsMatchTheInterpreter) {
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_orchestrated_matches(random_graph(seed), estimate_only());
  }
}

}  // namespace
}  // namespace orchid::orchestration
