#include <gtest/gtest.h>

#include "reference/op_registry.h"
#include "support/error.h"

#include "op_test_util.h"

namespace orchid::reference {
namespace {

using namespace testing;

// A Resize node with the given mode and coordinate_transformation_mode.
Node resize_node(const std::string& mode, const std::string& coordinates = "half_pixel") {
  return make_node("Resize", {{"mode", mode}, {"coordinate_transformation_mode", coordinates}});
}

TEST(ResizeOp, NearestUpsample) {
  Tensor x = make_tensor(DType::Float32, {1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor scales = make_tensor(DType::Float32, {4}, {1, 1, 2, 1.5});
  Tensor y = evaluate_node(resize_node("nearest"), {&x, nullptr, &scales}).at(0);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 4, 3}));
  // Columns: half_pixel x_original = (x + 0.5) / 1.5 - 0.5 = -1/6, 0.5, 7/6;
  // round_prefer_floor picks 0, 0, 1.
  expect_near(y, {1, 1, 2, 1, 1, 2, 3, 3, 4, 3, 3, 4});
}

TEST(ResizeOp, NearestAsymmetricFloorOnIntegers) {
  // The form the importer gives Upsample: asymmetric + floor.
  Tensor x = make_tensor(DType::Int64, {1, 3}, {7, 8, 9});
  Tensor scales = make_tensor(DType::Float32, {2}, {1, 2});
  Node node = resize_node("nearest", "asymmetric");
  node.attrs.set("nearest_mode", std::string("floor"));
  Tensor y = evaluate_node(node, {&x, nullptr, &scales}).at(0);
  EXPECT_EQ(y.dtype(), DType::Int64);
  expect_near(y, {7, 7, 8, 8, 9, 9});
}

TEST(ResizeOp, LinearHalfPixel) {
  Tensor x = make_tensor(DType::Float32, {1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor scales = make_tensor(DType::Float32, {4}, {1, 1, 2, 2});
  Tensor y = evaluate_node(resize_node("linear"), {&x, nullptr, &scales}).at(0);
  expect_near(y, {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4});
}

TEST(ResizeOp, LinearAlignCornersUsesTheUnroundedOutputWidth) {
  Tensor x = make_tensor(DType::Float32, {1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor scales = make_tensor(DType::Float32, {4}, {1, 1, 0.6f, 0.6f});
  Tensor y = evaluate_node(resize_node("linear", "align_corners"), {&x, nullptr, &scales}).at(0);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 1, 2}));
  expect_near(y, {1, 3.142857});  // the ONNX spec's example
}

TEST(ResizeOp, CubicKeepsConstantsAndIdentity) {
  Tensor x = make_tensor(DType::Float64, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor same = make_tensor(DType::Int64, {2}, {3, 3});
  expect_near(evaluate_node(resize_node("cubic"), {&x, nullptr, nullptr, &same}).at(0),
              {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor c = make_tensor(DType::Float32, {2, 2}, {5, 5, 5, 5});
  Tensor sizes = make_tensor(DType::Int64, {2}, {5, 3});
  Node node = resize_node("cubic");
  node.attrs.set("exclude_outside", int64_t(1));
  node.attrs.set("cubic_coeff_a", -0.5);
  expect_near(evaluate_node(node, {&c, nullptr, nullptr, &sizes}).at(0), V(15, 5.0));
}

TEST(ResizeOp, TfCropAndResizeExtrapolates) {
  Tensor x = make_tensor(DType::Float32, {4}, {0, 1, 2, 3});
  Tensor roi = make_tensor(DType::Float32, {2}, {0, 1.5});
  Tensor sizes = make_tensor(DType::Int64, {1}, {3});
  Node node = resize_node("linear", "tf_crop_and_resize");
  node.attrs.set("extrapolation_value", 10.0);
  // x_original = x * 1.5 * 3 / 2 = 0, 2.25, 4.5 (outside).
  expect_near(evaluate_node(node, {&x, &roi, nullptr, &sizes}).at(0), {0, 2.25, 10});
}

TEST(ResizeOp, AxesAndKeepAspectRatio) {
  Tensor x(DType::Float32, {1, 1, 2, 2});
  Tensor sizes = make_tensor(DType::Int64, {2}, {7, 8});
  Node node = resize_node("nearest");
  node.attrs.set("axes", std::vector<int64_t>{2, 3});
  node.attrs.set("keep_aspect_ratio_policy", std::string("not_larger"));
  EXPECT_EQ(evaluate_node(node, {&x, nullptr, nullptr, &sizes}).at(0).shape(), (Shape{1, 1, 7, 7}));
  node.attrs.set("keep_aspect_ratio_policy", std::string("not_smaller"));
  EXPECT_EQ(evaluate_node(node, {&x, nullptr, nullptr, &sizes}).at(0).shape(), (Shape{1, 1, 8, 8}));
}

TEST(ResizeOp, AntialiasLinearDownsample) {
  Tensor x = make_tensor(DType::Float32, {8}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor scales = make_tensor(DType::Float32, {1}, {0.5});
  Node node = resize_node("linear");
  node.attrs.set("antialias", int64_t(1));
  // A triangle filter twice as wide: weights 1/8, 3/8, 3/8, 1/8, edges clamped.
  expect_near(evaluate_node(node, {&x, nullptr, &scales}).at(0), {0.625, 2.5, 4.5, 6.375});
}

TEST(ResizeOp, Errors) {
  Tensor x(DType::Float32, {2, 2});
  Tensor scales = make_tensor(DType::Float32, {2}, {2, 2});
  Tensor sizes = make_tensor(DType::Int64, {2}, {4, 4});
  EXPECT_NE(
      error_of(resize_node("linear"), {&x, nullptr, &scales, &sizes}).find("exactly one of scales and sizes"),
      std::string::npos);
  EXPECT_NE(error_of(resize_node("linear"), {&x}).find("exactly one of scales and sizes"), std::string::npos);
  EXPECT_NE(error_of(resize_node("bilinear"), {&x, nullptr, &scales}).find("unknown mode"),
            std::string::npos);
  Tensor short_scales = make_tensor(DType::Float32, {1}, {2});
  EXPECT_NE(error_of(resize_node("linear"), {&x, nullptr, &short_scales}).find("expected 2"),
            std::string::npos);
}

}  // namespace
}  // namespace orchid::reference
