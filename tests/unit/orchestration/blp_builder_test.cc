// The BLP builder (blp_builder.h): the problems of a small graph as golden
// text, and with alternatives (ir/alternatives.h) the alias kernels and node
// covers checked where it matters: on random graphs with random alternative
// forms, CBC on the built problem (covers included) finds the optimum that
// brute force finds without the covers, so the covers cut off no plan.
#include "orchestration/blp_builder.h"

#include <gtest/gtest.h>

#include <random>

#include "../runtime/runtime_test_util.h"
#include "orchestration/plan_cache.h"
#include "orchestration/solver.h"

namespace orchid::orchestration {
namespace {

using runtime::testing::GraphBuilder;

CandidateRules fuse_everything() {
  CandidateRules rules;
  rules.fusion.is_linear = [](const Graph&, const Node& node) { return node.op == "MatMul"; };
  rules.fusion.can_fuse = [](const Graph&, const Node&) { return true; };
  rules.can_generate = [](const Graph&, const runtime::KernelGroup&) { return true; };
  rules.linear_supported = [](const Graph& graph, const runtime::KernelGroup& group) {
    return group.nodes.size() == 1 || (group.nodes.size() == 2 && graph.nodes()[group.nodes[1]].op == "Relu");
  };
  return rules;
}

struct Built {
  CandidateSet set;
  std::vector<PartProblem> parts;
};

// Linear candidates keep native layouts, the rest row-major.
Built build(const Graph& graph, const std::vector<Alternative>& alternatives = {}, bool node_covers = true) {
  Built built;
  built.set = enumerate_candidates(graph, fuse_everything(), {}, alternatives);
  std::vector<ValueId> live;
  for (const Alternative& a : alternatives) live.push_back(a.derived);
  const runtime::GroupMaker make_group(graph, live);
  std::vector<runtime::KernelGroup> groups;
  std::vector<KernelLayout> layouts;
  for (const Candidate& candidate : built.set.candidates) {
    groups.push_back(make_group(candidate.nodes));
    layouts.push_back(candidate.kind == CandidateKind::Linear ? KernelLayout::Native : KernelLayout::RowMajor);
  }
  built.parts = build_part_problems(graph, built.set, groups, layouts, alternatives, node_covers);
  return built;
}

// x -> MatMul(x, w) -> Relu -> Exp -> output.
TEST(BlpBuilder, ProblemOfAChainAsText) {
  GraphBuilder b;
  const ValueId x = b.input("x", {4, 8});
  const ValueId y = b.op("Relu", {b.op("MatMul", {x, b.constant({8, 8})})});
  const Graph graph = b.finish(b.op("Exp", {y}));
  const Built built = build(graph);
  ASSERT_EQ(built.parts.size(), 1u);
  // Tensors: 0 the MatMul's output, 1 the Relu's, 2 the Exp's (the graph
  // output, required row-major), 3 x (available); native twins 4 (x), 5 (0),
  // 6 (1). Kernels: 0 MatMul (native), 1 Relu, 2 Exp, 3 MatMul+Relu (native),
  // 4 Relu+Exp (generated); the reorders 5 -> 0, 0 -> 5, 6 -> 1, 1 -> 6 and
  // x's one-way 3 -> 4. Cuts: a cover per node.
  EXPECT_EQ(blp_problem_text(built.parts[0].problem),
            "tensors 7\navailable 3\nrequired 2\n"
            "kernel 0x0p+0 in 4\n out 5\nkernel 0x0p+0 in 0\n out 1\nkernel 0x0p+0 in 1\n out 2\n"
            "kernel 0x0p+0 in 4\n out 6\nkernel 0x0p+0 in 0\n out 2\n"
            "kernel 0x0p+0 in 5\n out 0\nkernel 0x0p+0 in 0\n out 5\nkernel 0x0p+0 in 6\n out 1\n"
            "kernel 0x0p+0 in 1\n out 6\nkernel 0x0p+0 in 3\n out 4\n"
            "cut\n then 0 3\ncut\n then 1 3 4\ncut\n then 2 4\n");
}

// x -> MatMul -> y | -> Exp -> output, the cut between two parts: the
// MatMul's part may leave y in either form only when a candidate of the
// later part reads it natively; with row-major readers only, y is required
// row-major there (the later part would convert it otherwise, unpriced here).
TEST(BlpBuilder, ATensorNoLaterPartReadsNativelyIsRequiredRowMajor) {
  GraphBuilder b;
  const ValueId x = b.input("x", {4, 8});
  const Graph graph = b.finish(b.op("Exp", {b.op("MatMul", {x, b.constant({8, 8})})}));
  CandidateSet set;
  set.clusters.members = {{0}, {1}};
  set.clusters.cluster_of = {0, 1};
  set.parts = {Part{0, 1}, Part{1, 2}};
  set.candidates = {{{0}, CandidateKind::Linear, 0}, {{0}, CandidateKind::Linear, 0, "direct"},
                    {{1}, CandidateKind::Generated, 1}};
  std::vector<runtime::KernelGroup> groups;
  for (const Candidate& candidate : set.candidates) groups.push_back(runtime::make_group(graph, candidate.nodes));
  for (const KernelLayout reader : {KernelLayout::RowMajor, KernelLayout::Either}) {
    const std::vector<PartProblem> parts =
        build_part_problems(graph, set, groups, {KernelLayout::Native, KernelLayout::RowMajor, reader}, {}, false);
    ASSERT_EQ(parts.size(), 2u);
    const BlpProblem& first = parts[0].problem;  // tensor 0: y, 1: x; their native twins 2 and 3
    if (reader == KernelLayout::RowMajor) {
      EXPECT_EQ(first.required, (std::vector<int>{0}));
      EXPECT_TRUE(first.cuts.empty());
    } else {
      EXPECT_TRUE(first.required.empty());
      // y's writers in either form: the direct MatMul, the native one and the two reorders.
      ASSERT_EQ(first.cuts.size(), 1u);
      EXPECT_EQ(first.cuts[0].one_of.size(), 4u);
    }
  }
}

// A random graph of elementwise nodes on one shape; each node picked for an
// alternative gets a derived form of one or two nodes, inserted before it,
// that reads some of the values the original reads.
struct RandomAlternatives {
  Graph graph;
  std::vector<Alternative> alternatives;
};

RandomAlternatives random_alternatives(std::mt19937& rng) {
  GraphBuilder b;
  std::vector<ValueId> values = {b.input("x", {4, 4})};
  std::vector<Alternative> alternatives;
  const int nodes = std::uniform_int_distribution<int>(3, 6)(rng);
  const auto pick = [&] { return values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng)]; };
  for (int n = 0; n < nodes; ++n) {
    const bool binary = values.size() > 1 && rng() % 2;
    const std::vector<ValueId> inputs = binary ? std::vector<ValueId>{pick(), pick()} : std::vector<ValueId>{pick()};
    Alternative a;
    const bool alternative = rng() % 3 == 0;
    if (alternative) {
      const size_t first = b.g.nodes().size();
      ValueId d = b.op("Neg", {inputs[rng() % inputs.size()]});
      if (rng() % 2) d = b.op("Abs", {d});
      for (size_t i = first; i < b.g.nodes().size(); ++i) a.derived_nodes.push_back(i);
      a.derived = d;
    }
    const ValueId v = binary ? b.op("Add", inputs) : b.op(rng() % 2 ? "Relu" : "Exp", inputs);
    if (alternative) {
      a.original = v;
      a.original_nodes = {b.g.nodes().size() - 1};
      alternatives.push_back(a);
    }
    values.push_back(v);
  }
  Graph graph = b.finish(values.back());
  if (rng() % 2 && values.size() > 2) graph.outputs().push_back(values[values.size() / 2]);
  return {std::move(graph), std::move(alternatives)};
}

TEST(BlpBuilder, CoversWithRandomAlternativesKeepTheOptimum) {
  std::mt19937 rng(2026);
  std::unique_ptr<Solver> cbc = make_cbc_solver();
  std::unique_ptr<Solver> brute = make_brute_force_solver();
  int trials = 0, derived_chosen = 0, original_kept = 0;
  while (trials < 150) {
    RandomAlternatives r = random_alternatives(rng);
    if (r.alternatives.empty()) continue;
    check_alternatives(r.graph, r.alternatives);
    Built built = build(r.graph, r.alternatives);
    const Built uncovered = build(r.graph, r.alternatives, /*node_covers=*/false);
    for (size_t p = 0; p < built.parts.size(); ++p) {
      PartProblem& part = built.parts[p];
      BlpProblem& problem = part.problem;
      if (problem.kernels.size() > 34) continue;
      for (BlpKernel& kernel : problem.kernels) kernel.cost = std::uniform_real_distribution<double>(1, 10)(rng);
      for (size_t k = part.candidates.size(); k < part.candidates.size() + part.aliases.size(); ++k) {
        problem.kernels[k].cost = 0;
      }
      BlpProblem plain = uncovered.parts[p].problem;
      ASSERT_EQ(plain.kernels.size(), problem.kernels.size());
      for (size_t k = 0; k < plain.kernels.size(); ++k) plain.kernels[k].cost = problem.kernels[k].cost;
      ++trials;
      const BlpSolution exact = solve_blp(*brute, plain);
      const BlpSolution solved = solve_blp(*cbc, problem);
      ASSERT_EQ(exact.feasible, solved.feasible);
      if (!exact.feasible) continue;
      ASSERT_NEAR(solved.cost, exact.cost, 1e-9) << blp_problem_text(problem);
      bool alias = false;
      for (size_t k : solved.chosen) alias = alias || part.alias(k).has_value();
      (alias ? derived_chosen : original_kept) += 1;
    }
  }
  // Both outcomes happen, so both kinds of cover were exercised.
  EXPECT_GT(derived_chosen, 10);
  EXPECT_GT(original_kept, 10);
}

TEST(BlpBuilder, AnAliasReadsTheDerivedValueAndWritesTheOriginal) {
  GraphBuilder b;
  const ValueId x = b.input("x", {4, 4});
  const ValueId derived = b.op("Neg", {x});    // node 0
  const ValueId original = b.op("Exp", {x});   // node 1
  const Graph graph = b.finish(b.op("Relu", {original}));
  const Alternative alternative{original, derived, {1}, {0}, "test"};
  const Built built = build(graph, {alternative});
  ASSERT_EQ(built.parts.size(), 1u);
  const PartProblem& part = built.parts[0];
  ASSERT_EQ(part.aliases, std::vector<size_t>{0});
  const size_t k = part.candidates.size();
  EXPECT_EQ(part.alias(k), 0u);
  EXPECT_FALSE(part.candidate(k));
  const BlpKernel& alias = part.problem.kernels[k];
  ASSERT_EQ(alias.inputs.size(), 1u);
  ASSERT_EQ(alias.outputs.size(), 1u);
  EXPECT_EQ(part.value_of[size_t(alias.inputs[0])], derived);
  EXPECT_EQ(part.value_of[size_t(alias.outputs[0])], original);
  // Covers: the Relu's (node 2) unconditionally; the original's Exp (node 1)
  // unless the alias is chosen; the derived Neg (node 0) when it is.
  // (Kernels of a fused candidate cover more nodes; the layout model adds copies.)
  auto every_covers = [&](const std::vector<size_t>& kernels, size_t node) {
    for (size_t j : kernels) {
      if (part.alias(j)) continue;
      const std::optional<size_t> c = part.candidate(j);
      if (!c) return false;
      const std::vector<size_t>& nodes = built.set.candidates[*c].nodes;
      if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) return false;
    }
    return true;
  };
  int relu = 0, exp_or_alias = 0, neg_if_alias = 0;
  for (const BlpCut& cut : part.problem.cuts) {
    const bool has_alias =
        std::any_of(cut.one_of.begin(), cut.one_of.end(), [&](size_t j) { return part.alias(j).has_value(); });
    if (cut.all_of.empty() && !has_alias) {
      EXPECT_TRUE(every_covers(cut.one_of, 2));
      ++relu;
    } else if (cut.all_of.empty()) {
      EXPECT_TRUE(every_covers(cut.one_of, 1));
      ++exp_or_alias;
    } else {
      ASSERT_EQ(cut.all_of.size(), 1u);
      EXPECT_TRUE(part.alias(cut.all_of[0]));
      EXPECT_TRUE(every_covers(cut.one_of, 0));
      ++neg_if_alias;
    }
  }
  EXPECT_GE(relu, 1);
  EXPECT_GE(exp_or_alias, 1);
  EXPECT_GE(neg_if_alias, 1);
}

}  // namespace
}  // namespace orchid::orchestration
