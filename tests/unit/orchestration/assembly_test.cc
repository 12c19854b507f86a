// Assembly keeps the chosen form of each alternative: the derived result
// takes the original value's place when its alias is chosen, the other
// form's nodes and weights go, and the kernels' groups are made again.
#include "orchestration/assembly.h"

#include <gtest/gtest.h>

#include <set>

#include "../runtime/runtime_test_util.h"

namespace orchid::orchestration {
namespace {

using runtime::testing::GraphBuilder;

struct TwoForms {
  Graph graph;
  Alternative alternative;
};

// x -> Neg (derived, node 0, reads a weight of its own through Mul, node 1)
// x -> Exp (original, node 2) -> Relu (node 3, the output).
TwoForms two_forms() {
  GraphBuilder b;
  const ValueId x = b.input("x", {4, 4});
  const ValueId negated = b.op("Neg", {x});
  const ValueId derived = b.op("Mul", {negated, b.constant({4, 4})});
  const ValueId original = b.op("Exp", {x});
  Graph graph = b.finish(b.op("Relu", {original}));
  return {graph, Alternative{original, derived, {2}, {0, 1}, "test"}};
}

std::vector<std::string> ops_of(const Graph& graph) {
  std::vector<std::string> ops;
  for (const Node& node : graph.nodes()) ops.push_back(node.op);
  return ops;
}

TEST(Assembly, AChosenDerivedFormTakesTheOriginalValuesPlace) {
  const TwoForms t = two_forms();
  const std::vector<ChosenKernel> chosen = {{{0, 1}, "", {t.alternative.derived}},
                                            {{3}, "", {t.graph.outputs()[0]}}};
  const KeptForms kept = keep_chosen_forms(t.graph, {t.alternative}, chosen, {0});
  EXPECT_EQ(ops_of(kept.graph), (std::vector<std::string>{"Neg", "Mul", "Relu"}));
  EXPECT_EQ(kept.derived_nodes_chosen, std::vector<std::string>{t.graph.nodes()[2].name});
  ASSERT_EQ(kept.groups.size(), 2u);
  // The derived kernel writes what the Relu reads, under the original's name.
  ASSERT_EQ(kept.groups[0].outputs.size(), 1u);
  ASSERT_EQ(kept.groups[1].inputs.size(), 1u);
  EXPECT_EQ(kept.groups[0].outputs[0], kept.groups[1].inputs[0]);
  EXPECT_EQ(kept.graph.value(kept.groups[0].outputs[0]).name, t.graph.value(t.alternative.original).name);
  EXPECT_EQ(kept.groups[0].nodes, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(kept.groups[1].nodes, std::vector<size_t>{2});
}

TEST(Assembly, AnUnchosenDerivedFormAndItsWeightsGo) {
  const TwoForms t = two_forms();
  const std::vector<ChosenKernel> chosen = {{{2, 3}, "v", {t.graph.outputs()[0]}}};
  const KeptForms kept = keep_chosen_forms(t.graph, {t.alternative}, chosen, {});
  EXPECT_EQ(ops_of(kept.graph), (std::vector<std::string>{"Exp", "Relu"}));
  EXPECT_TRUE(kept.derived_nodes_chosen.empty());
  size_t constants = 0;
  for (size_t v = 0; v < kept.graph.num_values(); ++v) constants += kept.graph.value(ValueId(v)).is_constant();
  EXPECT_EQ(constants, 0u);  // the Mul's weight went with it
  ASSERT_EQ(kept.groups.size(), 1u);
  EXPECT_EQ(kept.groups[0].nodes, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(kept.groups[0].variant, "v");
}

TEST(Assembly, AnAliasChosenBesideAKernelWritingTheOriginalRenamesNothing) {
  const TwoForms t = two_forms();
  const std::vector<ChosenKernel> chosen = {{{0, 1}, "", {t.alternative.derived}},
                                            {{2}, "", {t.alternative.original}},
                                            {{3}, "", {t.graph.outputs()[0]}}};
  const KeptForms kept = keep_chosen_forms(t.graph, {t.alternative}, chosen, {0});
  EXPECT_TRUE(kept.derived_nodes_chosen.empty());
  // Both forms' nodes are computed by chosen kernels, so both stay; the original value keeps its writer.
  EXPECT_EQ(ops_of(kept.graph), (std::vector<std::string>{"Neg", "Mul", "Exp", "Relu"}));
  ASSERT_EQ(kept.groups.size(), 3u);
  EXPECT_EQ(kept.groups[1].outputs, kept.groups[2].inputs);
  EXPECT_EQ(kept.graph.value(kept.groups[2].inputs[0]).name, t.graph.value(t.alternative.original).name);
}

// x -> Neg (node 0) = p; original: p -> Exp (node 1); derived: p -> Abs
// (node 2) -> Sqrt (node 3); Relu (node 4) reads the original. Kernels
// {0, 2} and {2, 3} overlap: the first wrote p only because the Exp read it.
TEST(Assembly, AValueAnOverlappingKernelReadsStaysWrittenWhenItsOtherReaderGoes) {
  GraphBuilder b;
  const ValueId x = b.input("x", {4, 4});
  const ValueId p = b.op("Neg", {x});
  const ValueId original = b.op("Exp", {p});
  const ValueId a = b.op("Abs", {p});
  const ValueId derived = b.op("Sqrt", {a});
  const Graph graph = b.finish(b.op("Relu", {original}));
  const Alternative alternative{original, derived, {1}, {2, 3}, "test"};
  const std::vector<ChosenKernel> chosen = {{{0, 2}, "", {p, a}}, {{2, 3}, "", {derived}},
                                            {{4}, "", {graph.outputs()[0]}}};
  const KeptForms kept = keep_chosen_forms(graph, {alternative}, chosen, {0});
  EXPECT_EQ(ops_of(kept.graph), (std::vector<std::string>{"Neg", "Abs", "Sqrt", "Relu"}));
  ASSERT_EQ(kept.groups.size(), 3u);
  // Every value a kernel reads is an input of the graph or written by an earlier kernel.
  std::set<ValueId> written(kept.graph.inputs().begin(), kept.graph.inputs().end());
  for (const runtime::KernelGroup& group : kept.groups) {
    for (ValueId id : group.inputs) EXPECT_TRUE(written.count(id)) << kept.graph.value(id).name;
    written.insert(group.outputs.begin(), group.outputs.end());
  }
  EXPECT_EQ(kept.groups[1].inputs.size(), 1u);
  EXPECT_EQ(kept.graph.value(kept.groups[1].inputs[0]).name, graph.value(p).name);
}

}  // namespace
}  // namespace orchid::orchestration
