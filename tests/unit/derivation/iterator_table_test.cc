// The iterator mapping table and operator pattern matching.
#include "derivation/iterator_table.h"

#include <gtest/gtest.h>

#include "ir/expr_parser.h"

namespace orchid::derivation {
namespace {

const expr::ScopeNode& scope_of(const char* text) { return expr::parse(text)->as<expr::ScopeNode>(); }

const IteratorRow& row(const IteratorTable& table, const std::string& name) {
  for (const IteratorRow& r : table.rows) {
    if (r.iter->as<expr::IterNode>().name() == name) return r;
  }
  throw std::runtime_error("no row " + name);
}

std::vector<std::string> names(const std::vector<expr::IterRange>& ranges) {
  std::vector<std::string> out;
  for (const expr::IterRange& r : ranges) out.push_back(r.name());
  return out;
}

using Names = std::vector<std::string>;

TEST(IteratorTable, MatMulRows) {
  const auto& s = scope_of(
      "tensor A[4,5] tensor B[5,3] L<i:0:4, j:0:3> "
      "Sum<k:0:5> 0.5 * A[i, k] * B[k, j]");
  std::optional<IteratorTable> table = iterator_table(s);
  ASSERT_TRUE(table);
  EXPECT_EQ(table->scale, 0.5);
  ASSERT_EQ(table->rows.size(), 3u);
  EXPECT_TRUE(row(*table, "i").in_a && !row(*table, "i").in_b && !row(*table, "i").is_sum);
  EXPECT_TRUE(!row(*table, "j").in_a && row(*table, "j").in_b);
  EXPECT_TRUE(row(*table, "k").in_a && row(*table, "k").in_b && row(*table, "k").is_sum);
  EXPECT_EQ(row(*table, "k").range, (Interval{0, 5}));
  EXPECT_EQ(match_operator(s).op, LinearOp::MatMul);
}

TEST(IteratorTable, BatchedMatMulRoles) {
  const auto& s = scope_of(
      "tensor A[2,3,4,5] tensor B[2,5,6] L<b:0:2, x:0:3, y:0:4, "
      "j:0:6> Sum<k:0:5> A[b, x, y, k] * B[b, k, j]");
  std::optional<LinearMatch> m = match_linear(s);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->op, LinearOp::MatMul);
  EXPECT_EQ(names(m->batch), (Names{"b"}));
  EXPECT_EQ(names(m->rows), (Names{"x", "y"}));
  EXPECT_EQ(names(m->cols), (Names{"j"}));
  EXPECT_EQ(names(m->reduce), (Names{"k"}));
}

TEST(IteratorTable, ConvRowsAndMatch) {
  const auto& s = scope_of(R"(
    tensor A[1,8,6,6] tensor K[16,8,3,3]
    L<n:0:1, f:0:16, h:0:6, w:0:6> Sum<c:0:8, r:0:3, s:0:3> A[n, c, 2*h + r - 1, w + 2*s - 2] * K[f, c, r, s])");
  std::optional<IteratorTable> table = iterator_table(s);
  ASSERT_TRUE(table);
  EXPECT_TRUE(row(*table, "h").combined_a && !row(*table, "h").in_b);
  EXPECT_TRUE(row(*table, "r").combined_a && row(*table, "r").in_b && !row(*table, "r").combined_b);
  EXPECT_FALSE(row(*table, "c").combined_a);
  std::optional<LinearMatch> m = match_linear(s);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->op, LinearOp::Conv);
  EXPECT_EQ(names(m->batch), (Names{"n"}));
  EXPECT_EQ(names(m->cols), (Names{"f"}));
  EXPECT_EQ(names(m->reduce), (Names{"c"}));
  ASSERT_EQ(m->spatial.size(), 2u);
  EXPECT_EQ(m->spatial[0].stride, 2);
  EXPECT_EQ(m->spatial[0].dilation, 1);
  EXPECT_EQ(m->spatial[1].stride, 1);
  EXPECT_EQ(m->spatial[1].dilation, 2);
  EXPECT_EQ(m->spatial[1].tap.name(), "s");
}

TEST(IteratorTable, ConvWithOperandsInOtherOrder) {
  const auto& s = scope_of(R"(
    tensor A[2,4,7] tensor K[3,4,3]
    L<n:0:2, f:0:3, h:0:7> Sum<c:0:4, r:0:3> K[f, c, r] * A[n, c, h + r - 1])");
  EXPECT_EQ(match_operator(s).op, LinearOp::Conv);
  EXPECT_EQ(match_linear(s)->a->source()->as<expr::TensorNode>().name(), "A");
}

TEST(IteratorTable, BandedMatches) {
  const auto& g2 = scope_of(R"(
    tensor Q[2,16,4] tensor Kt[2,16,4]
    L<b:0:2, m:0:16, w:0:129> Sum<k:0:4> Q[b, m, k] * Kt[b, m + 2*w - 128, k])");
  std::optional<IteratorTable> table = iterator_table(g2);
  ASSERT_TRUE(table);
  EXPECT_TRUE(row(*table, "w").combined_b && !row(*table, "w").in_a);
  std::optional<LinearMatch> m = match_linear(g2);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->op, LinearOp::G2BMM);
  EXPECT_EQ(m->dilation, 2);
  EXPECT_EQ(m->band.name(), "w");
  EXPECT_EQ(names(m->rows), (Names{"m"}));
  EXPECT_EQ(m->b_band_dim, 1u);

  const auto& gb = scope_of(R"(
    tensor P[2,16,129] tensor V[2,16,4]
    L<b:0:2, m:0:16, k:0:4> Sum<w:0:129> P[b, m, w] * V[b, m + w - 64, k])");
  std::optional<LinearMatch> m2 = match_linear(gb);
  ASSERT_TRUE(m2);
  EXPECT_EQ(m2->op, LinearOp::GBMM);
  EXPECT_EQ(names(m2->cols), (Names{"k"}));
}

TEST(IteratorTable, MismatchesGuideDerivation) {
  // A conv whose g, read twice by B, is not a grouped conv's group: no operator's pattern.
  const auto& grouped = scope_of(
      "tensor A[2,5] tensor B[2,2,5] L<g:0:2, i:0:3> "
      "Sum<k:0:5> A[g, k + i] * B[g, g, k]");
  PatternMatch pm = match_operator(grouped);
  EXPECT_FALSE(pm.op);
  EXPECT_NE(pm.why_not.find("MatMul: i combined with k in A: substitute"), std::string::npos) << pm.why_not;
  EXPECT_NE(pm.why_not.find("grouped conv"), std::string::npos) << pm.why_not;
  EXPECT_FALSE(pm.mismatched_iters.empty());

  const auto& lonely = scope_of("tensor A[4] tensor B[3] L<i:0:4> Sum<r:0:3> A[i] * B[r]");
  PatternMatch pm2 = match_operator(lonely);
  EXPECT_FALSE(pm2.op);
  EXPECT_NE(pm2.why_not.find("r sum iterator only in B: not a pattern"), std::string::npos) << pm2.why_not;
  EXPECT_EQ(pm2.mismatched_iters.front(), "r");

  EXPECT_FALSE(iterator_table(scope_of("tensor A[4] L<i:0:4> Sum<r:0:3> A[i + r]")));
  EXPECT_EQ(match_operator(scope_of("tensor A[4] L<i:0:4> Sum<r:0:3> A[i + r]")).why_not,
            "body is not a product of two accesses");
}

}  // namespace
}  // namespace orchid::derivation
