#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "reference/op_registry.h"
#include "reference/ops/op_utils.h"
#include "support/error.h"

#include "op_test_util.h"

namespace orchid::reference {
namespace {

using namespace testing;

// Deterministic pseudo-random values in [-1, 1).
Tensor random_floats(Shape shape, uint32_t seed) {
  Tensor t(DType::Float32, shape);
  uint32_t state = seed * 2654435761u + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    state = state * 1664525u + 1013904223u;
    t.data<float>()[i] = float(state >> 8) / float(1 << 23) - 1.0f;
  }
  return t;
}

void expect_close(const Tensor& actual, const Tensor& expected, double tol = 1e-5) {
  ASSERT_EQ(actual.shape(), expected.shape());
  ASSERT_EQ(actual.dtype(), expected.dtype());
  for (int64_t i = 0; i < actual.numel(); ++i) {
    ASSERT_NEAR(actual.at_f64(i), expected.at_f64(i), tol * (1 + std::abs(expected.at_f64(i)))) << "at " << i;
  }
}

// ---------------------------------------------------------------------------
// MatMul, Gemm, MatMulInteger
// ---------------------------------------------------------------------------

TEST(LinearOps, MatMul2D) {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = f32({3, 2}, {7, 8, 9, 10, 11, 12});
  expect_close(eval1(make_node("MatMul"), {&a, &b}), f32({2, 2}, {58, 64, 139, 154}));
}

TEST(LinearOps, MatMulVectorsAndBroadcast) {
  Tensor v = f32({3}, {1, 2, 3});
  Tensor m = f32({3, 2}, {7, 8, 9, 10, 11, 12});
  expect_close(eval1(make_node("MatMul"), {&v, &m}), f32({2}, {58, 64}));
  Tensor m2 = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_close(eval1(make_node("MatMul"), {&m2, &v}), f32({2}, {14, 32}));
  expect_close(eval1(make_node("MatMul"), {&v, &v}), f32({}, {14}));

  // [2, 1, 2, 3] x [3, 3, 2] -> [2, 3, 2, 2]; batch (i, j) uses a[i, 0] and b[j].
  Tensor a = random_floats({2, 1, 2, 3}, 1), b = random_floats({3, 3, 2}, 2);
  Tensor y = eval1(make_node("MatMul"), {&a, &b});
  ASSERT_EQ(y.shape(), (Shape{2, 3, 2, 2}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 2; ++c) {
          double want = 0;
          for (int k = 0; k < 3; ++k) want += a.at_f64(i * 6 + r * 3 + k) * b.at_f64(j * 6 + k * 2 + c);
          EXPECT_NEAR(y.at_f64(((i * 3 + j) * 2 + r) * 2 + c), want, 1e-6);
        }
}

TEST(LinearOps, MatMulIntegerTypesWrap) {
  Tensor a = Tensor::from_vector(DType::Int32, {1, 2}, std::vector<int64_t>{65536, 1});
  Tensor b = Tensor::from_vector(DType::Int32, {2, 1}, std::vector<int64_t>{65536, -3});
  Tensor y = eval1(make_node("MatMul"), {&a, &b});
  EXPECT_EQ(y.dtype(), DType::Int32);
  EXPECT_EQ(y.data<int32_t>()[0], -3);  // 2^32 wraps to 0
}

TEST(LinearOps, MatMulErrors) {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THROW(eval1(make_node("MatMul"), {&a, &a}), Error);
  Tensor i = Tensor::from_vector(DType::Int8, {3, 2}, std::vector<int>{1, 2, 3, 4, 5, 6});
  EXPECT_THROW(eval1(make_node("MatMul"), {&i, &i}), Error);
  Tensor f64 = Tensor(DType::Float64, {3, 2});
  EXPECT_THROW(eval1(make_node("MatMul"), {&a, &f64}), Error);
}

TEST(LinearOps, GemmAllAttributes) {
  Attributes attrs;
  attrs.set("transA", int64_t(1));
  attrs.set("transB", int64_t(1));
  attrs.set("alpha", 0.5);
  attrs.set("beta", 2.0);
  Tensor a = f32({3, 2}, {1, 4, 2, 5, 3, 6});            // A^T = [[1,2,3],[4,5,6]]
  Tensor b = f32({2, 3}, {7, 9, 11, 8, 10, 12});         // B^T = [[7,8],[9,10],[11,12]]
  Tensor c = f32({2}, {1, -1});                           // broadcast over rows
  expect_close(eval1(make_node("Gemm", attrs), {&a, &b, &c}), f32({2, 2}, {31, 30, 71.5, 75}));
  Tensor y = eval1(make_node("Gemm"), {&b, &a});             // no C: [2,3] x [3,2]
  expect_close(y, f32({2, 2}, {58, 139, 64, 154}));
  Tensor bad_c = f32({3}, {1, 2, 3});
  EXPECT_THROW(eval1(make_node("Gemm", attrs), {&a, &b, &bad_c}), Error);
}

TEST(LinearOps, MatMulIntegerZeroPoints) {
  // The ONNX MatMulInteger example.
  Tensor a = Tensor::from_vector(DType::UInt8, {4, 3}, std::vector<int>{11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0});
  Tensor b = Tensor::from_vector(DType::UInt8, {3, 2}, std::vector<int>{1, 4, 2, 5, 3, 6});
  Tensor azp = Tensor::from_vector(DType::UInt8, {}, std::vector<int>{12});
  Tensor bzp = Tensor::from_vector(DType::UInt8, {}, std::vector<int>{0});
  Tensor y = eval1(make_node("MatMulInteger"), {&a, &b, &azp, &bzp});
  EXPECT_EQ(y.dtype(), DType::Int32);
  EXPECT_EQ(y.to_i64_vector(), (std::vector<int64_t>{-38, -83, -44, -98, -50, -113, -56, -128}));
}

// ---------------------------------------------------------------------------
// Conv and ConvTranspose against direct implementations
// ---------------------------------------------------------------------------

struct ConvCase {
  Shape x, w;
  std::vector<int64_t> strides, dilations, pads;  // pads: begins then ends
  int64_t group = 1;
};

// out[n, m, o...] = b[m] + sum over the group's c and taps k of
// x[n, c, o * s + k * d - p] * w[m, c', k].
Tensor direct_conv(const ConvCase& cc, const Tensor& x, const Tensor& w, const Tensor& b) {
  size_t n = cc.x.size() - 2;
  Shape out = {cc.x[0], cc.w[0]};
  for (size_t i = 0; i < n; ++i) {
    int64_t extent = (cc.w[i + 2] - 1) * cc.dilations[i] + 1;
    out.push_back((cc.x[i + 2] + cc.pads[i] + cc.pads[n + i] - extent) / cc.strides[i] + 1);
  }
  Tensor y(DType::Float32, out);
  int64_t cg = cc.w[1], mg = cc.w[0] / cc.group;
  Shape kernel(cc.w.begin() + 2, cc.w.end());
  int64_t flat = 0;
  for_each_index(out, [&](const std::vector<int64_t>& o) {
    double sum = b.at_f64(o[1]);
    for (int64_t c = 0; c < cg; ++c) {
      for_each_index(kernel, [&](const std::vector<int64_t>& k) {
        int64_t xi = o[0] * cc.x[1] + (o[1] / mg) * cg + c, wi = o[1] * cg + c;
        for (size_t i = 0; i < n; ++i) {
          int64_t pos = o[i + 2] * cc.strides[i] + k[i] * cc.dilations[i] - cc.pads[i];
          if (pos < 0 || pos >= cc.x[i + 2]) return;
          xi = xi * cc.x[i + 2] + pos;
          wi = wi * kernel[i] + k[i];
        }
        sum += x.at_f64(xi) * w.at_f64(wi);
      });
    }
    y.set_f64(flat++, sum);
  });
  return y;
}

Attributes conv_attrs(const ConvCase& cc) {
  Attributes attrs;
  attrs.set("strides", cc.strides);
  attrs.set("dilations", cc.dilations);
  attrs.set("pads", cc.pads);
  attrs.set("group", cc.group);
  return attrs;
}

TEST(LinearOps, ConvHandChecked) {
  Tensor x = f32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  Tensor w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  expect_close(eval1(make_node("Conv"), {&x, &w}), f32({1, 1, 2, 2}, {8, 12, 20, 24}));
  Attributes attrs;
  attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  attrs.set("strides", std::vector<int64_t>{2, 2});
  Tensor b = f32({1}, {10});
  expect_close(eval1(make_node("Conv", attrs), {&x, &w, &b}), f32({1, 1, 2, 2}, {10, 13, 19, 34}));
}

TEST(LinearOps, ConvMatchesDirectImplementation) {
  std::vector<ConvCase> cases = {
      {{2, 4, 7, 6}, {6, 2, 3, 2}, {2, 1}, {1, 2}, {1, 0, 2, 1}, 2},   // groups, strides, dilations, asymmetric pads
      {{1, 3, 9}, {4, 3, 3}, {3}, {2}, {2, 1}, 1},                      // 1-D
      {{1, 2, 4, 5, 3}, {2, 1, 2, 3, 1}, {1, 2, 1}, {1, 1, 2}, {0, 1, 0, 1, 0, 1}, 2},  // 3-D
      {{1, 4, 5, 5}, {4, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 4},   // depthwise
      {{1, 8, 3, 4}, {5, 8, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1},   // pointwise
  };
  uint32_t seed = 10;
  for (const ConvCase& cc : cases) {
    Tensor x = random_floats(cc.x, seed++), w = random_floats(cc.w, seed++), b = random_floats({cc.w[0]}, seed++);
    Tensor y = eval1(make_node("Conv", conv_attrs(cc)), {&x, &w, &b});
    expect_close(y, direct_conv(cc, x, w, b));
  }
}

TEST(LinearOps, ConvAutoPadAndKernelShape) {
  Tensor x = random_floats({1, 1, 5, 5}, 3), w = random_floats({1, 1, 3, 3}, 4);
  Tensor zero = f32({1}, {0});
  Attributes attrs;
  attrs.set("auto_pad", std::string("SAME_LOWER"));
  attrs.set("strides", std::vector<int64_t>{2, 2});
  attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  // ceil(5 / 2) = 3 outputs; total padding (3 - 1) * 2 + 3 - 5 = 2 -> 1 and 1.
  Tensor y = eval1(make_node("Conv", attrs), {&x, &w});
  expect_close(y, direct_conv({{1, 1, 5, 5}, {1, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}}, x, w, zero));
  Tensor x6 = random_floats({1, 1, 6, 6}, 5);
  attrs.set("auto_pad", std::string("SAME_UPPER"));  // total padding 1: at the end
  expect_close(eval1(make_node("Conv", attrs), {&x6, &w}),
               direct_conv({{1, 1, 6, 6}, {1, 1, 3, 3}, {2, 2}, {1, 1}, {0, 0, 1, 1}}, x6, w, zero));
  attrs.set("auto_pad", std::string("SAME_LOWER"));  // total padding 1: at the beginning
  expect_close(eval1(make_node("Conv", attrs), {&x6, &w}),
               direct_conv({{1, 1, 6, 6}, {1, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1, 0, 0}}, x6, w, zero));
  attrs.set("auto_pad", std::string("VALID"));
  EXPECT_EQ(eval1(make_node("Conv", attrs), {&x6, &w}).shape(), (Shape{1, 1, 2, 2}));
  attrs.set("kernel_shape", std::vector<int64_t>{2, 2});
  EXPECT_THROW(eval1(make_node("Conv", attrs), {&x6, &w}), Error);
}

TEST(LinearOps, ConvErrors) {
  Tensor x = random_floats({1, 3, 5, 5}, 1), w = random_floats({2, 2, 3, 3}, 2);
  EXPECT_THROW(eval1(make_node("Conv"), {&x, &w}), Error);  // 3 channels vs 2
  Tensor xi = Tensor(DType::Int32, {1, 2, 5, 5}), wi = Tensor(DType::Int32, {2, 2, 3, 3});
  EXPECT_THROW(eval1(make_node("Conv"), {&xi, &wi}), Error);
  Tensor w5 = random_floats({1, 3, 7, 7}, 3);
  EXPECT_THROW(eval1(make_node("Conv"), {&x, &w5}), Error);  // kernel larger than the input
}

// The scatter definition: y[n, m, i * s + k * d - p] += x[n, c, i] * w[c, m', k].
Tensor direct_conv_transpose(const Tensor& x, const Tensor& w, Shape out, const std::vector<int64_t>& s,
                             const std::vector<int64_t>& d, const std::vector<int64_t>& p, int64_t group) {
  Tensor y(DType::Float32, out);
  size_t n = x.rank() - 2;
  int64_t cg = x.dim(1) / group, mg = w.dim(1);
  Shape kernel(w.shape().begin() + 2, w.shape().end());
  int64_t flat = 0;
  for_each_index(x.shape(), [&](const std::vector<int64_t>& i) {
    double xv = x.at_f64(flat++);
    for (int64_t m = 0; m < mg; ++m) {
      int64_t oc = (i[1] / cg) * mg + m;
      int64_t wflat = 0;
      for_each_index(kernel, [&](const std::vector<int64_t>& k) {
        int64_t wi = (i[1] * mg + m) * shape_numel(kernel) + wflat++;
        int64_t yi = i[0] * out[1] + oc;
        for (size_t a = 0; a < n; ++a) {
          int64_t pos = i[a + 2] * s[a] + k[a] * d[a] - p[a];
          if (pos < 0 || pos >= out[a + 2]) return;
          yi = yi * out[a + 2] + pos;
        }
        y.set_f64(yi, y.at_f64(yi) + xv * w.at_f64(wi));
      });
    }
  });
  return y;
}

TEST(LinearOps, ConvTransposeMatchesDirectImplementation) {
  Tensor x = random_floats({2, 4, 3, 4}, 7), w = random_floats({4, 3, 3, 2}, 8);
  Attributes attrs;
  attrs.set("strides", std::vector<int64_t>{2, 3});
  attrs.set("dilations", std::vector<int64_t>{1, 2});
  attrs.set("pads", std::vector<int64_t>{1, 0, 0, 2});
  attrs.set("output_padding", std::vector<int64_t>{1, 0});
  attrs.set("group", int64_t(2));
  // out = s * (in - 1) + output_padding + (k - 1) * d + 1 - pads: 2*2+1+3-1 = 7, 3*3+0+3-2 = 10.
  Tensor y = eval1(make_node("ConvTranspose", attrs), {&x, &w});
  expect_close(y, direct_conv_transpose(x, w, {2, 6, 7, 10}, {2, 3}, {1, 2}, {1, 0}, 2));
  Tensor b = f32({6}, {1, 2, 3, 4, 5, 6});
  Tensor yb = eval1(make_node("ConvTranspose", attrs), {&x, &w, &b});
  EXPECT_NEAR(yb.at_f64(7 * 10 * 5) - y.at_f64(7 * 10 * 5), 6.0, 1e-6);
}

TEST(LinearOps, ConvTransposeOutputShapeAndAutoPad) {
  // The ONNX node test convtranspose_autopad_same: SAME_UPPER puts the odd
  // padding at the end; output = input * stride.
  Tensor x = f32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  Tensor w = f32({1, 2, 3, 3}, std::vector<double>(18, 1.0));
  Attributes attrs;
  attrs.set("auto_pad", std::string("SAME_UPPER"));
  attrs.set("strides", std::vector<int64_t>{2, 2});
  Tensor y = eval1(make_node("ConvTranspose", attrs), {&x, &w});
  expect_close(y, direct_conv_transpose(x, w, {1, 2, 6, 6}, {2, 2}, {1, 1}, {0, 0}, 1));
  EXPECT_EQ(y.at_f64(2 * 6 + 2), 8.0);
  // output_shape larger than the natural size (9 x 7) extends at the end.
  Attributes shaped;
  shaped.set("output_shape", std::vector<int64_t>{10, 8});
  shaped.set("strides", std::vector<int64_t>{3, 2});
  Tensor y2 = eval1(make_node("ConvTranspose", shaped), {&x, &w});
  expect_close(y2, direct_conv_transpose(x, w, {1, 2, 10, 8}, {3, 2}, {1, 1}, {0, 0}, 1));
  // 1-D with explicit pads.
  Tensor x1 = random_floats({1, 2, 5}, 9), w1 = random_floats({2, 3, 4}, 10);
  Attributes pads;
  pads.set("pads", std::vector<int64_t>{2, 1});
  expect_close(eval1(make_node("ConvTranspose", pads), {&x1, &w1}),
               direct_conv_transpose(x1, w1, {1, 3, 5}, {1}, {1}, {2}, 1));
}

TEST(LinearOps, ConvInteger) {
  Tensor x = Tensor::from_vector(DType::UInt8, {1, 1, 3, 3}, std::vector<int>{2, 3, 4, 5, 6, 7, 8, 9, 10});
  Tensor w = Tensor::from_vector(DType::UInt8, {1, 1, 2, 2}, std::vector<int>{1, 1, 1, 1});
  Tensor zp = Tensor::from_vector(DType::UInt8, {}, std::vector<int>{1});
  Tensor y = eval1(make_node("ConvInteger"), {&x, &w, &zp});
  EXPECT_EQ(y.dtype(), DType::Int32);
  EXPECT_EQ(y.to_i64_vector(), (std::vector<int64_t>{12, 16, 24, 28}));
}

// ResNet-18's most expensive shape class: 1x64x56x56, 64 filters of 3x3,
// pads 1 (115.6 M multiply-adds). Prints the time; no assertion on it.
TEST(LinearOps, ConvResNetLayerTiming) {
  Tensor x = random_floats({1, 64, 56, 56}, 11), w = random_floats({64, 64, 3, 3}, 12);
  Tensor b = random_floats({64}, 13);
  Attributes attrs;
  attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Node node = make_node("Conv", attrs);
  auto start = std::chrono::steady_clock::now();
  Tensor y = eval1(node, {&x, &w, &b});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ timing ] Conv 1x64x56x56 * 64x64x3x3: %.3f s (%.2f GMAC/s)\n", seconds,
              64.0 * 64 * 9 * 56 * 56 / seconds * 1e-9);
  ASSERT_EQ(y.shape(), (Shape{1, 64, 56, 56}));
  // Spot-check one interior and one corner element.
  for (int64_t at : {int64_t(5 * 56 * 56 + 17 * 56 + 30), int64_t(63 * 56 * 56)}) {
    int64_t m = at / (56 * 56), oh = at / 56 % 56, ow = at % 56;
    double want = b.at_f64(m);
    for (int c = 0; c < 64; ++c)
      for (int kh = 0; kh < 3; ++kh)
        for (int kw = 0; kw < 3; ++kw) {
          int64_t ih = oh + kh - 1, iw = ow + kw - 1;
          if (ih < 0 || ih >= 56 || iw < 0 || iw >= 56) continue;
          want += x.at_f64((c * 56 + ih) * 56 + iw) * w.at_f64(((m * 64 + c) * 3 + kh) * 3 + kw);
        }
    EXPECT_NEAR(y.at_f64(at), want, 1e-4);
  }
}

// ---------------------------------------------------------------------------
// Einsum
// ---------------------------------------------------------------------------

Tensor einsum(const std::string& equation, const std::vector<const Tensor*>& inputs) {
  Attributes attrs;
  attrs.set("equation", equation);
  return eval1(make_node("Einsum", attrs), inputs);
}

TEST(LinearOps, EinsumBasics) {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = f32({3, 2}, {7, 8, 9, 10, 11, 12});
  expect_close(einsum("ij,jk->ik", {&a, &b}), f32({2, 2}, {58, 64, 139, 154}));
  expect_close(einsum("ij,jk", {&a, &b}), f32({2, 2}, {58, 64, 139, 154}));  // implicit output
  expect_close(einsum("ij->ji", {&a}), f32({3, 2}, {1, 4, 2, 5, 3, 6}));
  expect_close(einsum("ji", {&a}), f32({3, 2}, {1, 4, 2, 5, 3, 6}));  // implicit: sorted labels
  expect_close(einsum("ij->", {&a}), f32({}, {21}));
  expect_close(einsum("ij -> i", {&a}), f32({2}, {6, 15}));
  Tensor v = f32({2}, {1, 2}), u = f32({3}, {1, 10, 100});
  expect_close(einsum("i,j->ij", {&v, &u}), f32({2, 3}, {1, 10, 100, 2, 20, 200}));
  expect_close(einsum("i,i", {&v, &v}), f32({}, {5}));
}

TEST(LinearOps, EinsumDiagonalsAndEllipsis) {
  Tensor sq = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_close(einsum("ii", {&sq}), f32({}, {15}));         // trace
  expect_close(einsum("ii->i", {&sq}), f32({3}, {1, 5, 9}));  // diagonal
  Tensor batch = random_floats({2, 3, 3}, 5);
  Tensor diag = einsum("...ii ->...i", {&batch});
  ASSERT_EQ(diag.shape(), (Shape{2, 3}));
  EXPECT_EQ(diag.at_f64(4), batch.at_f64(9 + 4));
  // Batched matmul with broadcast ellipsis dimensions: [2, 1, 2, 3] x [3, 3, 2].
  Tensor a = random_floats({2, 1, 2, 3}, 6), b = random_floats({3, 3, 2}, 7);
  Tensor mm = eval1(make_node("MatMul"), {&a, &b});
  expect_close(einsum("...ij,...jk->...ik", {&a, &b}), mm);
  expect_close(einsum("...ij,...jk", {&a, &b}), mm);
  EXPECT_THROW(einsum("...ii->i", {&batch}), Error);  // ellipsis dimensions missing from the output
  EXPECT_THROW(einsum("ij,jk->ik", {&a, &b}), Error);  // rank mismatch
  EXPECT_THROW(einsum("ij,ij->ij", {&sq, &a}), Error);  // size mismatch
  EXPECT_THROW(einsum("i.j", {&sq}), Error);
}

TEST(LinearOps, EinsumIntegers) {
  Tensor a = Tensor::from_vector(DType::Int64, {2, 2}, std::vector<int64_t>{1, 2, 3, 4});
  Tensor y = einsum("ij,jk->ik", {&a, &a});
  EXPECT_EQ(y.dtype(), DType::Int64);
  EXPECT_EQ(y.to_i64_vector(), (std::vector<int64_t>{7, 10, 15, 22}));
}

}  // namespace
}  // namespace orchid::reference
