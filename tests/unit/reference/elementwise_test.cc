#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference/op_registry.h"
#include "support/error.h"

#include "op_test_util.h"

namespace orchid::reference {
namespace {

using namespace testing;

TEST(ElementwiseOps, UnaryMath) {
  Tensor x = f32({4}, {-1.5f, -0.5f, 0.5f, 2.5f});
  EXPECT_EQ(values_of(eval1(make_node("Abs"), {&x})), (V{1.5, 0.5, 0.5, 2.5}));
  EXPECT_EQ(values_of(eval1(make_node("Neg"), {&x})), (V{1.5, 0.5, -0.5, -2.5}));
  EXPECT_EQ(values_of(eval1(make_node("Floor"), {&x})), (V{-2, -1, 0, 2}));
  EXPECT_EQ(values_of(eval1(make_node("Ceil"), {&x})), (V{-1, -0.0, 1, 3}));
  // Round halves to even.
  EXPECT_EQ(values_of(eval1(make_node("Round"), {&x})), (V{-2, -0.0, 0, 2}));
  EXPECT_EQ(values_of(eval1(make_node("Sign"), {&x})), (V{-1, -1, 1, 1}));
  Tensor y = f32({2}, {0.0f, 1.0f});
  EXPECT_NEAR(eval1(make_node("Exp"), {&y}).at_f64(1), std::exp(1.0), 1e-6);
  EXPECT_NEAR(eval1(make_node("Erf"), {&y}).at_f64(1), std::erf(1.0), 1e-6);
  EXPECT_EQ(eval1(make_node("Reciprocal"), {&y}).at_f64(1), 1.0);
}

TEST(ElementwiseOps, UnaryIntegersAndErrors) {
  Tensor x = make_tensor(DType::Int8, {3}, std::vector<int>{-128, -3, 5});
  EXPECT_EQ(values_of(eval1(make_node("Abs"), {&x})), (V{-128, 3, 5}));  // wraps like two's complement
  EXPECT_EQ(values_of(eval1(make_node("Neg"), {&x})), (V{-128, 3, -5}));
  EXPECT_EQ(values_of(eval1(make_node("Sign"), {&x})), (V{-1, -1, 1}));
  EXPECT_EQ(values_of(eval1(make_node("BitwiseNot"), {&x})), (V{127, 2, -6}));
  try {
    eval1(make_node("Sqrt"), {&x});
    FAIL() << "Sqrt accepted int8";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected a float tensor for input 0 (X), got int8"), std::string::npos)
        << e.what();
  }
  Tensor u = make_tensor(DType::UInt8, {1}, std::vector<int>{3});
  EXPECT_THROW(eval1(make_node("Neg"), {&u}), Error);
}

TEST(ElementwiseOps, IsNaNIsInfNot) {
  float inf = std::numeric_limits<float>::infinity();
  Tensor x = f32({4}, {1.0f, std::nanf(""), inf, -inf});
  EXPECT_EQ(values_of(eval1(make_node("IsNaN"), {&x})), (V{0, 1, 0, 0}));
  EXPECT_EQ(values_of(eval1(make_node("IsInf"), {&x})), (V{0, 0, 1, 1}));
  Node neg = make_node("IsInf");
  neg.attrs.set("detect_positive", int64_t(0));
  EXPECT_EQ(values_of(eval1(neg, {&x})), (V{0, 0, 0, 1}));
  Tensor b = boolean({2}, {0, 1});
  EXPECT_EQ(values_of(eval1(make_node("Not"), {&b})), (V{1, 0}));
}

TEST(ElementwiseOps, BinaryBroadcast) {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor row = f32({3}, {10, 20, 30});
  Tensor col = f32({2, 1}, {100, 200});
  Tensor out = eval1(make_node("Add"), {&a, &row});
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(values_of(out), (V{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(values_of(eval1(make_node("Sub"), {&col, &a})), (V{99, 98, 97, 196, 195, 194}));
  Tensor outer = eval1(make_node("Mul"), {&col, &row});
  EXPECT_EQ(outer.shape(), (Shape{2, 3}));
  EXPECT_EQ(values_of(outer), (V{1000, 2000, 3000, 2000, 4000, 6000}));
  Tensor bad = f32({4}, {1, 2, 3, 4});
  EXPECT_THROW(eval1(make_node("Add"), {&a, &bad}), Error);
  Tensor ints = i32({2}, {1, 2});
  EXPECT_THROW(eval1(make_node("Add"), {&bad, &ints}), Error);  // mixed dtypes
}

TEST(ElementwiseOps, BroadcastMiddleAxis) {
  // [2,1,2] + [1,3,1]: exercises the row iteration with stride-0 inner runs.
  Tensor a = f32({2, 1, 2}, {1, 2, 3, 4});
  Tensor b = f32({1, 3, 1}, {10, 20, 30});
  Tensor out = eval1(make_node("Add"), {&a, &b});
  EXPECT_EQ(out.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(values_of(out), (V{11, 12, 21, 22, 31, 32, 13, 14, 23, 24, 33, 34}));
  Tensor s = f32({}, {5});
  EXPECT_EQ(values_of(eval1(make_node("Div"), {&b, &s})), (V{2, 4, 6}));
}

TEST(ElementwiseOps, IntegerDivisionAndMod) {
  Tensor a = i32({4}, {7, -7, 7, -7});
  Tensor b = i32({4}, {2, 2, -2, -2});
  EXPECT_EQ(values_of(eval1(make_node("Div"), {&a, &b})), (V{3, -3, -3, 3}));
  EXPECT_EQ(values_of(eval1(make_node("Mod"), {&a, &b})), (V{1, 1, -1, -1}));  // sign of divisor
  Node fmod = make_node("Mod");
  fmod.attrs.set("fmod", int64_t(1));
  EXPECT_EQ(values_of(eval1(fmod, {&a, &b})), (V{1, -1, 1, -1}));  // sign of dividend
  Tensor zero = i32({1}, {0});
  EXPECT_EQ(values_of(eval1(make_node("Div"), {&a, &zero})), (V{0, 0, 0, 0}));
  Tensor fa = f32({2}, {5.5f, -5.5f});
  Tensor fb = f32({2}, {2, 2});
  EXPECT_THROW(eval1(make_node("Mod"), {&fa, &fb}), Error);  // floats need fmod=1
  EXPECT_EQ(values_of(eval1(fmod, {&fa, &fb})), (V{1.5, -1.5}));
}

TEST(ElementwiseOps, PowMixedTypes) {
  Tensor base = i32({3}, {2, 3, -2});
  Tensor e = make_tensor(DType::Int64, {3}, std::vector<int>{10, 2, 3});
  Tensor out = eval1(make_node("Pow"), {&base, &e});
  EXPECT_EQ(out.dtype(), DType::Int32);
  EXPECT_EQ(values_of(out), (V{1024, 9, -8}));
  Tensor half = f32({1}, {0.5f});
  out = eval1(make_node("Pow"), {&base, &half});
  EXPECT_EQ(out.dtype(), DType::Int32);
  EXPECT_EQ(out.at_f64(0), 1.0);  // sqrt(2) truncated
  Tensor fbase = f32({2}, {4, 9});
  out = eval1(make_node("Pow"), {&fbase, &half});
  EXPECT_EQ(values_of(out), (V{2, 3}));
}

TEST(ElementwiseOps, BitShiftAndBitwise) {
  Tensor a = make_tensor(DType::UInt8, {3}, std::vector<int>{1, 255, 16});
  Tensor s = make_tensor(DType::UInt8, {3}, std::vector<int>{3, 1, 8});
  Node left = make_node("BitShift");
  left.attrs.set("direction", std::string("LEFT"));
  EXPECT_EQ(values_of(eval1(left, {&a, &s})), (V{8, 254, 0}));
  Node right = make_node("BitShift");
  right.attrs.set("direction", std::string("RIGHT"));
  EXPECT_EQ(values_of(eval1(right, {&a, &s})), (V{0, 127, 0}));
  EXPECT_THROW(eval1(make_node("BitShift"), {&a, &s}), Error);  // direction required
  EXPECT_EQ(values_of(eval1(make_node("BitwiseAnd"), {&a, &s})), (V{1, 1, 0}));
  EXPECT_EQ(values_of(eval1(make_node("BitwiseXor"), {&a, &s})), (V{2, 254, 24}));
}

TEST(ElementwiseOps, LogicAndCompare) {
  Tensor p = boolean({4}, {0, 0, 1, 1});
  Tensor q = boolean({4}, {0, 1, 0, 1});
  EXPECT_EQ(values_of(eval1(make_node("And"), {&p, &q})), (V{0, 0, 0, 1}));
  EXPECT_EQ(values_of(eval1(make_node("Or"), {&p, &q})), (V{0, 1, 1, 1}));
  EXPECT_EQ(values_of(eval1(make_node("Xor"), {&p, &q})), (V{0, 1, 1, 0}));
  Tensor a = i32({3}, {1, 2, 3});
  Tensor two = i32({}, {2});
  Tensor less = eval1(make_node("Less"), {&a, &two});
  EXPECT_EQ(less.dtype(), DType::Bool);
  EXPECT_EQ(values_of(less), (V{1, 0, 0}));
  EXPECT_EQ(values_of(eval1(make_node("LessOrEqual"), {&a, &two})), (V{1, 1, 0}));
  EXPECT_EQ(values_of(eval1(make_node("Greater"), {&a, &two})), (V{0, 0, 1}));
  EXPECT_EQ(values_of(eval1(make_node("GreaterOrEqual"), {&a, &two})), (V{0, 1, 1}));
  EXPECT_EQ(values_of(eval1(make_node("Equal"), {&a, &two})), (V{0, 1, 0}));
  EXPECT_THROW(eval1(make_node("And"), {&a, &a}), Error);
}

TEST(ElementwiseOps, Variadic) {
  Tensor a = f32({2}, {1, 6});
  Tensor b = f32({1}, {3});
  Tensor c = f32({2, 1}, {0, 9});
  EXPECT_EQ(values_of(eval1(make_node("Sum"), {&a, &b, &c})), (V{4, 9, 13, 18}));
  EXPECT_EQ(values_of(eval1(make_node("Mean"), {&a, &b})), (V{2, 4.5}));
  EXPECT_EQ(values_of(eval1(make_node("Max"), {&a, &b})), (V{3, 6}));
  EXPECT_EQ(values_of(eval1(make_node("Min"), {&a, &b, &c})), (V{0, 0, 1, 3}));
  EXPECT_EQ(values_of(eval1(make_node("Max"), {&a})), (V{1, 6}));
  Tensor n = f32({2}, {std::nanf(""), 1});
  Tensor m = eval1(make_node("Max"), {&a, &n});
  EXPECT_TRUE(std::isnan(m.at_f64(0)));  // NaN propagates like numpy.maximum
  EXPECT_TRUE(std::isnan(eval1(make_node("Min"), {&n, &a}).at_f64(0)));
}

TEST(ElementwiseOps, WhereAndClip) {
  Tensor cond = boolean({2, 1}, {1, 0});
  Tensor x = i32({2}, {1, 2});
  Tensor y = i32({}, {-1});
  Tensor out = eval1(make_node("Where"), {&cond, &x, &y});
  EXPECT_EQ(out.shape(), (Shape{2, 2}));
  EXPECT_EQ(values_of(out), (V{1, 2, -1, -1}));

  Tensor v = f32({4}, {-5, 0, 5, std::nanf("")});
  Tensor lo = f32({}, {-1});
  Tensor hi = f32({}, {1});
  Tensor clipped = eval1(make_node("Clip"), {&v, &lo, &hi});
  EXPECT_EQ(clipped.at_f64(0), -1);
  EXPECT_EQ(clipped.at_f64(2), 1);
  EXPECT_TRUE(std::isnan(clipped.at_f64(3)));
  EXPECT_EQ(values_of(eval1(make_node("Clip"), {&v, nullptr, &hi})).at(0), -5);
  EXPECT_EQ(values_of(eval1(make_node("Clip"), {&v})).at(2), 5);
  Tensor i8 = make_tensor(DType::Int8, {3}, std::vector<int>{-100, 0, 100});
  Tensor i8max = make_tensor(DType::Int8, {}, std::vector<int>{50});
  EXPECT_EQ(values_of(eval1(make_node("Clip"), {&i8, nullptr, &i8max})), (V{-100, 0, 50}));
  Tensor vec = f32({2}, {0, 1});
  EXPECT_THROW(eval1(make_node("Clip"), {&v, &vec}), Error);  // min must be a scalar
}

TEST(ElementwiseOps, CastAndCastLike) {
  Tensor x = f32({3}, {1.7f, -1.7f, 0.0f});
  Node cast = make_node("Cast");
  cast.attrs.set("to", int64_t(6));  // INT32
  Tensor out = eval1(cast, {&x});
  EXPECT_EQ(out.dtype(), DType::Int32);
  EXPECT_EQ(values_of(out), (V{1, -1, 0}));
  cast.attrs.set("to", int64_t(10));  // FLOAT16
  EXPECT_EQ(eval1(cast, {&x}).dtype(), DType::Float16);
  cast.attrs.set("to", int64_t(8));  // STRING
  try {
    eval1(cast, {&x});
    FAIL() << "Cast to string accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("string"), std::string::npos) << e.what();
  }
  Tensor like = boolean({}, {0});
  out = eval1(make_node("CastLike"), {&x, &like});
  EXPECT_EQ(out.dtype(), DType::Bool);
  EXPECT_EQ(values_of(out), (V{1, 1, 0}));
}

TEST(ElementwiseOps, HalfComputesThroughFloat) {
  Tensor a = make_tensor(DType::Float16, {2}, std::vector<float>{1.0f, 2048.0f});
  Tensor b = make_tensor(DType::Float16, {2}, std::vector<float>{0.5f, 1.0f});
  Tensor out = eval1(make_node("Add"), {&a, &b});
  EXPECT_EQ(out.dtype(), DType::Float16);
  // 2049 is not representable in half precision: rounds to even (2048).
  EXPECT_EQ(values_of(out), (V{1.5, 2048}));
}

}  // namespace
}  // namespace orchid::reference
