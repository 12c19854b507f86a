// Tests of the layout rule family: split_loop, merge_loops, reorder_loops,
// split_output, relayout_input; and the OLLIE chains they enable (dilated
// conv -> conv on a larger batch, dilated G2BMM -> non-dilated G2BMM).
#include <gtest/gtest.h>

#include <string>

#include "derivation/analysis.h"
#include "derivation/rules/rules.h"
#include "ir/expr_fingerprint.h"
#include "rule_test_util.h"

namespace orchid::derivation {
namespace {

using testing::expect_all_exact;
using testing::expect_golden;
using testing::rewrites_of;

const char* kDilatedConv =
    "tensor A[1,2,8,8] tensor K[2,2,3,3]  "
    "L<n:0:1, f:0:2, h:0:8, w:0:8> Sum<c:0:2, r:0:3, s:0:3> A[n, c, h + 2*r - 2, w + 2*s - 2] * K[f, c, r, s]";

const char* kDilatedG2bmm =
    "tensor Q[2,16,3] tensor Kt[2,16,3]  "
    "L<b:0:2, m:0:16, w:0:5> Sum<k:0:3> Q[b, m, k] * Kt[b, m + 2*w - 4, k]";

// The dilated conv after split_output of h by 2.
const char* kSplitConv =
    "tensor A[1,2,8,8] tensor K[2,2,3,3]  L<n:0:1, f:0:2, h:0:8, w:0:8> "
    "{ L<n:0:1, f:0:2, h1:0:4, h2:0:2, w:0:8> Sum<c:0:2, r:0:3, s:0:3> "
    "A[n, c, 2*h1 + h2 + 2*r - 2, w + 2*s - 2] * K[f, c, r, s] }[n, f, h / 2, h % 2, w]";

// States for the randomized exactness tests: padded and strided convs,
// nonzero box origins, extents not divisible by the factor, nested scopes.
const char* kStates[] = {
    kDilatedConv,
    kDilatedG2bmm,
    kSplitConv,
    // a dilated child at a nonzero origin with an odd extent, padded root
    "tensor A[10,6] tensor K[3] tensor B[6,5]  "
    "L<h:1:7 pad 1, w:0:5> { L<x:1:8, y:0:5> Sum<s:0:3> A[x + 2*s - 2, y] * K[s] }[h, w] * B[h - 1, w]",
    // padded strided conv
    "tensor X[1,2,9,9] pad [0,0,1,1] tensor W[3,2,3,3]  "
    "L<n:0:1, f:0:3, h:0:4, w:0:4> Sum<c:0:2, r:0:3, s:0:3> X[n, c, 2*h + r - 1, 2*w + s - 1] * W[f, c, r, s]",
    // a child with a negative origin read at an offset under a Sum
    "tensor A[4,6] tensor B[3]  L<i:0:3, j:0:4> Sum<k:0:2> "
    "{ L<x:0:4, y:-1:5> Sum<t:0:3> A[x, y + 2*t - 2] * B[t] }[i + k, j + k - 1]",
    // an odd-extent root at a nonzero origin with a dilation 2
    "tensor A[10] tensor K[3]  L<h:1:8> Sum<r:0:3> A[h + 2*r - 3] * K[r]",
    // a child read outside its box (only reorder_loops may touch it)
    "tensor A[5] tensor K[2]  L<i:0:6, j:0:2> Sum<r:0:2> { L<x:0:4, y:0:2> A[x + 2*y] }[i - 1, j + r] * K[r]",
};

// Every rewrite of every state is exact; returns how many states had one.
int exact_on_states(std::string_view rule) {
  int applied = 0;
  for (const char* text : kStates) {
    SCOPED_TRACE(text);
    if (expect_all_exact(rule, expr::parse(text)) > 0) ++applied;
  }
  return applied;
}

std::vector<std::string> details(std::string_view rule, std::string_view text) {
  std::vector<std::string> out;
  for (const Successor& s : rewrites_of(rule, expr::parse(text))) out.push_back(s.step.detail);
  return out;
}

// ---- split_loop ------------------------------------------------------------

TEST(SplitLoopRule, DilatedChildOddExtentNonzeroOrigin) {
  // x in [1, 6) split by 2: x = 2*x1 + x2 + 1 with x1 in [0, 3); the point
  // x = 6 of the new child is never read.
  expect_golden("split_loop",
                "tensor A[12] tensor K[3] tensor B[6]  "
                "L<i:1:6> { L<x:1:6> Sum<r:0:3> A[x + 2*r] * K[r] }[i] * B[i]",
                "tensor A[12] tensor K[3] tensor B[6]  "
                "L<i:1:6> { L<x1:0:3, x2:0:2> Sum<r:0:3> A[2*x1 + x2 + 2*r + 1] * K[r] }"
                "[(i - 1) / 2, (i - 1) % 2] * B[i]");
}

TEST(SplitLoopRule, SplitsTheDilatedLoopOfTheSplitConv) {
  expect_golden("split_loop", kSplitConv,
                "tensor A[1,2,8,8] tensor K[2,2,3,3]  L<n:0:1, f:0:2, h:0:8, w:0:8> "
                "{ L<n:0:1, f:0:2, h1:0:4, h2:0:2, w1:0:4, w2:0:2> Sum<c:0:2, r:0:3, s:0:3> "
                "A[n, c, 2*h1 + h2 + 2*r - 2, 2*w1 + w2 + 2*s - 2] * K[f, c, r, s] }"
                "[n, f, h / 2, h % 2, w / 2, w % 2]");
}

TEST(SplitLoopRule, ExactOnVariedStates) { EXPECT_GE(exact_on_states("split_loop"), 3); }

TEST(SplitLoopRule, NotWhenReadsLeaveTheChildBox) {
  // i - 1 reaches -1 and 4, outside x's box [0, 4).
  EXPECT_TRUE(details("split_loop", "tensor A[10] tensor K[3]  "
                                    "L<i:0:5> { L<x:0:4> Sum<r:0:3> A[x + 2*r] * K[r] }[i - 1]")
                  .empty());
}

TEST(SplitLoopRule, NotWithoutAFactor) {
  // A plain (non-dilated) child: no coefficient or divisor suggests a split.
  EXPECT_TRUE(details("split_loop", "tensor A[10] tensor K[3]  "
                                    "L<i:0:8> { L<x:0:8> Sum<r:0:3> A[x + r] * K[r] }[i]")
                  .empty());
  // The factor must be smaller than the extent.
  EXPECT_TRUE(details("split_loop", "tensor A[10] tensor K[3]  "
                                    "L<i:0:2> { L<x:0:2> Sum<r:0:3> A[x + 2*r] * K[r] }[i]")
                  .empty());
}

// ---- merge_loops -----------------------------------------------------------

TEST(MergeLoopsRule, MergesTwoLoopsWithOrigins) {
  expect_golden("merge_loops",
                "tensor B[2,4] tensor C[2,3]  L<i:0:2, j:0:3> { L<x:0:2, y:1:4> B[x, y] * 2.0 }[i, j + 1] + C[i, j]",
                "tensor B[2,4] tensor C[2,3]  "
                "L<i:0:2, j:0:3> { L<m:0:6> B[m / 3, m % 3 + 1] * 2.0 }[3*i + j] + C[i, j]");
}

TEST(MergeLoopsRule, MergingASplitPairGivesBackTheIndex) {
  expect_golden("merge_loops", kSplitConv,
                "tensor A[1,2,8,8] tensor K[2,2,3,3]  L<n:0:1, f:0:2, h:0:8, w:0:8> "
                "{ L<n:0:1, f:0:2, t:0:8, w:0:8> Sum<c:0:2, r:0:3, s:0:3> "
                "A[n, c, t + 2*r - 2, w + 2*s - 2] * K[f, c, r, s] }[n, f, h, w]");
}

TEST(MergeLoopsRule, ExactOnVariedStates) { EXPECT_GE(exact_on_states("merge_loops"), 3); }

TEST(MergeLoopsRule, NotWhenReadsLeaveTheChildBoxOrExtentIsOne) {
  // j + 1 reaches 4, outside y's box [1, 4): merging would alias it with the next row.
  EXPECT_TRUE(details("merge_loops", "tensor B[2,5]  L<i:0:2, j:0:4> { L<x:0:2, y:1:4> B[x, y] }[i, j + 1]").empty());
  EXPECT_TRUE(details("merge_loops", "tensor B[1,5]  L<i:0:1, j:0:4> { L<x:0:1, y:0:4> B[x, y] }[i, j]").empty());
}

// ---- reorder_loops ---------------------------------------------------------

TEST(ReorderLoopsRule, SwapsAdjacentLoops) {
  expect_golden("reorder_loops",
                "tensor B[2,3]  L<i:0:2, j:0:3> Sum<k:0:3> { L<x:0:2, y:0:3> B[x, y] }[i, k] * B[i, j]",
                "tensor B[2,3]  L<i:0:2, j:0:3> Sum<k:0:3> { L<y:0:3, x:0:2> B[x, y] }[k, i] * B[i, j]");
}

TEST(ReorderLoopsRule, OneProposalPerAdjacentPair) {
  EXPECT_EQ(details("reorder_loops", kSplitConv).size(), 4u);
}

TEST(ReorderLoopsRule, ExactOnVariedStates) { EXPECT_GE(exact_on_states("reorder_loops"), 3); }

TEST(ReorderLoopsRule, NotWithoutAChildOfRankTwo) {
  EXPECT_TRUE(details("reorder_loops", kDilatedConv).empty());
  EXPECT_TRUE(details("reorder_loops", "tensor A[4]  L<i:0:4> { L<x:0:4> A[x] }[i]").empty());
}

// ---- split_output ----------------------------------------------------------

TEST(SplitOutputRule, DilatedConvToSplitConv) {
  expect_golden("split_output", kDilatedConv, kSplitConv);
}

TEST(SplitOutputRule, OddExtentNonzeroOriginKeepsRootPadding) {
  expect_golden("split_output", "tensor A[10] tensor K[3]  L<h:1:8 pad 2> Sum<r:0:3> A[h + 2*r - 3] * K[r]",
                "tensor A[10] tensor K[3]  L<h:1:8 pad 2> "
                "{ L<h1:0:4, h2:0:2> Sum<r:0:3> A[2*h1 + h2 + 2*r - 2] * K[r] }[(h - 1) / 2, (h - 1) % 2]");
}

TEST(SplitOutputRule, ProposesOnlyDilatedLoops) {
  // h and w of the conv (dilation 2 on both); m of the G2BMM, not w.
  EXPECT_EQ(details("split_output", kDilatedConv).size(), 2u);
  EXPECT_EQ(details("split_output", kDilatedG2bmm), std::vector<std::string>{"split output m by 2"});
}

TEST(SplitOutputRule, ExactOnVariedStates) { EXPECT_GE(exact_on_states("split_output"), 3); }

TEST(SplitOutputRule, NotAtNestedScopesOrPlainConvsOrViews) {
  // The dilated scope is nested: only the root is split by split_output.
  EXPECT_TRUE(details("split_output", "tensor A[10] tensor K[3]  "
                                      "L<i:0:8> { L<x:0:8> Sum<r:0:3> A[x + 2*r] * K[r] }[i] * 2.0")
                  .empty());
  EXPECT_TRUE(details("split_output",
                      "tensor A[1,2,6,6] tensor K[2,2,3,3]  L<n:0:1, f:0:2, h:0:6, w:0:6> Sum<c:0:2, r:0:3, s:0:3> "
                      "A[n, c, h + r - 1, w + s - 1] * K[f, c, r, s]")
                  .empty());
  // A root that only views a child: splitting it again would nest views.
  EXPECT_TRUE(details("split_output", kSplitConv).empty());
}

// ---- relayout_input --------------------------------------------------------

TEST(RelayoutInputRule, SplitConvReadsANonDilatedInput) {
  expect_golden("relayout_input",
                "tensor A[1,2,8,8] tensor K[2,2,3,3]  L<n:0:1, f:0:2, h:0:8, w:0:8> "
                "{ L<n:0:1, f:0:2, h1:0:4, h2:0:2, w:0:8> Sum<c:0:2, r:0:3, s:0:3> "
                "A[n, c, 2*h1 + h2 + 2*r - 2, w + s - 1] * K[f, c, r, s] }[n, f, h / 2, h % 2, w]",
                "tensor A[1,2,8,8] tensor K[2,2,3,3]  L<n:0:1, f:0:2, h:0:8, w:0:8> "
                "{ L<n:0:1, f:0:2, h1:0:4, h2:0:2, w:0:8> Sum<c:0:2, r:0:3, s:0:3> "
                "{ L<i0:0:1, i1:0:2, a:0:4, b:0:2, i3:0:8> A[i0, i1, 2*a + b, i3] }[n, c, h1 + r - 1, h2, w + s - 1] "
                "* K[f, c, r, s] }[n, f, h / 2, h % 2, w]");
}

TEST(RelayoutInputRule, RelayoutsAChildScopeWithAnOddBox) {
  // The child's box [1, 8) becomes a in [0, 4), b in [0, 2); the point 0 of
  // the wrapper reads the child outside its box, which is 0.
  expect_golden("relayout_input", "tensor A[8]  L<i:0:4> Sum<r:0:2> { L<x:1:8> A[x] * 2.0 }[2*i + r]",
                "tensor A[8]  L<i:0:4> Sum<r:0:2> { L<a:0:4, b:0:2> { L<x:1:8> A[x] * 2.0 }[2*a + b] }[i, r]");
}

TEST(RelayoutInputRule, ProposesOnlyDimensionsWithAMultiple) {
  // A's dims 2 and 3 (coefficient 2 on r and s), never K's.
  EXPECT_EQ(details("relayout_input", kDilatedConv),
            (std::vector<std::string>{"relayout A dim 2 by 2", "relayout A dim 3 by 2"}));
}

TEST(RelayoutInputRule, ExactOnVariedStates) { EXPECT_GE(exact_on_states("relayout_input"), 3); }

TEST(RelayoutInputRule, NotWithoutAFactor) {
  EXPECT_TRUE(details("relayout_input",
                      "tensor A[1,2,6,6] tensor K[2,2,3,3]  L<n:0:1, f:0:2, h:0:6, w:0:6> Sum<c:0:2, r:0:3, s:0:3> "
                      "A[n, c, h + r - 1, w + s - 1] * K[f, c, r, s]")
                  .empty());
  // The factor must be smaller than the dimension.
  EXPECT_TRUE(details("relayout_input", "tensor A[2]  L<i:0:1> Sum<r:0:2> A[2*i + r]").empty());
}

// ---- chains ----------------------------------------------------------------

// Applies the one rewrite of `rule` whose detail is `detail`, checks it is
// exact against `origin`, and returns the new state.
Expr step(Expr state, std::string_view rule, std::string_view detail, Expr origin) {
  Expr next = nullptr;
  int found = 0;
  for (const Successor& s : rewrites_of(rule, state)) {
    if (s.step.detail == detail) {
      next = s.state;
      ++found;
    }
  }
  EXPECT_EQ(found, 1) << rule << " / " << detail << " on " << expr::to_string(state);
  if (!next) return state;
  EXPECT_EQ(check_equivalent(origin, next), "") << expr::to_string(next);
  EXPECT_TRUE(same_loop_box(origin, next));
  return next;
}

TEST(LayoutChains, DilatedConvBecomesConvOnALargerBatch) {
  Expr origin = expr::parse(kDilatedConv);
  Expr s = step(origin, "split_output", "split output h by 2", origin);
  s = step(s, "split_loop", "split w by 2", origin);
  s = step(s, "relayout_input", "relayout A dim 2 by 2", origin);
  s = step(s, "relayout_input", "relayout child dim 4 by 2", origin);
  // The compute child is a 3x3 non-dilated conv over the batch (n, h2, w2).
  Expr expected = expr::parse(
      "tensor A[1,2,8,8] tensor K[2,2,3,3]  L<n:0:1, f:0:2, h:0:8, w:0:8> "
      "{ L<n:0:1, f:0:2, h1:0:4, h2:0:2, w1:0:4, w2:0:2> Sum<c:0:2, r:0:3, s:0:3> "
      "{ L<i0:0:1, i1:0:2, i2:0:4, i3:0:2, a:0:4, b:0:2> "
      "{ L<i0:0:1, i1:0:2, a:0:4, b:0:2, i3:0:8> A[i0, i1, 2*a + b, i3] }[i0, i1, i2, i3, 2*a + b] }"
      "[n, c, h1 + r - 1, h2, w1 + s - 1, w2] * K[f, c, r, s] }[n, f, h / 2, h % 2, w / 2, w % 2]");
  EXPECT_EQ(expr::fingerprint(s), expr::fingerprint(expected)) << expr::to_string(s);
}

TEST(LayoutChains, DilatedG2bmmBecomesNonDilated) {
  Expr origin = expr::parse(kDilatedG2bmm);
  Expr s = step(origin, "split_output", "split output m by 2", origin);
  s = step(s, "relayout_input", "relayout Q dim 1 by 2", origin);
  s = step(s, "relayout_input", "relayout Kt dim 1 by 2", origin);
  Expr expected = expr::parse(
      "tensor Q[2,16,3] tensor Kt[2,16,3]  L<b:0:2, m:0:16, w:0:5> "
      "{ L<b:0:2, m1:0:8, m2:0:2, w:0:5> Sum<k:0:3> "
      "{ L<i0:0:2, x:0:8, y:0:2, i2:0:3> Q[i0, 2*x + y, i2] }[b, m1, m2, k] * "
      "{ L<i0:0:2, x:0:8, y:0:2, i2:0:3> Kt[i0, 2*x + y, i2] }[b, m1 + w - 2, m2, k] }[b, m / 2, m % 2, w]");
  EXPECT_EQ(expr::fingerprint(s), expr::fingerprint(expected)) << expr::to_string(s);
}

}  // namespace
}  // namespace orchid::derivation
