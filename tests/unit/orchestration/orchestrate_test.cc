// The orchestrator end to end on real rules: candidates, analytical costs
// (no profiling, so the tests do not time anything), the BLP, generated
// kernels compiled and run. Every program is checked against the reference
// interpreter; random graphs of memory-bound primitives exercise fusion
// shapes no hand-written case would.
#include <algorithm>
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "../runtime/runtime_test_util.h"
#include "fission/fission.h"
#include "ir/graph_utils.h"
#include "orchestration/orchestrate.h"
#include "reference/compare.h"
#include "reference/interpreter.h"
#include "runtime/executable.h"
#include "../test_temp_dir.h"

namespace orchid::orchestration {
namespace {

using runtime::testing::GraphBuilder;
using fission::testing::random_feeds;
using fission::testing::random_tensor;

std::string test_cache_dir() { return orchid::testing::process_temp_dir("orchid-orchestrate-test").string(); }

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


// Two forms of 2x: x * (2 I) as a MatMul and x + x. The alternative's
// derived form is `derived_is_add` ? the sum : the product; the graph reads
// the original (the other one) through a Relu.
struct TwoForms {
  Graph graph;
  Alternative alternative;
};

TwoForms two_forms_of_twice_x(bool derived_is_add) {
  GraphBuilder b;
  const ValueId x = b.input("x", {64, 256});
  std::vector<float> twice_identity(256 * 256, 0.0f);
  for (size_t i = 0; i < 256; ++i) twice_identity[i * 256 + i] = 2.0f;
  const ValueId weight = b.g.add_constant("two_i", Tensor::from_vector(DType::Float32, {256, 256}, twice_identity));
  const auto product = [&] { return b.op("MatMul", {x, weight}); };
  const auto sum = [&] { return b.op("Add", {x, x}); };
  const ValueId derived = derived_is_add ? sum() : product();   // node 0
  const ValueId original = derived_is_add ? product() : sum();  // node 1
  Graph graph = b.finish(b.op("Relu", {original}));
  return {std::move(graph), Alternative{original, derived, {1}, {0}, "test"}};
}

bool has_op(const Graph& graph, const std::string& op) {
  return std::any_of(graph.nodes().begin(), graph.nodes().end(), [&](const Node& node) { return node.op == op; });
}

// Orchestrates with the alternative and checks the program against the
// interpreter's run of the graph (which computes the original form).
runtime::Program expect_alternative_matches(const TwoForms& forms, OrchestrationReport& report) {
  const std::map<std::string, Tensor> feeds = random_feeds(forms.graph, 5);
  const std::vector<Tensor> expected = reference::run_graph(forms.graph, feeds);
  runtime::Program program = orchestrate(forms.graph, {forms.alternative}, estimate_only(), &report);
  runtime::Executable executable(program);
  const std::vector<Tensor> actual = executable.run(feeds);
  EXPECT_EQ(actual.size(), 1u);
  if (actual.size() == 1) {
    const reference::Comparison c = reference::compare_tensors(actual[0], expected[0], 1e-5, 1e-6);
    EXPECT_TRUE(c.ok) << c.mismatch;
  }
  EXPECT_EQ(report.alternatives, 1u);
  return program;
}

TEST(Orchestrate, ACheaperDerivedFormReplacesTheOriginal) {
  OrchestrationReport report;
  const runtime::Program program = expect_alternative_matches(two_forms_of_twice_x(/*derived_is_add=*/true), report);
  EXPECT_EQ(report.derived_forms_chosen, 1u);
  EXPECT_FALSE(has_op(program.graph, "MatMul"));
  EXPECT_EQ(constant_bytes(program.graph), 0u);  // the original's weight went with it
  EXPECT_EQ(program.graph.nodes().size(), 2u);
}

TEST(Orchestrate, ADearerDerivedFormIsLeftOut) {
  OrchestrationReport report;
  const runtime::Program program = expect_alternative_matches(two_forms_of_twice_x(/*derived_is_add=*/false), report);
  EXPECT_EQ(report.derived_forms_chosen, 0u);
  EXPECT_FALSE(has_op(program.graph, "MatMul"));
  EXPECT_EQ(constant_bytes(program.graph), 0u);
  EXPECT_EQ(program.graph.nodes().size(), 2u);
}

TEST(Orchestrate, ADerivedFormGainingLessThanItsMarginIsLeftOut) {
  TwoForms forms = two_forms_of_twice_x(/*derived_is_add=*/true);
  forms.alternative.choice_margin_seconds = 1.0;  // more than the MatMul costs
  OrchestrationReport report;
  const runtime::Program program = expect_alternative_matches(forms, report);
  EXPECT_EQ(report.derived_forms_chosen, 0u);
  EXPECT_TRUE(has_op(program.graph, "MatMul"));
}

TEST(Orchestrate, MalformedAlternativesAreInternalErrors) {
  TwoForms forms = two_forms_of_twice_x(true);
  Alternative overlapping = forms.alternative;
  overlapping.derived_nodes = {1};
  EXPECT_THROW(orchestrate(forms.graph, {overlapping}, estimate_only()), InternalError);
  Alternative swapped = forms.alternative;
  std::swap(swapped.original, swapped.derived);
  EXPECT_THROW(orchestrate(forms.graph, {swapped}, estimate_only()), InternalError);
}

}  // namespace
}  // namespace orchid::orchestration
