// The reference evaluator against direct loops written here.
#include "ir/expr_eval.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ir/expr_parser.h"

namespace orchid::expr {
namespace {

DenseTensor random_tensor(std::vector<int64_t> shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  DenseTensor t = DenseTensor::zeros(std::move(shape));
  for (double& v : t.data) v = dist(rng);
  return t;
}

void expect_near_all(const DenseTensor& got, const DenseTensor& want) {
  ASSERT_EQ(got.shape, want.shape);
  ASSERT_EQ(got.data.size(), want.data.size());
  for (size_t i = 0; i < got.data.size(); ++i) EXPECT_NEAR(got.data[i], want.data[i], 1e-9) << "at " << i;
}

TEST(ExprEval, MatMulMatchesLoop) {
  const int64_t m = 5, n = 6, k = 7;
  TensorValues in = {{"A", random_tensor({m, k}, 1)}, {"B", random_tensor({k, n}, 2)}};
  Expr mm = parse("tensor A[5,7] tensor B[7,6] L<i:0:5, j:0:6> Sum<k:0:7> A[i, k] * B[k, j]");
  DenseTensor want = DenseTensor::zeros({m, n});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) want.data[i * n + j] += in["A"].data[i * k + p] * in["B"].data[p * n + j];
  expect_near_all(evaluate(mm, in), want);
}

TEST(ExprEval, Conv3x3Pad1MatchesLoop) {
  const int64_t H = 6, W = 5, C = 3, F = 4;
  TensorValues in = {{"A", random_tensor({1, H, W, C}, 3)}, {"K", random_tensor({3, 3, F, C}, 4)}};
  Expr conv = parse(
      "tensor A[1,6,5,3] tensor K[3,3,4,3]\n"
      "L<n:0:1, h:0:6, w:0:5, f:0:4> Sum<c:0:3, r:0:3, s:0:3> A[n, h + r - 1, w + s - 1, c] * K[r, s, f, c]");
  DenseTensor want = DenseTensor::zeros({1, H, W, F});
  const auto& a = in["A"].data;
  const auto& kw = in["K"].data;
  for (int64_t h = 0; h < H; ++h)
    for (int64_t w = 0; w < W; ++w)
      for (int64_t f = 0; f < F; ++f) {
        double acc = 0;
        for (int64_t r = 0; r < 3; ++r)
          for (int64_t s = 0; s < 3; ++s)
            for (int64_t c = 0; c < C; ++c) {
              const int64_t y = h + r - 1, x = w + s - 1;
              if (y < 0 || y >= H || x < 0 || x >= W) continue;
              acc += a[(y * W + x) * C + c] * kw[((r * 3 + s) * F + f) * C + c];
            }
        want.data[(h * W + w) * F + f] = acc;
      }
  expect_near_all(evaluate(conv, in), want);
}

TEST(ExprEval, OutOfBoundsReadsAreZero) {
  TensorValues in = {{"A", DenseTensor{{4}, {}, {1, 2, 3, 4}}}};
  DenseTensor out = evaluate(parse("tensor A[4] L<i:-2:6> A[i] + 10.0 * A[i - 5]"), in);
  EXPECT_EQ(out.shape, std::vector<int64_t>{8});
  EXPECT_EQ(out.origin, std::vector<int64_t>{-2});
  EXPECT_EQ(out.data, (std::vector<double>{0, 0, 1, 2, 3, 4, 0, 10}));
  const int64_t at_minus_one[] = {-1};
  EXPECT_EQ(out.at(at_minus_one), 0.0);
  // A tightened scope is zero outside its loop box when read as a tensor.
  DenseTensor outer = evaluate(parse("tensor A[4] L<i:0:4> { L<j:1:3> A[j] }[i] + 100.0"), in);
  EXPECT_EQ(outer.data, (std::vector<double>{100, 102, 103, 100}));
  EXPECT_EQ(reframe(evaluate(parse("tensor A[4] L<j:1:3> A[j]"), in), {0}, {4}).data,
            (std::vector<double>{0, 2, 3, 0}));
}

TEST(ExprEval, NestedScopeMatchesTwoStageLoop) {
  TensorValues in = {{"A", random_tensor({4, 3}, 5)}, {"B", random_tensor({3, 5}, 6)}};
  Expr e = parse(
      "tensor A[4,3] tensor B[3,5]\n"
      "L<i:0:4, j:0:5> Sum<k:0:3> { L<a:0:4, b:0:3> relu(A[a, b]) * 2.0 }[i, k] * B[k, j]");
  DenseTensor want = DenseTensor::zeros({4, 5});
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 5; ++j)
      for (int64_t k = 0; k < 3; ++k)
        want.data[i * 5 + j] += std::max(in["A"].data[i * 3 + k], 0.0) * 2.0 * in["B"].data[k * 5 + j];
  expect_near_all(evaluate(e, in), want);
}

TEST(ExprEval, FunctionsAndIndexValues) {
  TensorValues in = {{"A", DenseTensor{{3}, {}, {0.25, 0.5, 0.75}}}};
  DenseTensor out = evaluate(parse("tensor A[3] L<i:0:3> exp(A[i]) + tanh(A[i]) * sigmoid(A[i]) - 2*i"), in);
  for (int64_t i = 0; i < 3; ++i) {
    const double a = in["A"].data[i];
    EXPECT_NEAR(out.data[i], std::exp(a) + std::tanh(a) / (1 + std::exp(-a)) - 2.0 * i, 1e-12);
  }
}

// The div/mod canonical forms must not change values: compare with the
// definition on a grid that includes negative points.
TEST(ExprEval, DivModCanonicalFormsKeepValues) {
  for (int64_t a : {-3, -1, 1, 2, 4}) {
    for (int64_t b : {-2, 0, 3}) {
      for (int64_t k : {-5, 0, 2, 7}) {
        for (int64_t c : {2, 3, 4, 6}) {
          Expr i = iter("i"), j = iter("j");
          Expr lin = add(add(mul(integer(a), i), mul(integer(b), j)), integer(k));
          Expr body = add(mul(div(lin, integer(c)), integer(100)), mod(lin, integer(c)));
          DenseTensor out = evaluate(scope({{i, -6, 6}, {j, -4, 4}}, {}, body), {});
          size_t at = 0;
          for (int64_t x = -6; x < 6; ++x)
            for (int64_t y = -4; y < 4; ++y, ++at) {
              const int64_t v = a * x + b * y + k;
              const int64_t q = v >= 0 ? v / c : -((-v + c - 1) / c);
              ASSERT_EQ(out.data[at], static_cast<double>(q * 100 + (v - q * c)))
                  << a << "i + " << b << "j + " << k << " by " << c << " at " << x << "," << y;
            }
        }
      }
    }
  }
}

TEST(ExprEval, BadInputsAreUserErrors) {
  Expr e = parse("tensor A[4] L<i:0:4> A[i]");
  EXPECT_THROW(evaluate(e, {}), Error);
  EXPECT_THROW(evaluate(e, {{"A", DenseTensor::zeros({5})}}), Error);
}

}  // namespace
}  // namespace orchid::expr
