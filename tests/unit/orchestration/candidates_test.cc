// Candidate enumeration: clusters, convexity, linear chains, partitioning.
// The backend's rules are replaced by simple ones (every non-linear node
// fuses, every group is emittable) so the tests state the enumeration's own
// behaviour; the real rules are exercised by the pipeline tests.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "../runtime/runtime_test_util.h"
#include "backend/backend.h"
#include "orchestration/candidates.h"

namespace orchid::orchestration {
namespace {

using runtime::testing::GraphBuilder;

CandidateRules permissive_rules() {
  CandidateRules rules;
  rules.fusion.is_linear = [](const Graph&, const Node& node) { return node.op == "MatMul" || node.op == "Conv"; };
  rules.fusion.can_fuse = [](const Graph&, const Node& node) { return node.op != "TopK"; };
  rules.can_generate = [](const Graph&, const runtime::KernelGroup&) { return true; };
  rules.linear_supported = [](const Graph& graph, const runtime::KernelGroup& group) {
    // Linear anchor plus elementwise epilogues only.
    for (size_t i = 1; i < group.nodes.size(); ++i) {
      const std::string& op = graph.nodes()[group.nodes[i]].op;
      if (op != "Relu" && op != "Add" && op != "Sigmoid" && op != "Mul") return false;
    }
    return true;
  };
  return rules;
}

std::set<std::vector<size_t>> node_sets(const CandidateSet& set, CandidateKind kind) {
  std::set<std::vector<size_t>> out;
  for (const Candidate& c : set.candidates) {
    if (c.kind == kind) out.insert(c.nodes);
  }
  return out;
}

// Whether no node outside `nodes` is on a path between two of its nodes.
bool is_convex(const Graph& graph, const std::vector<size_t>& nodes) {
  const size_t n = graph.nodes().size();
  std::vector<std::set<size_t>> reach(n);  // descendants
  std::vector<std::vector<size_t>> readers(graph.num_values());
  for (size_t i = 0; i < n; ++i) {
    for (ValueId id : graph.nodes()[i].inputs) if (id != kNoValue) readers[size_t(id)].push_back(i);
  }
  for (size_t i = n; i-- > 0;) {
    for (ValueId out : graph.nodes()[i].outputs) {
      for (size_t r : readers[size_t(out)]) {
        reach[i].insert(r);
        reach[i].insert(reach[r].begin(), reach[r].end());
      }
    }
  }
  const std::set<size_t> members(nodes.begin(), nodes.end());
  for (size_t outside = 0; outside < n; ++outside) {
    if (members.count(outside)) continue;
    bool from_member = false, to_member = false;
    for (size_t m : nodes) {
      from_member = from_member || reach[m].count(outside);
      to_member = to_member || reach[outside].count(m);
    }
    if (from_member && to_member) return false;
  }
  return true;
}

TEST(Candidates, ChainOfElementwiseIsOneCluster) {
  GraphBuilder b;
  ValueId x = b.input("x", {4, 8});
  ValueId y = b.op("Exp", {b.op("Relu", {x})});
  Graph g = b.finish(b.op("Sigmoid", {y}));
  const CandidateSet set = enumerate_candidates(g, permissive_rules());
  EXPECT_EQ(set.clusters.size(), 1u);
  EXPECT_EQ(node_sets(set, CandidateKind::Library), (std::set<std::vector<size_t>>{{0}, {1}, {2}}));
  EXPECT_EQ(node_sets(set, CandidateKind::Generated), (std::set<std::vector<size_t>>{{0, 1, 2}}));
}

// A Transpose of the innermost axis is a cluster of its own (clusters.h), so
// the chain through it is a candidate both whole and in pieces; one that
// keeps the innermost axis is contracted like any layout primitive.
TEST(Candidates, InnermostTransposeIsOfferedFusedAndApart) {
  for (bool innermost : {true, false}) {
    SCOPED_TRACE(innermost);
    GraphBuilder b;
    ValueId x = b.input("x", {4, 8, 6});
    ValueId y = b.op("Relu", {x});
    Attributes perm;
    perm.set("perm", innermost ? std::vector<int64_t>{0, 2, 1} : std::vector<int64_t>{1, 0, 2});
    y = b.op("Transpose", {y}, perm);
    Graph g = b.finish(b.op("Exp", {y}));
    const CandidateSet set = enumerate_candidates(g, permissive_rules());
    if (innermost) {
      EXPECT_EQ(set.clusters.size(), 3u);
      EXPECT_EQ(node_sets(set, CandidateKind::Generated),
                (std::set<std::vector<size_t>>{{0, 1}, {1, 2}, {0, 1, 2}}));
    } else {
      EXPECT_EQ(set.clusters.size(), 1u);
      EXPECT_EQ(node_sets(set, CandidateKind::Generated), (std::set<std::vector<size_t>>{{0, 1, 2}}));
    }
  }
}

TEST(Candidates, DiamondGivesEveryConnectedConvexSet) {
  GraphBuilder b;
  ValueId x = b.input("x", {4, 8});
  ValueId a = b.op("Relu", {x});                            // node 0, two readers
  ValueId l = b.op("Exp", {a});                             // node 1
  ValueId r = b.op("Neg", {a});                             // node 2
  Graph g = b.finish(b.op("Add", {l, r}));                  // node 3
  const CandidateSet set = enumerate_candidates(g, permissive_rules());
  ASSERT_EQ(set.clusters.size(), 2u);  // {Relu}, {Exp, Neg, Add}
  EXPECT_EQ(node_sets(set, CandidateKind::Generated), (std::set<std::vector<size_t>>{{1, 2, 3}, {0, 1, 2, 3}}));
}

TEST(Candidates, NoCandidateSkipsAnUnfusableNodeOnItsPath) {
  GraphBuilder b;
  ValueId x = b.input("x", {4, 8});
  ValueId a = b.op("Relu", {x});                                   // 0: read by TopK and Add
  ValueId mid = b.op("MatMul", {a, b.constant({8, 8})});           // 1: linear between them
  Graph g = b.finish(b.op("Add", {a, mid}));                       // 2
  const CandidateSet set = enumerate_candidates(g, permissive_rules());
  for (const Candidate& c : set.candidates) {
    EXPECT_TRUE(is_convex(g, c.nodes)) << c.nodes.size();
    EXPECT_NE(c.nodes, (std::vector<size_t>{0, 2}));
  }
  // MatMul + Add (epilogue) is a linear chain candidate.
  EXPECT_TRUE(node_sets(set, CandidateKind::Linear).count({1, 2}));
}

TEST(Candidates, LinearChainsGrowThroughEpilogueClusters) {
  GraphBuilder b;
  ValueId x = b.input("x", {4, 8});
  ValueId m = b.op("MatMul", {x, b.constant({8, 8})});  // 0
  ValueId s = b.op("Add", {m, b.constant({8})});        // 1: contracted with Relu and Transpose
  ValueId r = b.op("Relu", {s});                        // 2
  Graph g = b.finish(b.op("Transpose", {r}));           // 3: not an epilogue
  const CandidateSet set = enumerate_candidates(g, permissive_rules());
  EXPECT_EQ(set.clusters.size(), 2u);
  // The chain takes the epilogue nodes out of their cluster.
  EXPECT_EQ(node_sets(set, CandidateKind::Linear), (std::set<std::vector<size_t>>{{0}, {0, 1}, {0, 1, 2}}));
}

TEST(Candidates, LosslessCutsBeforeLinearPrimitives) {
  GraphBuilder b;
  ValueId x = b.input("x", {4, 8});
  ValueId h = b.op("Relu", {b.op("MatMul", {x, b.constant({8, 8})})});
  Graph g = b.finish(b.op("Relu", {b.op("MatMul", {h, b.constant({8, 8})})}));
  const CandidateSet set = enumerate_candidates(g, permissive_rules());
  ASSERT_EQ(set.parts.size(), 2u);
  EXPECT_EQ(set.parts[0].nodes, 2u);
  EXPECT_EQ(set.parts[1].cut, "lossless");
  for (const Candidate& c : set.candidates) {
    // No candidate spans the cut.
    EXPECT_TRUE(c.nodes.back() < 2 || c.nodes.front() >= 2);
  }
}

TEST(Candidates, WidePartsAreCutAtTheNarrowestPointWhenTheLimitIsHit) {
  // Eight independent two-node branches joined by a sum: many convex sets.
  GraphBuilder b;
  ValueId x = b.input("x", {4, 8});
  ValueId a = b.op("Relu", {x});
  ValueId sum = kNoValue;
  for (int i = 0; i < 8; ++i) {
    ValueId branch = b.op("Exp", {a});
    ValueId other = b.op("Neg", {branch});
    ValueId both = b.op("Add", {branch, other});  // branch has two readers: not contracted
    sum = sum == kNoValue ? both : b.op("Add", {sum, both});
  }
  Graph g = b.finish(sum);
  CandidateOptions options;
  options.max_candidates_per_part = 50;
  const CandidateSet set = enumerate_candidates(g, permissive_rules(), options);
  EXPECT_GT(set.parts.size(), 1u);
  EXPECT_TRUE(std::any_of(set.parts.begin(), set.parts.end(), [](const Part& p) { return p.cut == "narrowest"; }));
  size_t covered = 0;
  for (const Part& p : set.parts) {
    EXPECT_LE(p.candidates, 50u + p.nodes * 2 + 2);
    covered += p.nodes;
  }
  EXPECT_EQ(covered, g.nodes().size());
  for (const Candidate& c : set.candidates) EXPECT_TRUE(is_convex(g, c.nodes));
}

TEST(Candidates, EveryNodeHasALibraryOrLinearSingleton) {
  GraphBuilder b;
  ValueId x = b.input("x", {2, 3, 8, 8});
  ValueId c = b.op("Conv", {x, b.constant({4, 3, 3, 3})}, [] {
    Attributes a;
    a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    return a;
  }());
  Graph g = b.finish(b.op("Sigmoid", {b.op("Relu", {c})}));
  const CandidateSet set = enumerate_candidates(g, permissive_rules());
  std::set<size_t> singles;
  for (const Candidate& cand : set.candidates) {
    if (cand.nodes.size() == 1) singles.insert(cand.nodes[0]);
  }
  EXPECT_EQ(singles.size(), g.nodes().size());
}

}  // namespace
}  // namespace orchid::orchestration

namespace orchid::orchestration {
namespace {

// An attention (MatMul, scale, softmax as fission writes it, MatMul) with
// n x n scores: the CPU rules offer it as one library candidate from 256 x
// 256 scores on (runtime::cpu::kMinAttentionScores), not below.
Graph attention_of(int64_t n) {
  GraphBuilder b;
  const ValueId q = b.input("q", {2, n, 8}), kt = b.input("kt", {2, 8, n}), v = b.input("v", {2, n, 8});
  const ValueId s = b.op("Mul", {b.op("MatMul", {q, kt}), b.scalar(0.5f)});
  Attributes keep;
  keep.set("keepdims", int64_t(1));
  const ValueId axes = b.g.add_constant("axes", Tensor::vector_i64({-1}));
  const ValueId e = b.op("Exp", {b.op("Sub", {s, b.op("ReduceMax", {s, axes}, keep)})});
  return b.finish(b.op("MatMul", {b.op("Div", {e, b.op("ReduceSum", {e, axes}, keep)}), v}));
}

TEST(Candidates, AttentionIsOneLibraryCandidateFromItsSize) {
  for (int64_t n : {16, 256}) {
    const Graph g = attention_of(n);
    const CandidateSet set = enumerate_candidates(g, backend::cpu_backend().candidate_rules());
    const bool offered = std::any_of(set.candidates.begin(), set.candidates.end(), [&](const Candidate& c) {
      return c.kind == CandidateKind::Library && c.nodes.size() == g.nodes().size();
    });
    EXPECT_EQ(offered, n == 256) << n;
  }
}

// q k^T with k^T a Transpose of a runtime value: the Transpose, the MatMul
// and its epilogue are linear candidates together (the Transpose a
// prologue), beside the same groups without it; and the Transpose's cluster
// and the MatMul's stay in one part.
TEST(Candidates, TransposeOfAMatMulOperandIsAPrologue) {
  GraphBuilder b;
  const ValueId k = b.op("Relu", {b.input("k", {2, 16, 8})});
  const ValueId kt = b.op("Transpose", {k}, runtime::testing::attrs({{"perm", std::vector<int64_t>{0, 2, 1}}}));
  const ValueId s = b.op("MatMul", {b.input("q", {2, 16, 8}), kt});
  const Graph g = b.finish(b.op("Tanh", {s}));  // nodes: Relu 0, Transpose 1, MatMul 2, Tanh 3
  const CandidateSet set = enumerate_candidates(g, backend::cpu_backend().candidate_rules());
  std::set<std::vector<size_t>> linear;
  for (const Candidate& c : set.candidates) {
    if (c.kind == CandidateKind::Linear) linear.insert(c.nodes);
  }
  EXPECT_TRUE(linear.count({1, 2}));
  EXPECT_TRUE(linear.count({1, 2, 3}));
  EXPECT_TRUE(linear.count({2, 3}));
  EXPECT_LT(set.clusters.cluster_of[1], set.clusters.cluster_of[2]);
  for (const Part& part : set.parts) {
    const bool has_transpose = set.clusters.cluster_of[1] >= part.begin && set.clusters.cluster_of[1] < part.end;
    const bool has_matmul = set.clusters.cluster_of[2] >= part.begin && set.clusters.cluster_of[2] < part.end;
    EXPECT_EQ(has_transpose, has_matmul);
  }
}

}  // namespace
}  // namespace orchid::orchestration
