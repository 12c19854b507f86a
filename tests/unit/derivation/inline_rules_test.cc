// Tests of the inline rule family: inline_scope.
#include <gtest/gtest.h>

#include "derivation/rules/rules.h"
#include "rule_test_util.h"

namespace orchid::derivation {
namespace {

using testing::expect_all_exact;
using testing::expect_golden;
using testing::rewrites_of;

TEST(InlineScopeRule, InlinesElementwiseChild) {
  expect_golden("inline_scope", "tensor A[4] tensor B[4]  L<i:0:4> { L<j:0:4> A[j] * 2.0 }[i] + B[i]",
                "tensor A[4] tensor B[4]  L<i:0:4> A[i] * 2.0 + B[i]");
}

TEST(InlineScopeRule, InlinesPaddedReadWhereChildBodyIsZeroOutsideItsBox) {
  // i - 1 leaves [0, 4) at i = 0 and i = 5, where A[i - 1] reads 0 as well.
  expect_golden("inline_scope", "tensor A[4]  L<i:0:6> { L<j:0:4> A[j] }[i - 1]", "tensor A[4]  L<i:0:6> A[i - 1]");
}

TEST(InlineScopeRule, SubstitutesSimultaneouslyAndSimplifies) {
  // The child's iterators are named like the parent's, in swapped roles; its
  // mod meets the parent's ranges, which make it affine.
  expect_golden("inline_scope", "tensor A[3,4]  L<i:0:4, j:0:3> { L<i:0:3, j:0:4> A[i, j % 4] }[j, i]",
                "tensor A[3,4]  L<i:0:4, j:0:3> A[j, i]");
}

TEST(InlineScopeRule, ExactOnVariedStates) {
  const char* states[] = {
      // a sum at the parent reading a padded child (padded conv input)
      "tensor X[4,4] tensor W[3,3]  "
      "L<h:0:4, w:0:4> Sum<r:0:3, s:0:3> { L<y:0:4, x:0:4> relu(X[y, x]) }[h + r - 1, w + s - 1] * W[r, s]",
      // nonzero box origin, read at an offset, twice
      "tensor A[6]  L<i:1:5> { L<j:2:6> A[j] * A[j - 2] }[i + 1] - { L<j:2:6> A[j] * A[j - 2] }[i]",
      // a child with its own nested child, and a sibling with a sum
      "tensor A[3,4] tensor B[4]  L<i:0:3, j:0:4> { L<a:0:3, b:0:4> { L<c:0:4> B[c] + 1.0 }[b] * A[a, b] }[i, j] "
      "+ { L<a:0:3> Sum<k:0:4> A[a, k] }[i]",
      // a strided, transposed read inside the box
      "tensor A[8,3]  L<i:0:3, j:0:4> { L<p:0:3, q:0:8> exp(A[q, p]) }[i, 2*j + 1]",
  };
  for (const char* text : states) {
    SCOPED_TRACE(text);
    EXPECT_GT(expect_all_exact("inline_scope", expr::parse(text)), 0u);
  }
}

TEST(InlineScopeRule, DoesNotInlineWhenTheChildBoxCutsTheBody) {
  // The child holds A[0..2) only; inlining would expose A[2], A[3].
  EXPECT_TRUE(rewrites_of("inline_scope", expr::parse("tensor A[4]  L<i:0:6> { L<j:0:2> A[j] }[i]")).empty());
  // A constant body is nonzero everywhere: the read at i + 1 leaves the box.
  EXPECT_TRUE(rewrites_of("inline_scope", expr::parse("L<i:0:4> { L<j:0:4> 1.0 }[i + 1]")).empty());
  // exp(0) = 1: the body is not zero outside the box.
  EXPECT_TRUE(rewrites_of("inline_scope", expr::parse("tensor A[4]  L<i:0:6> { L<j:0:4> exp(A[j]) }[i - 1]")).empty());
}

TEST(InlineScopeRule, DoesNotInlineAChildWithASum) {
  EXPECT_TRUE(
      rewrites_of("inline_scope", expr::parse("tensor A[4,3]  L<i:0:4> { L<j:0:4> Sum<k:0:3> A[j, k] }[i] * 2.0"))
          .empty());
}

}  // namespace
}  // namespace orchid::derivation
