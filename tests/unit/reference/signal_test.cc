#include <gtest/gtest.h>

#include "reference/op_registry.h"
#include "support/error.h"

#include "op_test_util.h"

namespace orchid::reference {
namespace {

using namespace testing;

TEST(SignalOps, Dft) {
  Tensor x = f32({1, 4, 1}, {1, 2, 3, 4});
  Tensor y = evaluate_node(make_node("DFT"), {&x}).at(0);
  EXPECT_EQ(y.shape(), (Shape{1, 4, 2}));
  expect_near(y, {10, 0, -2, 2, -2, 0, -2, -2});
  Node onesided = make_node("DFT");
  onesided.attrs.set("onesided", int64_t(1));
  Tensor half = evaluate_node(onesided, {&x}).at(0);
  EXPECT_EQ(half.shape(), (Shape{1, 3, 2}));
  // The inverse transform recovers the signal (as complex numbers).
  Node inverse = make_node("DFT");
  inverse.attrs.set("inverse", int64_t(1));
  expect_near(evaluate_node(inverse, {&y}).at(0), {1, 0, 2, 0, 3, 0, 4, 0});
  // dft_length pads with zeros.
  Tensor length = Tensor::scalar_i64(8);
  EXPECT_EQ(evaluate_node(make_node("DFT"), {&x, &length}).at(0).shape(), (Shape{1, 8, 2}));
  Node last = make_node("DFT");
  last.attrs.set("axis", int64_t(-1));
  EXPECT_THROW(evaluate_node(last, {&x}), Error);
}

TEST(SignalOps, Stft) {
  Tensor x = f32({1, 4, 1}, {1, 2, 3, 5});
  Tensor step = Tensor::scalar_i64(2);
  Tensor frame = Tensor::scalar_i64(2);
  Tensor y = evaluate_node(make_node("STFT"), {&x, &step, nullptr, &frame}).at(0);
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2, 2}));
  expect_near(y, {3, 0, -1, 0, 8, 0, -2, 0});
  Tensor window = f32({2}, {1, 0});
  expect_near(evaluate_node(make_node("STFT"), {&x, &step, &window}).at(0), {1, 0, 1, 0, 3, 0, 3, 0});
}

TEST(SignalOps, Windows) {
  Tensor four = Tensor::scalar_i64(4);
  expect_near(evaluate_node(make_node("HannWindow"), {&four}).at(0), {0, 0.5, 1, 0.5});
  Node symmetric = make_node("HannWindow");
  symmetric.attrs.set("periodic", int64_t(0));
  Tensor three = Tensor::scalar_i64(3);
  expect_near(evaluate_node(symmetric, {&three}).at(0), {0, 1, 0});
  expect_near(evaluate_node(make_node("HammingWindow"), {&four}).at(0),
              {4.0 / 46, 25.0 / 46, 1.0, 25.0 / 46});
  expect_near(evaluate_node(make_node("BlackmanWindow"), {&four}).at(0), {0, 0.34, 1, 0.34});
  Node as_double = make_node("HannWindow");
  as_double.attrs.set("output_datatype", int64_t(11));
  EXPECT_EQ(evaluate_node(as_double, {&four}).at(0).dtype(), DType::Float64);
}

TEST(SignalOps, Det) {
  Tensor x = f32({2, 2, 2}, {1, 2, 3, 4, 2, 0, 0, 3});
  Tensor y = evaluate_node(make_node("Det"), {&x}).at(0);
  EXPECT_EQ(y.shape(), (Shape{2}));
  expect_near(y, {-2, 6});
  Tensor m3 = f32({3, 3}, {0, 1, 2, 1, 0, 3, 4, -3, 8});
  expect_near(evaluate_node(make_node("Det"), {&m3}).at(0), {-2});
  Tensor bad = f32({2, 3}, {0, 0, 0, 0, 0, 0});
  EXPECT_THROW(evaluate_node(make_node("Det"), {&bad}), Error);
}

}  // namespace
}  // namespace orchid::reference
