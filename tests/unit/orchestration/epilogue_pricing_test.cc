// A linear kernel with an eltwise epilogue chain is priced just below the
// same kernel with a shorter chain plus a kernel of the rest, where it was
// timed within the noise of that split; not where it was timed far above it,
// not for a tail that reads another tensor (a residual), not against untimed
// halves or another implementation's.
#include "orchestration/epilogue_pricing.h"

#include <gtest/gtest.h>

#include "../runtime/runtime_test_util.h"

namespace orchid::orchestration {
namespace {

using runtime::testing::GraphBuilder;

struct ChainCandidates {
  Graph graph;
  std::vector<Candidate> candidates;
  std::vector<runtime::KernelGroup> groups;
};

// Conv (0) -> Relu (1) -> Neg (2); Conv (3) -> Add (4) of a residual input.
// Candidates: 0 {0}, 1 {0,1}, 2 {0,1,2}, 3 {1}, 4 {1,2}, 5 {2}, 6 {3}, 7 {3,4},
// 8 {4}, 9 {0,1} as the direct variant.
ChainCandidates chain_candidates() {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 2, 4, 4});
  const ValueId y = b.op("Neg", {b.op("Relu", {b.op("Conv", {x, b.constant({2, 2, 1, 1})})})});
  const ValueId z = b.op("Add", {b.op("Conv", {x, b.constant({2, 2, 1, 1})}), b.input("r", {1, 2, 4, 4})});
  ChainCandidates s;
  s.graph = b.finish(b.op("Add", {y, z}));
  const auto linear = [](std::vector<size_t> nodes, std::string variant = "") {
    return Candidate{std::move(nodes), CandidateKind::Linear, 0, std::move(variant)};
  };
  const auto other = [](std::vector<size_t> nodes) { return Candidate{std::move(nodes), CandidateKind::Library}; };
  s.candidates = {linear({0}), linear({0, 1}), linear({0, 1, 2}), other({1}), other({1, 2}),
                  other({2}),  linear({3}),    linear({3, 4}),    other({4}), linear({0, 1}, "direct")};
  for (const Candidate& c : s.candidates) s.groups.push_back(runtime::make_group(s.graph, c.nodes));
  return s;
}

TEST(EpiloguePricing, AChainTimedWithinTheNoiseOfItsSplitIsPricedBelowIt) {
  const ChainCandidates s = chain_candidates();
  const std::vector<double> costs = {1.0, 1.2, 1.5, 0.1, 0.15, 0.05, 1.0, 1.2, 0.1, 1.3};
  const std::vector<double> price =
      price_epilogue_chains(s.graph, s.candidates, s.groups, costs, std::vector<bool>(costs.size(), true));
  EXPECT_DOUBLE_EQ(price[1], 0.999 * 1.1);  // Conv+Relu: within 1.25x of Conv, then Relu
  // Conv+Relu+Neg: the best split is Conv+Relu (as priced) then Neg, 1.1489; 1.5 is beyond 1.25x of it.
  EXPECT_DOUBLE_EQ(price[2], 1.5);
  EXPECT_DOUBLE_EQ(price[7], 1.2);  // the Add reads the residual: no split counts
  EXPECT_DOUBLE_EQ(price[9], 1.3);  // the direct variant has no shorter direct chain
  for (size_t i : {0, 3, 4, 5, 6, 8}) EXPECT_DOUBLE_EQ(price[i], costs[i]) << i;
}

TEST(EpiloguePricing, ALongerChainUsesTheBestSplit) {
  const ChainCandidates s = chain_candidates();
  const std::vector<double> costs = {1.0, 1.3, 1.2, 0.1, 0.12, 0.05, 1.0, 1.2, 0.1, 1.3};
  const std::vector<double> price =
      price_epilogue_chains(s.graph, s.candidates, s.groups, costs, std::vector<bool>(costs.size(), true));
  EXPECT_DOUBLE_EQ(price[1], 0.999 * 1.1);  // 1.3 is within 1.25 x 1.1
  // Splits of Conv+Relu+Neg: Conv then Relu+Neg (1.12), Conv+Relu (as priced) then Neg (1.1489).
  EXPECT_DOUBLE_EQ(price[2], 0.999 * 1.12);
}

TEST(EpiloguePricing, UntimedHalvesDoNotCount) {
  const ChainCandidates s = chain_candidates();
  const std::vector<double> costs = {1.0, 1.2, 1.5, 0.1, 0.15, 0.05, 1.0, 1.2, 0.1, 1.3};
  std::vector<bool> timed(costs.size(), true);
  timed[3] = false;  // the Relu alone is an estimate
  timed[4] = false;
  const std::vector<double> price = price_epilogue_chains(s.graph, s.candidates, s.groups, costs, timed);
  EXPECT_DOUBLE_EQ(price[1], 1.2);
  timed.assign(costs.size(), true);
  timed[1] = false;  // the fused kernel itself is an estimate
  EXPECT_DOUBLE_EQ(price_epilogue_chains(s.graph, s.candidates, s.groups, costs, timed)[1], 1.2);
}

TEST(EpiloguePricing, ATranscendentalTailIsComparedAsMeasured) {
  // Conv (0) -> Sigmoid (1): oneDNN's logistic post-op costs about what a
  // kernel of its own does, so the fused time stands even within the noise.
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 2, 4, 4});
  Graph graph = b.finish(b.op("Sigmoid", {b.op("Conv", {x, b.constant({2, 2, 1, 1})})}));
  const std::vector<Candidate> candidates = {{{0}, CandidateKind::Linear}, {{0, 1}, CandidateKind::Linear},
                                             {{1}, CandidateKind::Library}};
  std::vector<runtime::KernelGroup> groups;
  for (const Candidate& c : candidates) groups.push_back(runtime::make_group(graph, c.nodes));
  const std::vector<double> costs = {1.0, 1.2, 0.1};
  const std::vector<double> price =
      price_epilogue_chains(graph, candidates, groups, costs, std::vector<bool>(costs.size(), true));
  EXPECT_DOUBLE_EQ(price[1], 1.2);
}

}  // namespace
}  // namespace orchid::orchestration
