// Elementwise fission rules: activations, Clip and the variadic operators
// become elementwise primitives, agree with the reference on random inputs,
// and stay finite where the reference is (large |x|).
#include <cmath>
#include <limits>

#include "fission/rules.h"
#include "fission_test_util.h"

namespace orchid::fission {
namespace {

using namespace testing;

TEST(ElementwiseRules, ClipBecomesMaxThenMin) {
  Input lo = cst(Tensor::scalar_f32(-1.0f));
  Input hi = cst(Tensor::scalar_f32(0.5f));
  Graph f = check_fission(one_node("Clip", {var({3, 4}), lo, hi}));
  EXPECT_EQ(count_ops(f, "Max"), 1);
  EXPECT_EQ(count_ops(f, "Min"), 1);
  f = check_fission(one_node("Clip", {var({3, 4}), none(), hi}));
  EXPECT_EQ(count_ops(f, "Max"), 0);
  f = check_fission(one_node("Clip", {var({5})}));
  EXPECT_TRUE(f.nodes().empty());
  // Runtime bounds; min > max gives max everywhere.
  check_fission(one_node("Clip", {var({6}), var({}, DType::Float32, 0, 1), var({}, DType::Float32, -1, 0)}));
  check_fission(one_node("Clip", {var({6}, DType::Int32, -9, 9), cst(Tensor::from_vector(DType::Int32, {}, std::vector<int>{-2}))}));
}

TEST(ElementwiseRules, VariadicOperatorsChainBinaryOps) {
  Graph f = check_fission(one_node("Sum", {var({2, 3}), var({3}), var({2, 1})}));
  EXPECT_EQ(count_ops(f, "Add"), 2);
  f = check_fission(one_node("Mean", {var({2, 3}), var({3}), var({1}), var({2, 3})}));
  EXPECT_EQ(count_ops(f, "Div"), 1);
  f = check_fission(one_node("Sum", {var({4})}));
  EXPECT_TRUE(f.nodes().empty());
  check_fission(one_node("Mean", {var({4})}));
}

// Max and Min are primitives whatever their input count in the primitive
// table, so their rules (1 or 3+ inputs) are applied directly here.
TEST(ElementwiseRules, VariadicMaxMinRulesFoldPairwise) {
  for (const char* op : {"Max", "Min"}) {
    for (size_t n : {1, 3}) {
      std::vector<Input> inputs = {var({2, 3}), var({3}), var({2, 1})};
      inputs.resize(n);
      OneNode one = one_node(op, inputs);
      Graph g = one.graph;
      Node node = g.nodes()[0];
      g.nodes().clear();
      FissionBuilder builder(g, node);
      std::vector<ValueId> outs = (*fission_rules().find(op))(node, builder);
      ASSERT_EQ(g.type(outs[0]), one.graph.type(one.graph.outputs()[0])) << op;
      g.outputs() = {outs[0]};
      EXPECT_EQ(count_ops(g, op), int(n) - 1);
      for (const Node& m : g.nodes()) EXPECT_EQ(m.inputs.size(), 2u) << m.describe();
      expect_same_outputs(one.graph, g, random_feeds(one, 5));
    }
  }
}

TEST(ElementwiseRules, ReluFamily) {
  Graph f = check_fission(one_node("LeakyRelu", {var({3, 4})}, attrs({{"alpha", 0.2}})));
  EXPECT_EQ(count_ops(f, "Where"), 1);
  check_fission(one_node("PRelu", {var({2, 3, 4}), var({3, 1})}));
  check_fission(one_node("PRelu", {var({2, 3}, DType::Int32, -9, 9), cst(DType::Int32, {3}, std::vector<int>{2, -1, 3})}));
  check_fission(one_node("ThresholdedRelu", {var({3, 4})}, attrs({{"alpha", 0.5}})));
  check_fission(one_node("Elu", {var({3, 4}, DType::Float32, -100, 100)}, attrs({{"alpha", 0.7}})));
  check_fission(one_node("Selu", {var({3, 4}, DType::Float32, -100, 100)}));
  check_fission(one_node("Celu", {var({3, 4}, DType::Float32, -100, 100)}, attrs({{"alpha", 2.0}})));
}

TEST(ElementwiseRules, HardActivations) {
  check_fission(one_node("HardSigmoid", {var({3, 4}, DType::Float32, -8, 8)}, attrs({{"alpha", 0.3}, {"beta", 0.4}})));
  check_fission(one_node("HardSwish", {var({3, 4}, DType::Float32, -8, 8)}));
  check_fission(one_node("Softsign", {var({3, 4}, DType::Float32, -100, 100)}));
  check_fission(one_node("Shrink", {var({3, 4})}, attrs({{"lambd", 1.5}, {"bias", 0.25}})));
  // Integers compute in float64: lambd 0.5 must not truncate to 0.
  check_fission(one_node("Shrink", {var({10}, DType::Int32, -5, 5)}, attrs({{"bias", 1.5}})));
}

TEST(ElementwiseRules, SoftplusAndMishAreSafeForLargeInputs) {
  Graph f = check_fission(one_node("Softplus", {var({4, 8}, DType::Float32, -200, 200)}));
  EXPECT_EQ(count_ops(f, "Exp"), 1);
  check_fission(one_node("Mish", {var({4, 8}, DType::Float32, -200, 200)}));
  check_fission(one_node("Softplus", {var({16}, DType::Float64, -800, 800)}));

  // Exactly at values where exp(x) overflows float32.
  OneNode one = one_node("Softplus", {var({3})});
  Graph fissioned = fission::fission(one.graph);
  std::map<std::string, Tensor> feeds = {
      {"in0", Tensor::from_vector(DType::Float32, {3}, std::vector<float>{100, 1000, -1000})}};
  std::vector<double> got = reference::run_graph(fissioned, feeds)[0].to_f64_vector();
  EXPECT_FLOAT_EQ(got[0], 100);
  EXPECT_FLOAT_EQ(got[1], 1000);
  EXPECT_EQ(got[2], 0);
}

TEST(ElementwiseRules, GeluBothApproximations) {
  Graph f = check_fission(one_node("Gelu", {var({3, 5}, DType::Float32, -10, 10)}));
  EXPECT_EQ(count_ops(f, "Erf"), 1);
  f = check_fission(one_node("Gelu", {var({3, 5}, DType::Float32, -10, 10)}, attrs({{"approximate", std::string("tanh")}})));
  EXPECT_EQ(count_ops(f, "Tanh"), 1);
}

}  // namespace
}  // namespace orchid::fission
