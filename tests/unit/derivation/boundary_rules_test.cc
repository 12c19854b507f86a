// Boundary rules (tighten_loop, tighten_sum, relax_sum): golden rewrites,
// exactness on varied states, and cases where they must not apply.
#include <gtest/gtest.h>

#include <string_view>

#include "ir/expr_parser.h"
#include "rule_test_util.h"

namespace orchid::derivation {
namespace {

using testing::expect_all_exact;
using testing::expect_golden;
using testing::rewrites_of;

Expr parse(std::string_view text) { return expr::parse(text); }

// Conv3x3 after sum_split and loop_substitute h -> t = h + r - 1.
constexpr std::string_view kConv3x3Substituted =
    "tensor A[1,8,6,6] tensor K[16,8,3,3]  L<n:0:1, f:0:16, h:0:6, w:0:6> Sum<r:0:3, s:0:3> "
    "{ L<n:0:1, f:0:16, t:-1:7, w:0:6, r:0:3, s:0:3> Sum<c:0:8> A[n, c, t, w + s - 1] * K[f, c, r, s] }"
    "[n, f, h + r - 1, w, r, s]";

constexpr std::string_view kConv5x5 =
    "tensor A[1,3,7,7] tensor K[2,3,5,5]  L<n:0:1, f:0:2, h:0:7, w:0:7> Sum<c:0:3, r:0:5, s:0:5> "
    "A[n, c, h + r - 2, w + s - 2] * K[f, c, r, s]";

TEST(TightenLoop, SubstitutedConvToTheInputBox) {
  expect_golden("tighten_loop", kConv3x3Substituted,
                "tensor A[1,8,6,6] tensor K[16,8,3,3]  L<n:0:1, f:0:16, h:0:6, w:0:6> Sum<r:0:3, s:0:3> "
                "{ L<n:0:1, f:0:16, t:0:6, w:0:6, r:0:3, s:0:3> Sum<c:0:8> A[n, c, t, w + s - 1] * K[f, c, r, s] }"
                "[n, f, h + r - 1, w, r, s]");
}

TEST(TightenLoop, ExactOnVariedStates) {
  EXPECT_EQ(expect_all_exact("tighten_loop", parse(kConv3x3Substituted)), 1u);
  // A child wider than its input, with a nonzero origin and padding (kept).
  EXPECT_EQ(expect_all_exact("tighten_loop",
                             parse("tensor A[5] tensor B[3]  L<i:0:8> Sum<k:0:3> "
                                   "{ L<a:-2:9 pad 1, b:0:3> A[a - 1] * B[b] }[i + k - 1, k]")),
            1u);
  // Several dimensions at once (one rewrite each), a zero-preserving call, a floor-div simplified by the new range.
  EXPECT_EQ(expect_all_exact("tighten_loop",
                             parse("tensor A[4,3]  L<i:0:6, j:0:4> "
                                   "{ L<a:0:6, b:-1:5> relu(A[a, b]) + A[a / 4, 0] * A[a, b] }[i, j]")),
            2u);
  // A child reading a smaller child: its support is that child's box.
  EXPECT_EQ(expect_all_exact("tighten_loop",
                             parse("tensor A[8]  L<i:0:8> { L<a:0:8> { L<x:2:5> A[x] }[a] * 2.0 }[i]")),
            1u);
}

TEST(TightenLoop, NotAtTheRootNorWhenTight) {
  EXPECT_TRUE(rewrites_of("tighten_loop", parse("tensor A[6]  L<i:0:10> A[i]")).empty());
  EXPECT_TRUE(rewrites_of("tighten_loop", parse("tensor A[6]  L<i:0:10> { L<a:0:6> A[a] }[i]")).empty());
  // A sum of terms with unbounded support, and a function with f(0) != 0.
  EXPECT_TRUE(rewrites_of("tighten_loop", parse("tensor A[6]  L<i:0:8> { L<a:0:8> A[a] + 1.0 }[i]"))
                  .empty());
  EXPECT_TRUE(rewrites_of("tighten_loop", parse("tensor A[6]  L<i:0:8> { L<a:0:8> exp(A[a]) }[i]")).empty());
}

TEST(TightenSum, ShrinksToTheInput) {
  expect_golden("tighten_sum", "tensor A[6] tensor B[4]  L<i:0:4> Sum<k:0:10> A[k] * B[i]",
                "tensor A[6] tensor B[4]  L<i:0:4> Sum<k:0:6> A[k] * B[i]");
}

TEST(TightenSum, ExactOnVariedStates) {
  // Padded conv with an oversized kernel range.
  EXPECT_EQ(expect_all_exact("tighten_sum",
                             parse("tensor A[1,2,5] tensor K[2,2,3]  L<n:0:1, f:0:2, h:0:5> Sum<c:0:2, r:-1:5> "
                                   "A[n, c, h + r - 1] * K[f, c, r]")),
            1u);
  // Nested child with an offset and a nonzero origin; the support depends on the loop range.
  EXPECT_EQ(expect_all_exact("tighten_sum",
                             parse("tensor A[6]  L<i:0:4> { L<a:2:4> Sum<k:-5:8> A[a + k] }[i]")),
            1u);
  // Two sum iterators, both shrinkable.
  EXPECT_EQ(expect_all_exact("tighten_sum",
                             parse("tensor A[3,4]  L<i:0:2> Sum<p:0:5, q:-1:6> A[p, q] * A[i, q]")),
            2u);
}

TEST(TightenSum, NotWhenUnboundedOrTight) {
  EXPECT_TRUE(rewrites_of("tighten_sum", parse("tensor A[6] tensor B[4]  L<i:0:4> Sum<k:0:10> A[k] + B[i]")).empty());
  EXPECT_TRUE(rewrites_of("tighten_sum", parse("tensor A[6] tensor B[4]  L<i:0:4> Sum<k:0:6> A[k] * B[i]")).empty());
}

TEST(RelaxSum, Conv5x5KernelTo6x6) {
  expect_golden("relax_sum", kConv5x5,
                "tensor A[1,3,7,7] tensor K[2,3,5,5]  L<n:0:1, f:0:2, h:0:7, w:0:7> Sum<c:0:3, r:0:6, s:0:5> "
                "A[n, c, h + r - 2, w + s - 2] * K[f, c, r, s]");
  // p = 2 and p = 3 both give 0:6 for r and s; c:0:3 gives 0:4 (p = 2).
  EXPECT_EQ(rewrites_of("relax_sum", parse(kConv5x5)).size(), 3u);
}

TEST(RelaxSum, ExactOnVariedStates) {
  EXPECT_EQ(expect_all_exact("relax_sum", parse(kConv5x5)), 3u);
  // Extent 7: p = 2 -> 8, p = 3 -> 9; nonzero origin.
  EXPECT_EQ(expect_all_exact("relax_sum",
                             parse("tensor A[9] tensor K[7]  L<o:0:3> Sum<r:1:8> A[o + r - 1] * K[r - 1]")),
            2u);
  // In a nested child read through an offset.
  EXPECT_EQ(expect_all_exact("relax_sum",
                             parse("tensor A[5] tensor B[4,5]  L<i:0:4> Sum<j:0:5> "
                                   "{ L<a:0:4, b:0:5> Sum<k:0:5> A[k] * B[a, b] }[i, j]")),
            2u);
}

TEST(RelaxSum, NotWhenTheNewTermsMayBeNonzero) {
  // A sum, not a product: B[i] does not vanish outside k's range.
  EXPECT_TRUE(rewrites_of("relax_sum", parse("tensor A[5] tensor B[4]  L<i:0:4> Sum<k:0:5> A[k] + B[i]")).empty());
  // A reads beyond k:0:5 (A has 8 elements).
  EXPECT_TRUE(rewrites_of("relax_sum", parse("tensor A[8] tensor B[4]  L<i:0:4> Sum<k:0:5> A[k] * B[i]")).empty());
  // Already a multiple of 2 and 3.
  EXPECT_TRUE(rewrites_of("relax_sum", parse("tensor A[6] tensor B[4]  L<i:0:4> Sum<k:0:6> A[k] * B[i]")).empty());
}

}  // namespace
}  // namespace orchid::derivation
