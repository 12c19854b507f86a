// The derivation stage on graphs: regions see through layout producers,
// derived forms replace the originals when the cost function says they are
// faster, and the rewritten graph computes the same outputs (reference
// interpreter). Costs here are fake (node kinds), so the tests are fast and
// deterministic; measured costs are exercised by the CLI tests.
#include "derivation/derive.h"

#include <gtest/gtest.h>

#include "../fission/fission_test_util.h"
#include "derivation/region.h"
#include "fission/fission.h"

namespace orchid::derivation {
namespace {

using fission::testing::add_op;
using fission::testing::attrs;
using fission::testing::expect_same_outputs;
using fission::testing::random_tensor;

size_t count_op(const Graph& g, const std::string& op) {
  size_t n = 0;
  for (const Node& node : g.nodes()) n += node.op == op;
  return n;
}

// A cost that makes any form without `op` look twice as fast.
GraphCost penalize(const std::string& op) {
  return [op](const Graph& g) { return count_op(g, op) ? 2.0 : 1.0; };
}

Graph conv_graph(Shape x, Shape w, Attributes a) {
  Graph g;
  ValueId in = g.add_value("x", {DType::Float32, x});
  g.inputs().push_back(in);
  ValueId weights = g.add_constant("w", random_tensor(DType::Float32, w, 3, -1, 1));
  ValueId y = add_op(g, "Conv", {in, weights}, a)[0];
  ValueId r = add_op(g, "Relu", {y})[0];
  g.outputs().push_back(r);
  return g;
}

TEST(Derive, Conv3x3BecomesMatMulWhenCheaper) {
  Graph g = conv_graph({1, 4, 6, 6}, {8, 4, 3, 3}, attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  DeriveOptions options;
  options.cost = options.estimate = penalize("Conv");
  DeriveReport report;
  Graph d = derive(g, options, &report);
  ASSERT_EQ(report.records.size(), 1u);
  EXPECT_TRUE(report.records[0].applied) << report.records[0].note;
  EXPECT_EQ(count_op(d, "Conv"), 0u);
  EXPECT_GE(count_op(d, "MatMul"), 1u);
  EXPECT_FALSE(report.records[0].derivation.empty());
  expect_same_outputs(g, d);
}

TEST(Derive, KeepsTheOriginalWhenItIsFaster) {
  Graph g = conv_graph({1, 4, 6, 6}, {8, 4, 3, 3}, attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  DeriveOptions options;
  options.cost = options.estimate = penalize("MatMul");
  DeriveReport report;
  Graph d = derive(g, options, &report);
  ASSERT_EQ(report.records.size(), 1u);
  EXPECT_FALSE(report.records[0].applied);
  EXPECT_EQ(count_op(d, "Conv"), 1u);
}

TEST(Derive, DilatedConvBecomesPlainConv) {
  Graph g = conv_graph({1, 3, 8, 8}, {4, 3, 3, 3},
                       attrs({{"pads", std::vector<int64_t>{2, 2, 2, 2}}, {"dilations", std::vector<int64_t>{2, 2}}}));
  DeriveOptions options;
  // Cheaper: any graph whose convolutions are not dilated.
  options.cost = [](const Graph& graph) {
    for (const Node& n : graph.nodes()) {
      if (n.op == "Conv" && n.attrs.get_ints("dilations", {1, 1}) != std::vector<int64_t>{1, 1}) return 2.0;
    }
    return 1.0;
  };
  options.estimate = options.cost;
  DeriveReport report;
  Graph d = derive(g, options, &report);
  ASSERT_EQ(report.records.size(), 1u);
  EXPECT_TRUE(report.records[0].applied) << report.records[0].note;
  expect_same_outputs(g, d);
}

TEST(Derive, DilatedDepthwiseConvBecomesAGroupedConvWithLessDilation) {
  // A depthwise conv (8 groups of one channel), dilation 2: derived forms are
  // grouped Convs too (the group iterator in both operands).
  Graph g = conv_graph({1, 8, 10, 10}, {8, 1, 3, 3},
                       attrs({{"pads", std::vector<int64_t>{2, 2, 2, 2}},
                              {"dilations", std::vector<int64_t>{2, 2}},
                              {"group", int64_t(8)}}));
  DeriveOptions options;
  // Cheaper: a graph whose convolutions are dilated along fewer axes.
  options.cost = [](const Graph& graph) {
    double cost = 1;
    for (const Node& n : graph.nodes()) {
      if (n.op != "Conv") continue;
      for (int64_t d : n.attrs.get_ints("dilations", {1, 1})) cost += d > 1 ? 1 : 0;
    }
    return cost;
  };
  options.estimate = options.cost;
  DeriveReport report;
  Graph d = derive(g, options, &report);
  ASSERT_EQ(report.records.size(), 1u);
  EXPECT_TRUE(report.records[0].applied) << report.records[0].note;
  size_t grouped = 0;
  for (const Node& n : d.nodes()) grouped += n.op == "Conv" && n.attrs.get_int("group", 1) == 8;
  EXPECT_EQ(grouped, 1u);
  expect_same_outputs(g, d);
}

TEST(Derive, IdenticalPrimitivesAreDerivedOnce) {
  Graph g;
  ValueId x = g.add_value("x", {DType::Float32, {1, 2, 5, 5}});
  g.inputs().push_back(x);
  ValueId w = g.add_constant("w", random_tensor(DType::Float32, {2, 2, 3, 3}, 5, -1, 1));
  ValueId y = add_op(g, "Conv", {x, w}, attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}))[0];
  ValueId z = add_op(g, "Conv", {y, w}, attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}))[0];
  g.outputs().push_back(z);
  DeriveOptions options;
  size_t costed = 0;
  options.cost = [&](const Graph& graph) {
    ++costed;
    return count_op(graph, "Conv") ? 2.0 : 1.0;
  };
  options.estimate = [](const Graph& graph) { return count_op(graph, "Conv") ? 2.0 : 1.0; };
  DeriveReport report;
  Graph d = derive(g, options, &report);
  ASSERT_EQ(report.records.size(), 1u);
  EXPECT_EQ(report.records[0].nodes.size(), 2u);
  EXPECT_LE(costed, 1 + options.max_alternatives);
  EXPECT_EQ(count_op(d, "Conv"), 0u);
  expect_same_outputs(g, d);
}

// Longformer's banded scores: K padded along the sequence, windows gathered
// with an affine constant index, transposed, multiplied with Q per query.
Graph banded_graph(int64_t n, int64_t dim, int64_t window, int64_t dilation) {
  Graph g;
  ValueId q = g.add_value("q", {DType::Float32, {2, n, 1, dim}});
  ValueId k = g.add_value("k", {DType::Float32, {2, n, dim}});
  g.inputs() = {q, k};
  int64_t pad = window * dilation;
  ValueId pads = g.add_constant("pads", Tensor::vector_i64({0, pad, 0, 0, pad, 0}));
  ValueId kp = add_op(g, "Pad", {k, pads})[0];
  Tensor index(DType::Int64, {n, 2 * window + 1});
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j <= 2 * window; ++j) index.set_f64(i * (2 * window + 1) + j, double(i + (j - window) * dilation + pad));
  }
  ValueId idx = g.add_constant("index", index);
  ValueId kw = add_op(g, "Gather", {kp, idx}, attrs({{"axis", int64_t(1)}}))[0];  // [2, n, 2w+1, dim]
  ValueId kt = add_op(g, "Transpose", {kw}, attrs({{"perm", std::vector<int64_t>{0, 1, 3, 2}}}))[0];
  ValueId s = add_op(g, "MatMul", {q, kt})[0];  // [2, n, 1, 2w+1]
  g.outputs().push_back(s);
  return g;
}

TEST(Derive, RegionSeesThroughLayoutProducers) {
  Graph g = banded_graph(16, 4, 2, 2);
  RegionBuilder builder(g);
  std::optional<Region> region = builder.region(g.nodes().size() - 1);
  ASSERT_TRUE(region.has_value());
  EXPECT_EQ(region->nodes.size(), 4u);  // Pad, Gather, Transpose, MatMul
  EXPECT_EQ(region->inputs.size(), 2u);  // q and k
  std::map<std::string, Tensor> feeds = fission::testing::uniform_feeds(g, 3);
  expect_same_outputs(g, region_graph(g, *region), feeds);
}

TEST(Derive, BandedMatMulBecomesG2bmm) {
  Graph g = banded_graph(16, 4, 2, 2);
  DeriveOptions options;
  options.cost = [](const Graph& graph) {
    return count_op(graph, "Gather") + count_op(graph, "MatMul") ? 2.0 : 1.0;
  };
  options.estimate = options.cost;
  DeriveReport report;
  Graph d = derive(g, options, &report);
  ASSERT_EQ(report.records.size(), 1u);
  EXPECT_TRUE(report.records[0].applied) << report.records[0].note << " " << report.records[0].stats.to_string();
  EXPECT_EQ(count_op(d, "G2BMM"), 1u);
  EXPECT_EQ(count_op(d, "Gather"), 0u);
  expect_same_outputs(g, d);
}


// The graph with only `value` as its output.
Graph returning(Graph graph, ValueId value) {
  graph.outputs() = {value};
  return graph;
}

TEST(DeriveAlternatives, AFasterFormGoesBesideTheOriginal) {
  Graph g = conv_graph({1, 4, 6, 6}, {8, 4, 3, 3}, attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  DeriveOptions options;
  options.cost = options.estimate = penalize("Conv");
  DeriveReport report;
  DerivedGraph d = derive_alternatives(g, options, &report);
  ASSERT_EQ(d.alternatives.size(), 1u);
  const Alternative& a = d.alternatives[0];
  check_alternatives(d.graph, d.alternatives);
  EXPECT_EQ(d.graph.nodes()[a.original_nodes.back()].op, "Conv");
  EXPECT_EQ(count_op(d.graph, "Conv"), 1u);
  EXPECT_GE(count_op(d.graph, "MatMul"), 1u);
  EXPECT_EQ(a.derivation, report.records[0].derivation);
  // Node order and value ids kept: the model's output is the same value.
  EXPECT_EQ(d.graph.outputs(), g.outputs());
  expect_same_outputs(g, d.graph);
  // Both forms compute the same tensor.
  expect_same_outputs(returning(d.graph, a.original), returning(d.graph, a.derived));
}

TEST(DeriveAlternatives, AFormNearlyAsFastIsOfferedASlowOneNot) {
  Graph g = conv_graph({1, 4, 6, 6}, {8, 4, 3, 3}, attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  // The original's small graph is its one Conv; every derived form has more nodes.
  const auto derived_costs = [](double seconds) {
    return [seconds](const Graph& graph) { return graph.nodes().size() == 1 ? 1.0 : seconds; };
  };
  DeriveOptions options;
  options.estimate = penalize("MatMul");
  options.cost = derived_costs(1.05);
  DeriveReport report;
  EXPECT_EQ(derive_alternatives(g, options, &report).alternatives.size(), 1u);
  EXPECT_FALSE(report.records[0].applied);  // derive() would keep the original
  options.cost = derived_costs(1.5);
  EXPECT_TRUE(derive_alternatives(g, options).alternatives.empty());
}

TEST(DeriveAlternatives, ARegionWithLayoutProducersIsOneForm) {
  Graph g = banded_graph(16, 4, 2, 2);
  DeriveOptions options;
  options.cost = [](const Graph& graph) {
    return count_op(graph, "Gather") + count_op(graph, "MatMul") ? 2.0 : 1.0;
  };
  options.estimate = options.cost;
  DerivedGraph d = derive_alternatives(g, options);
  ASSERT_EQ(d.alternatives.size(), 1u);
  const Alternative& a = d.alternatives[0];
  EXPECT_EQ(a.original_nodes.size(), 4u);  // Pad, Gather, Transpose, MatMul
  EXPECT_EQ(count_op(d.graph, "G2BMM"), 1u);
  expect_same_outputs(g, d.graph);
  expect_same_outputs(returning(d.graph, a.original), returning(d.graph, a.derived));
}


TEST(DeriveAlternatives, DecisionsAreKeptAndReadBackWithoutSearchOrCost) {
  Graph g = banded_graph(16, 4, 2, 2);
  std::map<std::string, std::string> store;
  int costed = 0;
  DeriveOptions options;
  options.estimate = [](const Graph& graph) { return count_op(graph, "Gather") + count_op(graph, "MatMul") ? 2.0 : 1.0; };
  options.cost = [&](const Graph& graph) { return ++costed, options.estimate(graph); };
  options.load_decision = [&](const std::string& key) -> std::optional<std::string> {
    auto it = store.find(key);
    return it == store.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  options.store_decision = [&](const std::string& key, const std::string& value) { store[key] = value; };
  DeriveReport first;
  const DerivedGraph cold = derive_alternatives(g, options, &first);
  ASSERT_EQ(cold.alternatives.size(), 1u);
  EXPECT_EQ(store.size(), 1u);
  EXPECT_EQ(first.reused, 0u);
  const int costed_cold = costed;
  EXPECT_GT(costed_cold, 0);

  DeriveReport second;
  const DerivedGraph warm = derive_alternatives(g, options, &second);
  EXPECT_EQ(costed, costed_cold);  // nothing measured again
  EXPECT_EQ(second.reused, 1u);
  EXPECT_EQ(second.records[0].stats.states, first.records[0].stats.states);  // the record as it was
  EXPECT_EQ(second.records[0].nodes, first.records[0].nodes);
  ASSERT_EQ(warm.alternatives.size(), 1u);
  EXPECT_EQ(warm.alternatives[0].derivation, cold.alternatives[0].derivation);
  EXPECT_EQ(warm.graph.nodes().size(), cold.graph.nodes().size());
  expect_same_outputs(returning(warm.graph, warm.alternatives[0].original),
                      returning(warm.graph, warm.alternatives[0].derived));

  // A damaged record is decided again.
  store.begin()->second = R"({"record":{"op":"MatMul"},"state":"tensor t0[2] L<i:0:2> t0[i]","fingerprint":"0"})";
  DeriveReport third;
  EXPECT_EQ(derive_alternatives(g, options, &third).alternatives.size(), 1u);
  EXPECT_EQ(third.reused, 0u);
  EXPECT_GT(costed, costed_cold);
}

TEST(DeriveAlternatives, ASpentBudgetLeavesTheRestUnderivedUntilABudgetIsLarger) {
  Graph g = conv_graph({1, 4, 6, 6}, {8, 4, 3, 3}, attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  std::map<std::string, std::string> store;
  int costed = 0;
  DeriveOptions options;
  options.estimate = penalize("Conv");
  options.cost = [&](const Graph& graph) { return ++costed, options.estimate(graph); };
  options.load_decision = [&](const std::string& key) -> std::optional<std::string> {
    auto it = store.find(key);
    return it == store.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  options.store_decision = [&](const std::string& key, const std::string& value) { store[key] = value; };
  options.budget_seconds = 0;
  DeriveReport report;
  EXPECT_TRUE(derive_alternatives(g, options, &report).alternatives.empty());
  EXPECT_EQ(report.over_budget, 1u);
  ASSERT_EQ(report.records.size(), 1u);
  EXPECT_NE(report.records[0].note.find("budget"), std::string::npos);
  EXPECT_EQ(costed, 0);
  EXPECT_EQ(store.size(), 1u);  // the skip is kept

  // The same budget: the same plan, nothing derived or counted as reused.
  DeriveReport same;
  EXPECT_TRUE(derive_alternatives(g, options, &same).alternatives.empty());
  EXPECT_EQ(same.over_budget, 1u);
  EXPECT_EQ(same.reused, 0u);
  EXPECT_EQ(costed, 0);

  // A larger budget derives it, and that decision replaces the skip.
  options.budget_seconds = 60;
  DeriveReport larger;
  EXPECT_EQ(derive_alternatives(g, options, &larger).alternatives.size(), 1u);
  EXPECT_EQ(larger.over_budget, 0u);
  EXPECT_GT(costed, 0);
  const int costed_larger = costed;
  DeriveReport warm;
  EXPECT_EQ(derive_alternatives(g, options, &warm).alternatives.size(), 1u);
  EXPECT_EQ(warm.reused, 1u);
  EXPECT_EQ(costed, costed_larger);
}

TEST(DeriveAlternatives, WithABudgetTheKindsFurthestAboveTheirEstimateGoFirst) {
  // Conv A is the heavier by the roofline estimate; the measured cost puts
  // conv B a second above its estimate, so B is decided first.
  Graph g;
  const Attributes pads = attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  ValueId a = g.add_value("a", {DType::Float32, {1, 8, 12, 12}});
  ValueId b = g.add_value("b", {DType::Float32, {1, 4, 6, 6}});
  g.inputs() = {a, b};
  ValueId wa = g.add_constant("wa", random_tensor(DType::Float32, {8, 8, 3, 3}, 3, -1, 1));
  ValueId wb = g.add_constant("wb", random_tensor(DType::Float32, {4, 4, 3, 3}, 4, -1, 1));
  g.outputs().push_back(add_op(g, "Conv", {a, wa}, pads)[0]);
  g.outputs().push_back(add_op(g, "Conv", {b, wb}, pads)[0]);
  auto reads_b = [](const Graph& graph) {
    for (const Node& node : graph.nodes()) {
      if (node.op == "Conv" && graph.type(node.inputs[0]).shape == Shape{1, 4, 6, 6}) return true;
    }
    return false;
  };
  ASSERT_NE(g.nodes()[0].name, g.nodes()[1].name);
  DeriveOptions options;
  options.cost = [&](const Graph& graph) { return roofline_estimate(graph) + (reads_b(graph) ? 1.0 : 0.0); };
  DeriveReport unbounded;
  derive_alternatives(g, options, &unbounded);
  ASSERT_EQ(unbounded.records.size(), 2u);
  EXPECT_EQ(unbounded.records[0].nodes, std::vector<std::string>{g.nodes()[0].name});  // estimate order

  options.budget_seconds = 600;
  DeriveReport bounded;
  derive_alternatives(g, options, &bounded);
  ASSERT_EQ(bounded.records.size(), 2u);
  EXPECT_EQ(bounded.records[0].nodes, std::vector<std::string>{g.nodes()[1].name});
}

}  // namespace
}  // namespace orchid::derivation
