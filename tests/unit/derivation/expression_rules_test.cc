// Tests of the expression rule family: split_terms and batch_merge.
#include <gtest/gtest.h>

#include <string>

#include "derivation/rules/rules.h"
#include "rule_test_util.h"

namespace orchid::derivation {
namespace {

using testing::expect_all_exact;
using testing::expect_golden;
using testing::rewrites_of;

// ---- split_terms ----

TEST(SplitTermsRule, SplitsASumOfTwoTerms) {
  expect_golden("split_terms", "tensor A[4,3] tensor B[4,3]  L<i:0:4> Sum<k:0:3> A[i, k] + B[i, k]",
                "tensor A[4,3] tensor B[4,3]  "
                "L<i:0:4> { L<i:0:4> Sum<k:0:3> A[i, k] }[i] + { L<i:0:4> Sum<k:0:3> B[i, k] }[i]");
}

TEST(SplitTermsRule, KeepsEverySumAndSignOnEachTerm) {
  // B[i] * 2.0 does not use k: its scope still sums it 3 times.
  expect_golden("split_terms",
                "tensor A[4,3] tensor B[4]  L<i:0:4, j:0:2> Sum<k:0:3> A[i, k] * 0.5 - (B[i] * 2.0 - 1.0)",
                "tensor A[4,3] tensor B[4]  L<i:0:4, j:0:2> { L<i:0:4> Sum<k:0:3> A[i, k] * 0.5 }[i] "
                "- { L<i:0:4> Sum<k:0:3> B[i] * 2.0 }[i] + { L<> Sum<k:0:3> 1.0 }[]");
}

TEST(SplitTermsRule, ExactOnVariedStates) {
  const char* states[] = {
      // conv plus bias over a padded input
      "tensor X[1,4,4] pad [0,1,1] tensor W[2,1,3,3] tensor C[2]  "
      "L<f:0:2, h:0:4, w:0:4> Sum<c:0:1, r:0:3, s:0:3> X[c, h + r - 1, w + s - 1] * W[f, c, r, s] + C[f]",
      // nonzero origins, a sum of three terms with a nested difference
      "tensor A[6,4] tensor B[4]  L<i:2:5> Sum<k:1:4> A[i, k] - (B[k] - relu(A[i + 1, k - 1])) + i",
      // a nested site (the child has the sums), read at an offset
      "tensor A[4,3] tensor B[3]  L<i:0:5> { L<i:0:4> Sum<k:0:3> A[i, k] * B[k] - A[i, 2 - k] }[i - 1] * 3.0",
  };
  for (const char* text : states) {
    SCOPED_TRACE(text);
    EXPECT_GT(expect_all_exact("split_terms", expr::parse(text)), 0u);
  }
}

TEST(SplitTermsRule, DoesNotApplyWithoutSumOrTerms) {
  // No sum: an elementwise expression, splitting is pointless.
  EXPECT_TRUE(rewrites_of("split_terms", expr::parse("tensor A[4] tensor B[4]  L<i:0:4> A[i] + B[i]")).empty());
  // One term: the + is under a product or a function.
  EXPECT_TRUE(
      rewrites_of("split_terms", expr::parse("tensor A[4,3]  L<i:0:4> Sum<k:0:3> (A[i, k] + 1.0) * A[i, k]")).empty());
  EXPECT_TRUE(
      rewrites_of("split_terms", expr::parse("tensor A[4,3]  L<i:0:4> Sum<k:0:3> relu(A[i, k] - 1.0)")).empty());
}

// ---- batch_merge ----

// The stacking of sources S1 and S2 of box [0, m) x [0, n) that batch_merge builds.
std::string stacked(const std::string& s1, const std::string& s2, int m, int n) {
  std::string box = "L<b:0:2, d0:0:" + std::to_string(m) + ", d1:0:" + std::to_string(n) + ">";
  return "{ " + box + " { L<q:0:1> 1.0 }[b] * " + s1 + "[d0, d1] + { L<q:1:2> 1.0 }[b] * " + s2 + "[d0, d1] }";
}

TEST(BatchMergeRule, TwoMatMulsSharingAnInputBecomeOne) {
  std::string merged = "{ L<b:0:2, i:0:4, j:0:5> Sum<k:0:3> A[i, k] * " + stacked("B", "C", 3, 5) + "[b, k, j] }";
  expect_golden("batch_merge",
                "tensor A[4,3] tensor B[3,5] tensor C[3,5]  "
                "L<i:0:4, j:0:5> { L<i:0:4, j:0:5> Sum<k:0:3> A[i, k] * B[k, j] }[i, j] "
                "+ { L<i:0:4, j:0:5> Sum<k:0:3> A[i, k] * C[k, j] }[i, j]",
                "tensor A[4,3] tensor B[3,5] tensor C[3,5]  "
                "L<i:0:4, j:0:5> " +
                    merged + "[0, i, j] + " + merged + "[1, i, j]");
}

TEST(BatchMergeRule, RenamesIteratorsAndStacksBothOperands) {
  // Equal scales stay a factor; the second child names its iterators
  // differently and lists its operands in the other order.
  std::string merged = "{ L<b:0:2, i:0:2, j:0:2> Sum<k:0:3> 2.0 * (" + stacked("A", "C", 2, 3) + "[b, i, k] * " +
                       stacked("B", "D", 3, 2) + "[b, k, j]) }";
  expect_golden("batch_merge",
                "tensor A[2,3] tensor B[3,2] tensor C[2,3] tensor D[3,2]  "
                "L<i:0:2, j:0:2> { L<i:0:2, j:0:2> Sum<k:0:3> 2.0 * A[i, k] * B[k, j] }[i, j] "
                "* { L<x:0:2, y:0:2> Sum<z:0:3> D[z, y] * C[x, z] * 2.0 }[j, i]",
                "tensor A[2,3] tensor B[3,2] tensor C[2,3] tensor D[3,2]  "
                "L<i:0:2, j:0:2> " +
                    merged + "[0, i, j] * " + merged + "[1, j, i]");
}

TEST(BatchMergeRule, ExactOnVariedStates) {
  const char* states[] = {
      // different scale factors: folded into the stacked operand
      "tensor A[3,2] tensor B[2,4] tensor C[2,4]  "
      "L<i:0:3, j:0:4> { L<i:0:3, j:0:4> Sum<k:0:2> 2.0 * A[i, k] * B[k, j] }[i, j] "
      "- { L<i:0:3, j:0:4> Sum<k:0:2> A[i, k] * C[k, j] * -0.5 }[i, j]",
      // padded convs sharing the input, nonzero box origins, read at offsets
      "tensor X[1,5] pad [0,1] tensor W[2,1,3] tensor V[2,1,3]  "
      "L<f:0:2, h:0:6> { L<f:0:2, h:1:5> Sum<c:0:1, r:0:3> X[c, h + r - 1] * W[f, c, r] }[f, h] "
      "* { L<f:0:2, h:1:5> Sum<c:0:1, r:0:3> X[c, h + r - 1] * V[f, c, r] }[f, h - 1]",
      // elementwise products of nested scopes (sources with nonzero origins), three children
      "tensor A[4] tensor B[4]  L<i:0:4> Sum<t:0:2> "
      "{ L<i:1:4> { L<p:1:5> A[p - 1] }[i] * { L<p:0:4> B[p] }[i] }[i + t] "
      "+ { L<i:1:4> { L<p:1:5> B[p - 1] }[i] * { L<p:0:4> A[p] }[i] }[i] + { L<i:0:4> A[i] }[i]",
  };
  for (const char* text : states) {
    SCOPED_TRACE(text);
    EXPECT_GT(expect_all_exact("batch_merge", expr::parse(text)), 0u);
  }
}

TEST(BatchMergeRule, DoesNotMergeMismatchedChildren) {
  const char* states[] = {
      // different loop ranges
      "tensor A[4,3] tensor B[3,5] tensor C[3,5]  "
      "L<i:0:4, j:0:5> { L<i:0:4, j:0:5> Sum<k:0:3> A[i, k] * B[k, j] }[i, j] "
      "+ { L<i:0:4, j:0:4> Sum<k:0:3> A[i, k] * C[k, j] }[i, j]",
      // different index expressions (B transposed)
      "tensor A[3,3] tensor B[3,3] tensor C[3,3]  "
      "L<i:0:3, j:0:3> { L<i:0:3, j:0:3> Sum<k:0:3> A[i, k] * B[k, j] }[i, j] "
      "+ { L<i:0:3, j:0:3> Sum<k:0:3> A[i, k] * C[j, k] }[i, j]",
      // sources of different shapes
      "tensor A[4,3] tensor B[3,5] tensor C[3,6]  "
      "L<i:0:4, j:0:5> { L<i:0:4, j:0:5> Sum<k:0:3> A[i, k] * B[k, j] }[i, j] "
      "+ { L<i:0:4, j:0:5> Sum<k:0:3> A[i, k] * C[k, j] }[i, j]",
      // not products of two reads
      "tensor A[4,3] tensor B[3,5] tensor C[3,5]  "
      "L<i:0:4, j:0:5> { L<i:0:4, j:0:5> Sum<k:0:3> A[i, k] + B[k, j] }[i, j] "
      "+ { L<i:0:4, j:0:5> Sum<k:0:3> A[i, k] + C[k, j] }[i, j]",
      // the same computation scaled differently: nothing to batch
      "tensor A[4,3] tensor B[3,5]  "
      "L<i:0:4, j:0:5> { L<i:0:4, j:0:5> Sum<k:0:3> A[i, k] * B[k, j] }[i, j] "
      "+ { L<i:0:4, j:0:5> Sum<k:0:3> 2.0 * A[i, k] * B[k, j] }[i, j]",
  };
  for (const char* text : states) {
    SCOPED_TRACE(text);
    EXPECT_TRUE(rewrites_of("batch_merge", expr::parse(text)).empty());
  }
}

}  // namespace
}  // namespace orchid::derivation
