#include <gtest/gtest.h>

#include <cmath>

#include "reference/op_registry.h"
#include "support/error.h"

#include "op_test_util.h"

namespace orchid::reference {
namespace {

using namespace testing;

// A loss node with the given reduction attribute.
Node loss_node(const std::string& op, const std::string& reduction) {
  return make_node(op, {{"reduction", reduction}});
}


TEST(LossOps, NegativeLogLikelihood) {
  // input [N=2, C=3], target [2].
  Tensor x = f32({2, 3}, {-1, -2, -3, -4, -5, -6});
  Tensor t = i64({2}, {2, 0});
  Tensor none = evaluate_node(loss_node("NegativeLogLikelihoodLoss", "none"), {&x, &t}).at(0);
  EXPECT_EQ(none.shape(), (Shape{2}));
  EXPECT_EQ(none.to_f64_vector(), (std::vector<double>{3, 4}));
  EXPECT_DOUBLE_EQ(evaluate_node(loss_node("NegativeLogLikelihoodLoss", "sum"), {&x, &t}).at(0).at_f64(0), 7);
  EXPECT_DOUBLE_EQ(evaluate_node(loss_node("NegativeLogLikelihoodLoss", "mean"), {&x, &t}).at(0).at_f64(0), 3.5);
  // Weighted mean divides by the sum of the gathered weights.
  Tensor w = f32({3}, {1, 1, 3});
  Tensor mean_w = evaluate_node(loss_node("NegativeLogLikelihoodLoss", "mean"), {&x, &t, &w}).at(0);
  EXPECT_EQ(mean_w.shape(), Shape{});
  EXPECT_DOUBLE_EQ(mean_w.at_f64(0), (3 * 3 + 4 * 1) / 4.0);
  // ignore_index drops a position from both the sum and the weights.
  Node ignore = loss_node("NegativeLogLikelihoodLoss", "mean");
  ignore.attrs.set("ignore_index", int64_t(0));
  EXPECT_DOUBLE_EQ(evaluate_node(ignore, {&x, &t, &w}).at(0).at_f64(0), 3);
  Tensor bad = i64({2}, {3, 0});
  EXPECT_THROW(evaluate_node(loss_node("NegativeLogLikelihoodLoss", "none"), {&x, &bad}), Error);
}

TEST(LossOps, NegativeLogLikelihoodSpatial) {
  // input [1, 2, 2] (N, C, d1), target [1, 2].
  Tensor x = f32({1, 2, 2}, {-1, -2, -3, -4});
  Tensor t = i64({1, 2}, {1, 0});
  Tensor none = evaluate_node(loss_node("NegativeLogLikelihoodLoss", "none"), {&x, &t}).at(0);
  EXPECT_EQ(none.shape(), (Shape{1, 2}));
  EXPECT_EQ(none.to_f64_vector(), (std::vector<double>{3, 2}));
  Tensor wrong = i64({1, 3}, {0, 0, 0});
  EXPECT_THROW(evaluate_node(loss_node("NegativeLogLikelihoodLoss", "none"), {&x, &wrong}), Error);
}

TEST(LossOps, SoftmaxCrossEntropy) {
  Tensor x = f32({1, 2}, {0, 0});
  Tensor t = i64({1}, {1});
  auto out = evaluate_node(loss_node("SoftmaxCrossEntropyLoss", "mean"), {&x, &t});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NEAR(out[0].at_f64(0), std::log(2.0), 1e-6);
  EXPECT_EQ(out[1].shape(), (Shape{1, 2}));
  EXPECT_NEAR(out[1].at_f64(0), -std::log(2.0), 1e-6);
  Node bad = loss_node("SoftmaxCrossEntropyLoss", "average");
  EXPECT_THROW(evaluate_node(bad, {&x, &t}), Error);
}

}  // namespace
}  // namespace orchid::reference
