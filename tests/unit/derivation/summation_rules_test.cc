// Tests of the summation rule family: sum_split.
#include <gtest/gtest.h>

#include "derivation/analysis.h"
#include "derivation/rules/rules.h"
#include "rule_test_util.h"

namespace orchid::derivation {
namespace {

using testing::expect_all_exact;
using testing::expect_golden;
using testing::rewrites_of;

TEST(SumSplitRule, Conv3x3SplitsChannelsInner) {
  expect_golden("sum_split",
                "tensor A[1,8,6,6] tensor K[16,8,3,3]  "
                "L<n:0:1, f:0:16, h:0:6, w:0:6> Sum<c:0:8, r:0:3, s:0:3> "
                "A[n, c, h + r - 1, w + s - 1] * K[f, c, r, s]",
                "tensor A[1,8,6,6] tensor K[16,8,3,3]  "
                "L<n:0:1, f:0:16, h:0:6, w:0:6> Sum<r:0:3, s:0:3> "
                "{ L<n:0:1, f:0:16, h:0:6, w:0:6, r:0:3, s:0:3> Sum<c:0:8> "
                "A[n, c, h + r - 1, w + s - 1] * K[f, c, r, s] }[n, f, h, w, r, s]");
}

TEST(SumSplitRule, ChildKeepsOnlyUsedLoops) {
  // The inner scope over k does not use j: it is a vector over i.
  expect_golden("sum_split", "tensor A[3,4,2]  L<i:0:3, j:0:2> Sum<k:0:4, m:0:2> A[i, k, m] * 1.5",
                "tensor A[3,4,2]  L<i:0:3, j:0:2> Sum<m:0:2> { L<i:0:3, m:0:2> Sum<k:0:4> A[i, k, m] * 1.5 }[i, m]");
}

TEST(SumSplitRule, ProposesEveryProperSubset) {
  Expr state = expr::parse("tensor A[2,3,4,5]  L<i:0:2> Sum<a:0:3, b:0:4, c:0:5> A[i, a, b, c]");
  EXPECT_EQ(rewrites_of("sum_split", state).size(), 6u);  // 2^3 - 2
}

TEST(SumSplitRule, ExactOnVariedStates) {
  const char* states[] = {
      // padded strided conv
      "tensor X[1,2,5,5] pad [0,0,1,1] tensor W[3,2,3,3]  "
      "L<n:0:1, f:0:3, h:0:3, w:0:3> Sum<c:0:2, r:0:3, s:0:3> X[n, c, 2*h + r - 1, 2*w + s - 1] * W[f, c, r, s]",
      // dilated conv with nonzero box origins and offset sums
      "tensor X[2,7,7] tensor W[2,3,3]  "
      "L<h:1:5, w:2:5> Sum<c:0:2, r:-1:2, s:1:4> X[c, h + 2*r, w + 2*s - 3] * W[c, r + 1, s - 1]",
      // nested site: the child has the sums, the root reads it at an offset
      "tensor A[4,3,2] tensor B[3,2]  "
      "L<i:0:5> { L<i:0:4> Sum<k:0:3, m:0:2> A[i, k, m] * B[k, m] }[i - 1] + 1.0",
      // a sum iterator the body does not use, and four sums
      "tensor A[3,4]  L<i:0:3> Sum<a:0:2, b:0:4, c:0:2, e:0:3> A[i, b] * relu(A[e, b])",
  };
  for (const char* text : states) {
    SCOPED_TRACE(text);
    EXPECT_GT(expect_all_exact("sum_split", expr::parse(text)), 0u);
  }
}

TEST(SumSplitRule, DoesNotApplyWithOneSum) {
  EXPECT_TRUE(rewrites_of("sum_split", expr::parse("tensor A[4,3]  L<i:0:4> Sum<k:0:3> A[i, k]")).empty());
  EXPECT_TRUE(rewrites_of("sum_split", expr::parse("tensor A[4]  L<i:0:4> A[i] * 2.0")).empty());
}

TEST(SumSplitRule, ManySumsProposeOnlySingletonsAndComplements) {
  Expr state = expr::parse(
      "tensor A[2,2,2,2,2,2]  L<i:0:1> Sum<a:0:2, b:0:2, c:0:2, d:0:2, e:0:2, g:0:2> A[a, b, c, d, e, g]");
  EXPECT_EQ(rewrites_of("sum_split", state).size(), 12u);  // 6 of size 1, 6 of size 5
}

}  // namespace
}  // namespace orchid::derivation
