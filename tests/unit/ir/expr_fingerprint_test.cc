// Name-independent fingerprints of the expr IR.
#include "ir/expr_fingerprint.h"

#include <gtest/gtest.h>

#include "ir/expr_parser.h"

namespace orchid::expr {
namespace {

const TensorTable& tensors() {
  static const TensorTable table = {
      {"A", tensor("A", {4, 3})},       {"B", tensor("B", {3, 5})},        {"C", tensor("C", {3, 5})},
      {"X", tensor("X", {1, 7, 7, 8})}, {"K", tensor("K", {3, 3, 16, 8})}, {"S", tensor("S", {3, 3})},
  };
  return table;
}

uint64_t fp(std::string_view text) { return fingerprint(parse(text, tensors())); }

TEST(ExprFingerprint, AlphaRenamedScopesAreEqual) {
  Expr a = parse("L<i:0:4, j:0:5> Sum<k:0:3> A[i, k] * B[k, j]", tensors());
  Expr b = parse("L<x:0:4, y:0:5> Sum<z:0:3> A[x, z] * B[z, y]", tensors());
  EXPECT_NE(a, b);
  EXPECT_EQ(fingerprint(a), fingerprint(b));
  EXPECT_EQ(
      fp("L<n:0:1, h:0:7, w:0:7, f:0:16> Sum<c:0:8, r:0:3, s:0:3> X[n, h + r - 1, w + s - 1, c] * K[r, s, f, c]"),
      fp("L<a:0:1, b:0:7, q:0:7, o:0:16> Sum<u:0:8, v:0:3, t:0:3> X[a, b + v - 1, q + t - 1, u] * K[v, t, o, u]"));
}

TEST(ExprFingerprint, SumIteratorOrderDoesNotMatter) {
  EXPECT_EQ(
      fp("L<n:0:1, h:0:7, w:0:7, f:0:16> Sum<c:0:8, r:0:3, s:0:3> X[n, h + r - 1, w + s - 1, c] * K[r, s, f, c]"),
      fp("L<n:0:1, h:0:7, w:0:7, f:0:16> Sum<s:0:3, c:0:8, r:0:3> X[n, h + r - 1, w + s - 1, c] * K[r, s, f, c]"));
  EXPECT_EQ(fp("L<> Sum<p:0:3, q:0:3> S[p, q] * S[q, p] + S[p, p]"),
            fp("L<> Sum<q:0:3, p:0:3> S[p, q] * S[q, p] + S[p, p]"));
}

TEST(ExprFingerprint, CommutedOperandsAreEqual) {
  EXPECT_EQ(fp("L<i:0:4, j:0:5> Sum<k:0:3> A[i, k] * B[k, j]"), fp("L<i:0:4, j:0:5> Sum<k:0:3> B[k, j] * A[i, k]"));
  EXPECT_EQ(fp("L<k:0:3, j:0:5> B[k, j] + (C[k, j] + 1.0)"), fp("L<k:0:3, j:0:5> (1.0 + B[k, j]) + C[k, j]"));
  EXPECT_NE(fp("L<k:0:3, j:0:5> B[k, j] - C[k, j]"), fp("L<k:0:3, j:0:5> C[k, j] - B[k, j]"));
  EXPECT_NE(fp("L<k:0:3, j:0:5> B[k, j] + C[k, j]"), fp("L<k:0:3, j:0:5> B[k, j] * C[k, j]"));
}

TEST(ExprFingerprint, StructuralDifferencesDiffer) {
  const uint64_t base = fp("L<i:0:4, j:0:5> Sum<k:0:3> A[i, k] * B[k, j]");
  EXPECT_NE(base, fp("L<i:0:3, j:0:5> Sum<k:0:3> A[i, k] * B[k, j]"));        // loop range
  EXPECT_NE(base, fp("L<i:1:4, j:0:5> Sum<k:0:3> A[i, k] * B[k, j]"));        // range start
  EXPECT_NE(base, fp("L<i:0:4, j:0:5> Sum<k:0:2> A[i, k] * B[k, j]"));        // sum range
  EXPECT_NE(base, fp("L<i:0:4, j:0:5> Sum<k:0:3> A[i, k] * C[k, j]"));        // other tensor
  EXPECT_NE(base, fp("L<i:0:4, j:0:5> Sum<k:0:3> A[i, k] * B[k + 1, j]"));    // offset
  EXPECT_NE(base, fp("L<j:0:5, i:0:4> Sum<k:0:3> A[i, k] * B[k, j]"));        // loop order: a transpose
  EXPECT_NE(base, fp("L<i:0:4 pad 1, j:0:5> Sum<k:0:3> A[i, k] * B[k, j]"));  // output padding
  // Swapping the roles of two sum iterators with equal ranges is a different sum.
  EXPECT_NE(fp("L<> Sum<p:0:3, q:0:3> S[p, q] * S[q, p]"), fp("L<> Sum<p:0:3, q:0:3> S[p, q] * S[p, q]"));
  EXPECT_NE(fp("L<i:0:4, j:0:5> relu(A[i, 0] * B[0, j])"), fp("L<i:0:4, j:0:5> tanh(A[i, 0] * B[0, j])"));
}

TEST(ExprFingerprint, NestedScopesCompareByFingerprint) {
  EXPECT_EQ(fp("L<i:0:4, j:0:5> Sum<k:0:3> { L<a:0:4, b:0:3> relu(A[a, b]) }[i, k] * B[k, j]"),
            fp("L<x:0:4, y:0:5> Sum<z:0:3> B[z, y] * { L<p:0:4, q:0:3> relu(A[p, q]) }[x, z]"));
  // A transposed intermediate read transposed computes the same values, but is
  // a different derivation state.
  EXPECT_NE(fp("L<i:0:4, j:0:5> Sum<k:0:3> { L<a:0:4, b:0:3> relu(A[a, b]) }[i, k] * B[k, j]"),
            fp("L<i:0:4, j:0:5> Sum<k:0:3> { L<b:0:3, a:0:4> relu(A[a, b]) }[k, i] * B[k, j]"));
}

TEST(ExprFingerprint, OpenExpressionsHashFreeIteratorsByName) {
  EXPECT_EQ(fingerprint(parse_open("A[i, k] * B[k, j]", tensors())),
            fingerprint(parse_open("B[k, j] * A[i, k]", tensors())));
  EXPECT_NE(fingerprint(parse_open("A[i, k]", tensors())), fingerprint(parse_open("A[k, i]", tensors())));
}

}  // namespace
}  // namespace orchid::expr
