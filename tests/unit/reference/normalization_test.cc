#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "reference/op_registry.h"
#include "support/error.h"

#include "op_test_util.h"

namespace orchid::reference {
namespace {

using namespace testing;

TEST(SoftmaxOps, DefaultAxisAndLargeNumbers) {
  Node node = make_node("Softmax");
  Tensor x = f32({2, 3}, {1, 2, 3, 1000, 1001, 1002});
  double e1 = std::exp(-2.0), e2 = std::exp(-1.0), s = e1 + e2 + 1;
  expect_near(evaluate_node(node, {&x})[0], {e1 / s, e2 / s, 1 / s, e1 / s, e2 / s, 1 / s});
  node.op = "LogSoftmax";
  double ls = std::log(s);
  expect_near(evaluate_node(node, {&x})[0], {-2 - ls, -1 - ls, -ls, -2 - ls, -1 - ls, -ls});
}

TEST(SoftmaxOps, AxisZeroAndLegacy2d) {
  Node node = make_node("Softmax");
  node.attrs.set("axis", int64_t(0));
  Tensor x = f32({2, 2}, {0, 0, 0, std::log(3.0f)});
  expect_near(evaluate_node(node, {&x})[0], {0.5, 0.25, 0.5, 0.75});
  // Before opset 13: coerced to 2-D at axis 1, i.e. [1, 4] here.
  Node legacy = make_node("Softmax");
  legacy.attrs.set("_legacy_2d", int64_t(1));
  Tensor y = f32({1, 2, 2}, {0, 0, 0, 0});
  Tensor out = evaluate_node(legacy, {&y})[0];
  EXPECT_EQ(out.shape(), (Shape{1, 2, 2}));
  expect_near(out, {0.25, 0.25, 0.25, 0.25});
}

TEST(SoftmaxOps, HardmaxFirstMaximumWins) {
  Node node = make_node("Hardmax");
  Tensor x = f32({2, 3}, {1, 3, 3, -1, -2, -3});
  expect_near(evaluate_node(node, {&x})[0], {0, 1, 0, 1, 0, 0});
}

TEST(SoftmaxOps, RejectsIntegers) {
  Node node = make_node("Softmax");
  Tensor x(DType::Int64, {2});
  try {
    evaluate_node(node, {&x});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("expected a float tensor for input 0 (input), got int64"),
              std::string::npos)
        << error.what();
  }
}

TEST(LayerNormOp, OutputsAndBroadcastParams) {
  Node node = make_node("LayerNormalization");
  node.attrs.set("epsilon", 0.0);
  Tensor x = f32({2, 2}, {1, 3, 2, 2});
  Tensor scale = f32({2}, {1, 2});
  Tensor bias = f32({1}, {10});
  auto out = evaluate_node(node, {&x, &scale, &bias});
  ASSERT_EQ(out.size(), 3u);
  // Row 0: mean 2, std 1. Row 1: variance 0 -> 0/0 with epsilon 0; use row 0 only.
  EXPECT_NEAR(out[0].at_f64(0), 9.0, 1e-6);
  EXPECT_NEAR(out[0].at_f64(1), 12.0, 1e-6);
  EXPECT_EQ(out[1].shape(), (Shape{2, 1}));
  EXPECT_EQ(out[1].dtype(), DType::Float32);
  EXPECT_NEAR(out[1].at_f64(0), 2.0, 1e-6);
  EXPECT_NEAR(out[2].at_f64(0), 1.0, 1e-6);
  node.attrs.set("epsilon", 1e-5);
  node.attrs.set("axis", int64_t(0));
  Tensor ones = f32({2, 2}, {1, 1, 1, 1});
  out = evaluate_node(node, {&x, &ones});
  EXPECT_EQ(out[1].shape(), (Shape{1, 1}));
  EXPECT_NEAR(out[1].at_f64(0), 2.0, 1e-6);
}

TEST(BatchNormOp, InferenceAndTrainingRejected) {
  Node node = make_node("BatchNormalization");
  Tensor x = f32({1, 2, 1, 2}, {1, 2, 3, 4});
  Tensor scale = f32({2}, {1, 2}), bias = f32({2}, {0, 1}), mean = f32({2}, {1, 3}), var = f32({2}, {4, 1});
  node.attrs.set("epsilon", 0.0);
  expect_near(evaluate_node(node, {&x, &scale, &bias, &mean, &var})[0], {0, 0.5, 1, 3});
  node.attrs.set("training_mode", int64_t(1));
  try {
    evaluate_node(node, {&x, &scale, &bias, &mean, &var});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("training mode is not supported"), std::string::npos);
  }
}

TEST(InstanceNormOp, PerInstanceChannel) {
  Node node = make_node("InstanceNormalization");
  node.attrs.set("epsilon", 0.0);
  Tensor x = f32({1, 2, 2}, {1, 3, 10, 20});
  Tensor scale = f32({2}, {1, 2}), bias = f32({2}, {0, 1});
  expect_near(evaluate_node(node, {&x, &scale, &bias})[0], {-1, 1, -1, 3});
}

TEST(GroupNormOp, PerChannelAndPerGroupAffine) {
  Node node = make_node("GroupNormalization");
  node.attrs.set("epsilon", 0.0);
  node.attrs.set("num_groups", int64_t(1));
  Tensor x = f32({1, 2, 1}, {1, 3});
  Tensor scale = f32({2}, {1, 2}), bias = f32({2}, {0, 1});
  expect_near(evaluate_node(node, {&x, &scale, &bias})[0], {-1, 3});
  node.attrs.set("_per_group_affine", int64_t(1));
  Tensor gscale = f32({1}, {2}), gbias = f32({1}, {1});
  expect_near(evaluate_node(node, {&x, &gscale, &gbias})[0], {-1, 3});
  EXPECT_THROW(evaluate_node(node, {&x, &scale, &bias}), Error);
}

TEST(LpNormOp, L1L2AndZero) {
  Node node = make_node("LpNormalization");
  Tensor x = f32({2, 2}, {3, 4, 0, 0});
  expect_near(evaluate_node(node, {&x})[0], {0.6, 0.8, 0, 0});
  node.attrs.set("p", int64_t(1));
  node.attrs.set("axis", int64_t(0));
  expect_near(evaluate_node(node, {&x})[0], {1, 1, 0, 0});
}

TEST(LrnOp, WindowOverChannels) {
  Node node = make_node("LRN");
  node.attrs.set("size", int64_t(3));
  node.attrs.set("alpha", 3.0);
  node.attrs.set("beta", 1.0);
  node.attrs.set("bias", 1.0);
  Tensor x = f32({1, 3, 1}, {1, 2, 3});
  // c=0: window {0,1} -> 1/(1+5); c=1: {0,1,2} -> 2/(1+14); c=2: {1,2} -> 3/(1+13).
  expect_near(evaluate_node(node, {&x})[0], {1.0 / 6, 2.0 / 15, 3.0 / 14});
}

TEST(MvnOp, DefaultAxes) {
  Node node = make_node("MeanVarianceNormalization");
  Tensor x = f32({2, 1, 1, 1}, {1, 3});
  expect_near(evaluate_node(node, {&x})[0], {-1, 1}, 1e-6);
  node.attrs.set("axes", std::vector<int64_t>{1});
  expect_near(evaluate_node(node, {&x})[0], {0, 0}, 1e-6);
}

}  // namespace
}  // namespace orchid::reference
