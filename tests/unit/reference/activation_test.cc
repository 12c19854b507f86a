#include <gtest/gtest.h>

#include <cmath>

#include "reference/op_registry.h"
#include "support/error.h"

#include "op_test_util.h"

namespace orchid::reference {
namespace {

using namespace testing;

const Tensor kX = f32({5}, {-3, -1, 0, 1, 3});

TEST(ActivationOps, ReluFamily) {
  expect_near(eval1(make_node("Relu"), {&kX}), {0, 0, 0, 1, 3}, 1e-6);
  Node leaky = make_node("LeakyRelu");
  leaky.attrs.set("alpha", 0.1);
  expect_near(eval1(leaky, {&kX}), {-0.3, -0.1, 0, 1, 3}, 1e-6);
  expect_near(eval1(make_node("ThresholdedRelu"), {&kX}), {0, 0, 0, 0, 3}, 1e-6);
  Tensor ints = Tensor::from_vector(DType::Int32, {2}, std::vector<int>{-2, 2});
  expect_near(eval1(make_node("Relu"), {&ints}), {0, 2}, 1e-6);
  EXPECT_THROW(eval1(make_node("Sigmoid"), {&ints}), Error);
}

TEST(ActivationOps, ExponentialFamily) {
  expect_near(eval1(make_node("Elu"), {&kX}), {std::exp(-3.0) - 1, std::exp(-1.0) - 1, 0, 1, 3}, 1e-6);
  double a = 1.67326319217681884765625, g = 1.05070102214813232421875;
  expect_near(eval1(make_node("Selu"), {&kX}),
              {g * a * (std::exp(-3.0) - 1), g * a * (std::exp(-1.0) - 1), 0, g, 3 * g}, 1e-6);
  Node celu = make_node("Celu");
  celu.attrs.set("alpha", 2.0);
  expect_near(eval1(celu, {&kX}), {2 * (std::exp(-1.5) - 1), 2 * (std::exp(-0.5) - 1), 0, 1, 3}, 1e-6);
  expect_near(eval1(make_node("Sigmoid"), {&kX}), {1 / (1 + std::exp(3.0)), 1 / (1 + std::exp(1.0)), 0.5,
                                                    1 / (1 + std::exp(-1.0)), 1 / (1 + std::exp(-3.0))}, 1e-6);
  expect_near(eval1(make_node("Softplus"), {&kX}), {std::log1p(std::exp(-3.0)), std::log1p(std::exp(-1.0)),
                                                     std::log(2.0), std::log1p(std::exp(1.0)),
                                                     std::log1p(std::exp(3.0))}, 1e-6);
  Tensor big = f32({2}, {-200, 200});
  expect_near(eval1(make_node("Softplus"), {&big}), {0, 200}, 1e-6);  // no overflow
  expect_near(eval1(make_node("Sigmoid"), {&big}), {0, 1}, 1e-6);
  double sp1 = std::log1p(std::exp(1.0));
  EXPECT_NEAR(values_of(eval1(make_node("Mish"), {&kX})).at(3), std::tanh(sp1), 1e-6);
}

TEST(ActivationOps, HardAndSoft) {
  expect_near(eval1(make_node("HardSigmoid"), {&kX}), {0, 0.3, 0.5, 0.7, 1}, 1e-6);
  expect_near(eval1(make_node("HardSwish"), {&kX}), {0, -1.0 / 3, 0, 2.0 / 3, 3}, 1e-6);
  expect_near(eval1(make_node("Softsign"), {&kX}), {-0.75, -0.5, 0, 0.5, 0.75}, 1e-6);
  expect_near(eval1(make_node("Tanh"), {&kX}),
              {std::tanh(-3.0), std::tanh(-1.0), 0, std::tanh(1.0), std::tanh(3.0)}, 1e-6);
  Node shrink = make_node("Shrink");
  shrink.attrs.set("lambd", 1.5);
  shrink.attrs.set("bias", 1.5);
  expect_near(eval1(shrink, {&kX}), {-1.5, 0, 0, 0, 1.5}, 1e-6);
}

TEST(ActivationOps, Gelu) {
  expect_near(eval1(make_node("Gelu"), {&kX}),
              {-3 * 0.5 * std::erfc(3 / std::sqrt(2.0)), -0.5 * std::erfc(1 / std::sqrt(2.0)), 0,
               0.5 * (1 + std::erf(1 / std::sqrt(2.0))), 1.5 * (1 + std::erf(3 / std::sqrt(2.0)))},
              1e-6);
  Node tanh = make_node("Gelu");
  tanh.attrs.set("approximate", std::string("tanh"));
  double t1 = 0.5 * (1 + std::tanh(std::sqrt(2 / M_PI) * (1 + 0.044715)));
  EXPECT_NEAR(values_of(eval1(tanh, {&kX})).at(3), t1, 1e-6);
  Node bad = make_node("Gelu");
  bad.attrs.set("approximate", std::string("fast"));
  EXPECT_THROW(eval1(bad, {&kX}), Error);
}

TEST(ActivationOps, PReluBroadcastsSlope) {
  Tensor x = f32({2, 2}, {-1, 1, -2, 2});
  Tensor slope = f32({2, 1}, {0.5, 0.25});
  expect_near(eval1(make_node("PRelu"), {&x, &slope}), {-0.5, 1, -0.5, 2}, 1e-6);
  Tensor wide = f32({3, 2, 2}, std::vector<float>(12, 1.0f));
  EXPECT_THROW(eval1(make_node("PRelu"), {&x, &wide}), Error);  // slope must broadcast to X
}

TEST(ActivationOps, Float16) {
  Tensor x = Tensor::from_vector(DType::Float16, {2}, std::vector<float>{-1, 2});
  auto out = evaluate_node(make_node("Sigmoid"), {&x}).at(0);
  EXPECT_EQ(out.dtype(), DType::Float16);
  EXPECT_NEAR(out.at_f64(1), 1 / (1 + std::exp(-2.0)), 1e-3);
}

}  // namespace
}  // namespace orchid::reference
