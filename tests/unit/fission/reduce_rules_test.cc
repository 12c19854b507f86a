// Reduce fission rules: every reduction becomes elementwise primitives around
// a canonical reduce primitive (constant, explicit axes), with the reference's
// axes, keepdims and noop_with_empty_axes semantics.
#include <limits>

#include "fission/rules.h"
#include "fission_test_util.h"

namespace orchid::fission {
namespace {

using namespace testing;

const char* const kReductions[] = {"ReduceMean", "ReduceL1",  "ReduceL2",       "ReduceSumSquare",
                                   "ReduceLogSum", "ReduceLogSumExp"};

// Every reduce primitive of a fissioned graph has explicit, non-empty axes
// and no noop_with_empty_axes.
void expect_canonical_reduces(const Graph& g) {
  for (const Node& node : g.nodes()) {
    if (node.op.rfind("Reduce", 0) != 0) continue;
    ASSERT_GE(node.inputs.size(), 2u) << node.describe();
    ASSERT_NE(node.inputs[1], kNoValue) << node.describe();
    ASSERT_TRUE(g.value(node.inputs[1]).is_constant()) << node.describe();
    EXPECT_GT(g.value(node.inputs[1]).constant->numel(), 0) << node.describe();
    EXPECT_FALSE(node.attrs.has("noop_with_empty_axes")) << node.describe();
  }
}

// Positive inputs so that LogSum is defined.
Input data(Shape shape) { return var(std::move(shape), DType::Float32, 0.1, 3); }

TEST(ReduceRules, AxesAndKeepdims) {
  for (const char* op : kReductions) {
    for (int64_t keepdims : {0, 1}) {
      Attributes a = attrs({{"keepdims", keepdims}});
      expect_canonical_reduces(check_fission(one_node(op, {data({2, 3, 4}), ints({0, -1})}, a)));
      expect_canonical_reduces(check_fission(one_node(op, {data({2, 3, 4})}, a)));  // all axes
      expect_canonical_reduces(check_fission(one_node(op, {data({2, 3, 4}), ints({})}, a)));
    }
  }
}

TEST(ReduceRules, NoopWithEmptyAxesReducesNothing) {
  Attributes noop = attrs({{"noop_with_empty_axes", int64_t(1)}, {"keepdims", int64_t(0)}});
  for (const char* op : kReductions) {
    Graph f = check_fission(one_node(op, {data({2, 3})}, noop));
    expect_canonical_reduces(f);
    EXPECT_EQ(f.value(f.outputs()[0]).type.shape, (Shape{2, 3})) << op;
    // With axes given, noop_with_empty_axes does not matter.
    expect_canonical_reduces(check_fission(one_node(op, {data({2, 3}), ints({1})}, noop)));
  }
  Graph f = check_fission(one_node("ReduceL1", {var({2, 3}), ints({})}, noop));
  EXPECT_EQ(count_ops(f, "ReduceSum"), 0);
}

TEST(ReduceRules, StructureOfEachReduction) {
  Attributes a = attrs({{"keepdims", int64_t(0)}});
  Graph f = check_fission(one_node("ReduceMean", {var({4, 5}), ints({1})}, a));
  EXPECT_EQ(count_ops(f, "ReduceSum"), 1);
  f = check_fission(one_node("ReduceL2", {var({4, 5}), ints({1})}, a));
  EXPECT_EQ(count_ops(f, "Sqrt"), 1);
  f = check_fission(one_node("ReduceLogSumExp", {var({4, 5}), ints({1})}, a));
  EXPECT_EQ(count_ops(f, "ReduceMax"), 1);  // the max is subtracted
}

TEST(ReduceRules, LogSumExpIsSafeForLargeAndInfiniteInputs) {
  check_fission(one_node("ReduceLogSumExp", {var({3, 6}, DType::Float32, -500, 500), ints({1})}));
  OneNode one = one_node("ReduceLogSumExp", {var({3, 2}), ints({1})}, attrs({{"keepdims", int64_t(0)}}));
  Graph f = fission::fission(one.graph);
  float inf = std::numeric_limits<float>::infinity();
  Tensor x = Tensor::from_vector(DType::Float32, {3, 2}, std::vector<float>{1000, 1000, -inf, -inf, inf, 3});
  expect_same_outputs(one.graph, f, {{"in0", x}});
  std::vector<double> got = reference::run_graph(f, {{"in0", x}})[0].to_f64_vector();
  EXPECT_NEAR(got[0], 1000 + std::log(2.0), 1e-3);
  EXPECT_EQ(got[1], -inf);
  EXPECT_EQ(got[2], inf);
}

TEST(ReduceRules, IntegerAndHalfInputs) {
  for (const char* op : kReductions) {
    if (std::string(op) == "ReduceLogSum") continue;
    check_fission(one_node(op, {var({3, 4}, DType::Int32, -20, 20), ints({1})}));
  }
  check_fission(one_node("ReduceLogSum", {var({3, 4}, DType::Int32, 1, 20), ints({1})}));
  // int8 means sum in 64 bits: 100 + 100 must not wrap before dividing.
  check_fission(one_node("ReduceMean", {var({2, 8}, DType::Int8, 60, 127)}));
  // float16 sums of squares and means must not overflow in float16.
  Graph f = check_fission(one_node("ReduceL2", {var({2, 16}, DType::Float16, 200, 300), ints({1})}));
  EXPECT_GE(count_ops(f, "Cast"), 2);
  check_fission(one_node("ReduceMean", {var({2, 512}, DType::Float16, 200, 300), ints({1})}));
}

TEST(ReduceRules, ScalarInputIsPassedThrough) {
  for (const char* op : {"ReduceMean", "ReduceLogSumExp"}) {
    Graph f = check_fission(one_node(op, {var({})}));
    EXPECT_TRUE(f.nodes().empty()) << op;
  }
}

// The primitive table may keep ReduceSum/Max/Min/Prod with omitted axes
// whole, so their rules are applied directly here.
TEST(ReduceRules, ReducePrimitivesGetExplicitAxes) {
  std::vector<Attributes> cases = {attrs({{"keepdims", int64_t(0)}}),
                                   attrs({{"noop_with_empty_axes", int64_t(1)}})};
  for (const char* op : {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"}) {
    for (const Attributes& a : cases) {
      OneNode one = one_node(op, {var({2, 3})}, a);
      Graph g = one.graph;
      Node node = g.nodes()[0];
      g.nodes().clear();
      FissionBuilder builder(g, node);
      std::vector<ValueId> outs = (*fission_rules().find(op))(node, builder);
      ASSERT_EQ(g.type(outs[0]), one.graph.type(one.graph.outputs()[0])) << op;
      g.outputs() = {outs[0]};
      for (const Node& n : g.nodes()) EXPECT_TRUE(primitive_kind(n, g).has_value()) << n.describe();
      expect_canonical_reduces(g);
      expect_same_outputs(one.graph, g, random_feeds(one, 3));
    }
  }
}

// CumSum's axis decides its index map: with a constant axis it is a reduce
// primitive; with an axis known only at run time it stays whole (opaque), so
// fission passes it through and the runtime runs it as one kernel.
TEST(ReduceRules, CumSumWithRuntimeAxisIsOpaque) {
  OneNode constant_axis = one_node("CumSum", {var({2, 3}), cst(Tensor::scalar_i64(1))});
  EXPECT_EQ(primitive_kind(constant_axis.graph.nodes()[0], constant_axis.graph), PrimitiveKind::Reduce);
  OneNode runtime_axis = one_node("CumSum", {var({2, 3}), var({}, DType::Int64, 0, 2)});
  EXPECT_EQ(primitive_kind(runtime_axis.graph.nodes()[0], runtime_axis.graph), PrimitiveKind::Opaque);
  Graph g = fission(runtime_axis.graph);
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0].op, "CumSum");
  std::map<std::string, Tensor> feeds = {{"in0", random_tensor(DType::Float32, {2, 3}, 1)},
                                         {"in1", Tensor::scalar_i64(1)}};
  expect_same_outputs(runtime_axis.graph, g, feeds);
}

}  // namespace
}  // namespace orchid::fission
