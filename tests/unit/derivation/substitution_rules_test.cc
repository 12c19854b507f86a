// Substitution rules (loop_substitute, sum_split_iter): golden rewrites,
// exactness on varied states, cases where they must not apply, and the
// Conv3x3 -> MatMul + offset-sum chain.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "derivation/check.h"
#include "ir/expr_fingerprint.h"
#include "ir/expr_parser.h"
#include "ir/expr_printer.h"
#include "rule_test_util.h"

namespace orchid::derivation {
namespace {

using testing::expect_all_exact;
using testing::expect_golden;
using testing::rewrites_of;

// Conv3x3 pad 1 after sum_split of Sum<r, s> to the outer scope.
constexpr std::string_view kConv3x3 =
    "tensor A[1,8,6,6] tensor K[16,8,3,3]  L<n:0:1, f:0:16, h:0:6, w:0:6> Sum<c:0:8, r:0:3, s:0:3> "
    "A[n, c, h + r - 1, w + s - 1] * K[f, c, r, s]";
constexpr std::string_view kConv3x3Split =
    "tensor A[1,8,6,6] tensor K[16,8,3,3]  L<n:0:1, f:0:16, h:0:6, w:0:6> Sum<r:0:3, s:0:3> "
    "{ L<n:0:1, f:0:16, h:0:6, w:0:6, r:0:3, s:0:3> Sum<c:0:8> A[n, c, h + r - 1, w + s - 1] * K[f, c, r, s] }"
    "[n, f, h, w, r, s]";

Expr parse(std::string_view text) { return expr::parse(text); }

// The successor of `state` by `rule` whose detail starts with `prefix`.
Expr step(std::string_view rule, Expr state, std::string_view prefix) {
  std::string seen;
  for (const Successor& s : rewrites_of(rule, state)) {
    if (s.step.detail.rfind(prefix, 0) == 0) return s.state;
    seen += "\n  " + s.step.detail;
  }
  ADD_FAILURE() << rule << " has no step '" << prefix << "' from " << expr::to_string(state) << "; it has:" << seen;
  return state;
}

// The successor of `state` by `rule` equal to `expected` up to iterator names.
Expr step_to(std::string_view rule, Expr state, Expr expected) {
  std::string seen;
  for (const Successor& s : rewrites_of(rule, state)) {
    if (expr::fingerprint(s.state) == expr::fingerprint(expected)) return s.state;
    seen += "\n  " + s.step.detail + ": " + expr::to_string(s.state);
  }
  ADD_FAILURE() << rule << " does not give " << expr::to_string(expected) << " from " << expr::to_string(state)
                << "; it gives:" << seen;
  return expected;
}

TEST(LoopSubstitute, Conv3x3HBecomesT) {
  expect_golden("loop_substitute", kConv3x3Split,
                "tensor A[1,8,6,6] tensor K[16,8,3,3]  L<n:0:1, f:0:16, h:0:6, w:0:6> Sum<r:0:3, s:0:3> "
                "{ L<n:0:1, f:0:16, t:-1:7, w:0:6, r:0:3, s:0:3> Sum<c:0:8> A[n, c, t, w + s - 1] * K[f, c, r, s] }"
                "[n, f, h + r - 1, w, r, s]");
}

TEST(LoopSubstitute, ConvTransposeOutputPosition) {
  // ConvTranspose 1-D, kernel 4, stride 2, pad 1: o -> t = o + 1 - 2*i.
  expect_golden("loop_substitute",
                "tensor X[1,3,4] tensor W[3,2,4]  L<n:0:1, m:0:2, o:0:8> Sum<i:0:4> "
                "{ L<n:0:1, m:0:2, o:0:8, i:0:4> Sum<c:0:3> X[n, c, i] * W[c, m, o + 1 - 2*i] }[n, m, o, i]",
                "tensor X[1,3,4] tensor W[3,2,4]  L<n:0:1, m:0:2, o:0:8> Sum<i:0:4> "
                "{ L<n:0:1, m:0:2, t:-5:9, i:0:4> Sum<c:0:3> X[n, c, i] * W[c, m, t] }[n, m, o - 2*i + 1, i]");
}

TEST(LoopSubstitute, ExactOnVariedStates) {
  EXPECT_EQ(expect_all_exact("loop_substitute", parse(kConv3x3Split)), 4u);  // h, r, w, s
  // Nonzero box origins, an offset access, padding on the child.
  EXPECT_GT(expect_all_exact("loop_substitute",
                             parse("tensor A[8] tensor B[3]  L<i:0:6> Sum<k:0:3> "
                                   "{ L<a:1:7 pad 1, b:0:3> A[a + b - 1] * B[b] }[i + 1, k]")),
            0u);
  // Negative coefficient and a child read by two accesses.
  EXPECT_GT(expect_all_exact("loop_substitute",
                             parse("tensor A[9] tensor B[4]  L<i:2:6> Sum<k:0:4> "
                                   "{ L<a:2:6, b:0:4> Sum<c:0:2> A[a - b + 3] * B[b + c] }[i, k] + "
                                   "{ L<a:2:6, b:0:4> Sum<c:0:2> A[a - b + 3] * B[b + c] }[i, 3 - k]")),
            0u);
  // Substitution inside a nested site (the child's child).
  EXPECT_GT(expect_all_exact("loop_substitute",
                             parse("tensor A[6] tensor B[3]  L<i:0:4> Sum<j:0:3> "
                                   "{ L<p:0:4, q:0:3> Sum<k:0:3> { L<x:0:4, y:0:3, z:0:3> A[x + y + z] * B[z] }"
                                   "[p, q, k] }[i, j]")),
            0u);
}

TEST(LoopSubstitute, NotWhenAccessesLeaveTheChildBox) {
  // h reaches 5, outside the child's h:0:5: C' would differ from C there.
  EXPECT_TRUE(rewrites_of("loop_substitute",
                          parse("tensor A[6]  L<h:0:6> Sum<r:0:3> { L<h:0:5, r:0:3> A[h + r - 1] }[h, r]"))
                  .empty());
}

TEST(LoopSubstitute, NotWithTheChildsSumIterators) {
  // i + k contains the child's sum iterator k: substituting would change the sum.
  EXPECT_TRUE(
      rewrites_of("loop_substitute", parse("tensor A[8]  L<i:0:4> { L<i:0:4> Sum<k:0:3> A[i + k] }[i]")).empty());
  // Coefficient 2 of every iterator: t = 2*i + 2*j has no unique solution for either.
  EXPECT_TRUE(rewrites_of("loop_substitute",
                          parse("tensor A[16]  L<i:0:4> Sum<j:0:3> { L<i:0:4, j:0:3> A[2*i + 2*j] }[i, j]"))
                  .empty());
}

TEST(SumSplitIter, SplitsIntoBlocks) {
  expect_golden("sum_split_iter", "tensor A[10] tensor B[6]  L<i:0:4> Sum<k:0:6> A[i + k] * B[k]",
                "tensor A[10] tensor B[6]  L<i:0:4> Sum<a:0:3, q:0:2> A[i + 2*a + q] * B[2*a + q]");
  expect_golden("sum_split_iter", "tensor A[12] tensor B[8]  L<i:0:4> Sum<k:1:7> A[i + k] * B[k]",
                "tensor A[12] tensor B[8]  L<i:0:4> Sum<a:0:2, q:0:3> A[i + 3*a + q + 1] * B[3*a + q + 1]");
  // A reduction iterator alone in its indices (a channel) is not split.
  EXPECT_TRUE(rewrites_of("sum_split_iter", parse("tensor A[6] tensor B[6,4]  L<i:0:4> Sum<k:0:6> A[k] * B[k, i]"))
                  .empty());
}

TEST(SumSplitIter, ExactOnVariedStates) {
  // Stride 5: the coefficient 5 is a factor too (p = 2 and p = 5 divide 10;
  // 3 relaxes 10 to 12, exact because K reads 0 past 10).
  EXPECT_EQ(expect_all_exact("sum_split_iter",
                             parse("tensor A[30] tensor K[10]  L<o:0:4> Sum<r:0:10> A[5*o + r - 1] * K[r]")),
            3u);
  EXPECT_EQ(expect_all_exact("sum_split_iter", parse(kConv3x3Split)), 0u);  // Sum<c:0:8> of the child: a channel
  EXPECT_GT(expect_all_exact("sum_split_iter",
                             parse("tensor A[1,2,6] tensor K[2,2,4]  L<n:0:1, f:0:2, h:1:6> Sum<c:0:2, r:0:4> "
                                   "A[n, c, h + r - 2] * K[f, c, r]")),
            0u);
  EXPECT_GT(expect_all_exact("sum_split_iter",
                             parse("tensor A[12]  L<i:0:3> { L<j:0:3> Sum<k:-2:10> A[k + j] }[i]")),
            0u);
}

TEST(SumSplitIter, RelaxesWhereTheAddedTermsAreZero) {
  // Conv5x5's taps: 5 -> 6 = 2 x 3 (or 3 x 2), K reads 0 past 5.
  expect_golden("sum_split_iter", "tensor A[9] tensor K[5]  L<h:0:5> Sum<r:0:5> A[h + r] * K[r]",
                "tensor A[9] tensor K[5]  L<h:0:5> Sum<k:0:2, q:0:3> A[h + 3*k + q] * K[3*k + q]");
  EXPECT_EQ(expect_all_exact("sum_split_iter", parse("tensor A[9] tensor K[5]  L<h:0:5> Sum<r:0:5> A[h + r] * K[r]")),
            2u);
}

TEST(SumSplitIter, NotOnShortOrPrimeRanges) {
  // 5 is prime and the added terms would not be 0 (A reads past 5 are, but B[i] is not).
  EXPECT_TRUE(rewrites_of("sum_split_iter", parse("tensor A[5] tensor B[4]  L<i:0:4> Sum<k:0:5> A[k] + B[i]")).empty());
  EXPECT_TRUE(rewrites_of("sum_split_iter", parse("tensor A[5]  L<i:0:4> Sum<k:0:2> A[k]")).empty());
  EXPECT_TRUE(rewrites_of("sum_split_iter", parse("tensor A[8]  L<i:0:8> A[i]")).empty());  // loops are not split
}

// Conv3x3 -> MatMul (the child, Sum<c> over A[n, c, t, u] * K[f, c, r, s]) +
// offset sum (the root), every step exact.
TEST(SubstitutionChain, Conv3x3ToMatMulPlusOffsetSum) {
  Expr conv = parse(kConv3x3);
  Expr state = step_to("sum_split", conv, parse(kConv3x3Split));
  EXPECT_EQ(check_equivalent(conv, state), "");
  state = step("loop_substitute", state, "h -> ");
  EXPECT_EQ(check_equivalent(conv, state), "");
  state = step("loop_substitute", state, "w -> ");
  EXPECT_EQ(check_equivalent(conv, state), "");
  for (int i = 0; i < 2; ++i) {
    state = step("tighten_loop", state, "");
    EXPECT_EQ(check_equivalent(conv, state), "");
  }
  Expr expected = parse(
      "tensor A[1,8,6,6] tensor K[16,8,3,3]  L<n:0:1, f:0:16, h:0:6, w:0:6> Sum<r:0:3, s:0:3> "
      "{ L<n:0:1, f:0:16, t:0:6, u:0:6, r:0:3, s:0:3> Sum<c:0:8> A[n, c, t, u] * K[f, c, r, s] }"
      "[n, f, h + r - 1, w + s - 1, r, s]");
  EXPECT_EQ(expr::fingerprint(state), expr::fingerprint(expected)) << expr::to_string(state);
  EXPECT_TRUE(same_loop_box(conv, state));
}

}  // namespace
}  // namespace orchid::derivation

namespace orchid::derivation {
namespace {

using testing::expect_all_exact;
using testing::expect_golden;
using testing::rewrites_of;

// col2im by output phase: out[2*o1 + o2] = Sum_i T[2*o1 + o2 + 1 - 2*i, i] reads
// a tap t in [0, 4) for about 2 of the 5 input positions; along j = o1 - i the
// sum has 3 terms.
TEST(SumSubstitute, TransposedConvolutionSumsAlongTheDiagonal) {
  expect_golden("sum_substitute", "tensor T[4,5]  L<o1:0:5, o2:0:2> Sum<i:0:5> T[2*o1 + o2 + 1 - 2*i, i]",
                "tensor T[4,5]  L<o1:0:5, o2:0:2> Sum<j:-1:2> T[2*j + o2 + 1, o1 - j]");
}

TEST(SumSubstitute, ExactOnVariedStates) {
  EXPECT_GT(expect_all_exact("sum_substitute",
                             expr::parse("tensor T[3,6] tensor B[2]  L<o1:0:6, o2:0:3> Sum<i:0:6> "
                                         "T[3*o1 + o2 - 3*i, i] * B[o2 % 2]")),
            0u);
  // x + i along the other diagonal, nonzero origins, a child scope source.
  EXPECT_GT(expect_all_exact("sum_substitute",
                             expr::parse("tensor K[8] tensor A[9]  L<x:1:5> Sum<i:0:8> "
                                         "{ L<a:3:6> A[a] * 2.0 }[x + i] * K[i]")),
            0u);
}

TEST(SumSubstitute, NotWhereTermsOutsideTheRangeAreNonzero) {
  // B[o] does not vanish when i leaves [0, 5): relaxing i would add terms.
  EXPECT_TRUE(rewrites_of("sum_substitute",
                          expr::parse("tensor T[4,5] tensor B[5]  L<o:0:5> Sum<i:0:5> T[o - i, i] + B[o]"))
                  .empty());
  // No gain: the diagonal is as long as the range.
  EXPECT_TRUE(rewrites_of("sum_substitute", expr::parse("tensor T[9,5]  L<o:0:5> Sum<i:0:5> T[o - i + 4, i]")).empty());
}

}  // namespace
}  // namespace orchid::derivation
