#include <gtest/gtest.h>

#include "reference/op_registry.h"
#include "support/error.h"

#include "op_test_util.h"

namespace orchid::reference {
namespace {

using namespace testing;

TEST(QuantizeOps, QuantizeLinearRoundsHalfToEvenAndSaturates) {
  Tensor x = f32({6}, {0.5f, 1.5f, 2.5f, -1, 300, -300});
  Tensor scale = Tensor::scalar_f32(1.0f);
  Tensor zp_u8(DType::UInt8, {});
  Tensor y = evaluate_node(make_node("QuantizeLinear"), {&x, &scale, &zp_u8}).at(0);
  EXPECT_EQ(y.dtype(), DType::UInt8);
  EXPECT_EQ(values_of(y), (V{0, 2, 2, 0, 255, 0}));
  Tensor zp_i8(DType::Int8, {});
  y = evaluate_node(make_node("QuantizeLinear"), {&x, &scale, &zp_i8}).at(0);
  EXPECT_EQ(y.dtype(), DType::Int8);
  EXPECT_EQ(values_of(y), (V{0, 2, 2, -1, 127, -128}));
  // No zero point: uint8.
  EXPECT_EQ(evaluate_node(make_node("QuantizeLinear"), {&x, &scale}).at(0).dtype(), DType::UInt8);
}

TEST(QuantizeOps, PerAxis) {
  Tensor x = f32({2, 2}, {1, 1, 1, 1});
  Tensor scale = f32({2}, {1, 0.5f});
  Tensor zp = Tensor::from_vector(DType::UInt8, {2}, std::vector<int>{0, 10});
  Tensor y = evaluate_node(make_node("QuantizeLinear"), {&x, &scale, &zp}).at(0);
  EXPECT_EQ(values_of(y), (V{1, 12, 1, 12}));
  Node axis0 = make_node("QuantizeLinear");
  axis0.attrs.set("axis", int64_t(0));
  EXPECT_EQ(values_of(evaluate_node(axis0, {&x, &scale, &zp}).at(0)), (V{1, 1, 12, 12}));
  Tensor back = evaluate_node(make_node("DequantizeLinear"), {&y, &scale, &zp}).at(0);
  EXPECT_EQ(back.dtype(), DType::Float32);
  EXPECT_EQ(values_of(back), (V{1, 1, 1, 1}));
  Tensor bad_scale = f32({3}, {1, 1, 1});
  EXPECT_THROW(evaluate_node(make_node("QuantizeLinear"), {&x, &bad_scale}), Error);
}

TEST(QuantizeOps, Dequantize) {
  Tensor x = Tensor::from_vector(DType::UInt8, {3}, std::vector<int>{0, 128, 255});
  Tensor scale = Tensor::scalar_f32(0.5f);
  Tensor zp = Tensor::from_vector(DType::UInt8, {}, std::vector<int>{128});
  EXPECT_EQ(values_of(evaluate_node(make_node("DequantizeLinear"), {&x, &scale, &zp}).at(0)), (V{-64, 0, 63.5}));
}

TEST(QuantizeOps, DynamicQuantize) {
  Tensor x = f32({3}, {0, 1.28f, 2.55f});
  auto out = evaluate_node(make_node("DynamicQuantizeLinear"), {&x});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_NEAR(out[1].at_f64(0), 0.01, 1e-7);
  EXPECT_EQ(out[2].at_i64(0), 0);
  EXPECT_EQ(values_of(out[0]), (V{0, 128, 255}));
}

TEST(QuantizeOps, QLinearMatMul) {
  Tensor a = Tensor::from_vector(DType::UInt8, {1, 2}, std::vector<int>{2, 4});
  Tensor b = Tensor::from_vector(DType::UInt8, {2, 1}, std::vector<int>{1, 1});
  Tensor half = Tensor::scalar_f32(0.5f), one = Tensor::scalar_f32(1.0f);
  Tensor zero(DType::UInt8, {});
  Tensor ten = Tensor::from_vector(DType::UInt8, {}, std::vector<int>{10});
  Tensor y = evaluate_node(make_node("QLinearMatMul"), {&a, &half, &zero, &b, &one, &zero, &one, &ten}).at(0);
  EXPECT_EQ(y.shape(), (Shape{1, 1}));
  EXPECT_EQ(values_of(y), (V{13}));
}

}  // namespace
}  // namespace orchid::reference
