#include <gtest/gtest.h>

#include "reference/op_registry.h"
#include "support/error.h"

#include "op_test_util.h"

namespace orchid::reference {
namespace {

using namespace testing;

TEST(DetectionOps, NonMaxSuppression) {
  // Three boxes: 0 and 1 overlap heavily, 2 is apart.
  Tensor boxes = f32({1, 3, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 5, 1, 6});
  Tensor scores = f32({1, 1, 3}, {0.8f, 0.9f, 0.3f});
  Tensor max_out = Tensor::vector_i64({10});
  Tensor iou = f32({1}, {0.5f});
  Tensor thr = f32({1}, {0.0f});
  Tensor out = evaluate_node(make_node("NonMaxSuppression"), {&boxes, &scores, &max_out, &iou, &thr}).at(0);
  EXPECT_EQ(out.dtype(), DType::Int64);
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(out.to_i64_vector(), (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  // Score threshold 0.5 removes box 2; max 1 keeps only the best box.
  Tensor high = f32({1}, {0.5f});
  EXPECT_EQ(evaluate_node(make_node("NonMaxSuppression"), {&boxes, &scores, &max_out, &iou, &high}).at(0).dim(0), 1);
  // Without max_output_boxes_per_class nothing is selected.
  EXPECT_EQ(evaluate_node(make_node("NonMaxSuppression"), {&boxes, &scores}).at(0).shape(), (Shape{0, 3}));
}

TEST(DetectionOps, NonMaxSuppressionNeedsValues) {
  Node node = make_node("NonMaxSuppression");
  TensorType boxes{DType::Float32, {1, 3, 4}}, scores{DType::Float32, {1, 1, 3}};
  try {
    infer_node(node, {&boxes, &scores}, {nullptr, nullptr});
    FAIL() << "inferred a value-dependent shape without values";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("depends on the values"), std::string::npos) << e.what();
  }
}

TEST(DetectionOps, GridSampleIdentity) {
  // align_corners = 1 and a grid at the pixel centres reproduces the input.
  Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor grid = f32({1, 2, 2, 2}, {-1, -1, 1, -1, -1, 1, 1, 1});
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    Node node = make_node("GridSample");
    node.attrs.set("align_corners", int64_t(1));
    node.attrs.set("mode", std::string(mode));
    Tensor y = evaluate_node(node, {&x, &grid}).at(0);
    EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
    std::vector<double> v = y.to_f64_vector();
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(v[i], double(i + 1), 1e-6) << mode;
  }
  // The centre of the image averages all four pixels; far outside is 0 with
  // zeros padding and the corner pixel with border padding.
  Tensor probe = f32({1, 1, 2, 2}, {0, 0, 5, 5});
  Node node = make_node("GridSample");
  std::vector<double> v = evaluate_node(node, {&x, &probe}).at(0).to_f64_vector();
  EXPECT_NEAR(v[0], 2.5, 1e-6);
  EXPECT_NEAR(v[1], 0.0, 1e-6);
  node.attrs.set("padding_mode", std::string("border"));
  v = evaluate_node(node, {&x, &probe}).at(0).to_f64_vector();
  EXPECT_NEAR(v[1], 4.0, 1e-6);
}

TEST(DetectionOps, RoiAlignConstantImage) {
  Tensor x = f32({1, 1, 4, 4}, std::vector<float>(16, 2.0f));
  Tensor rois = f32({1, 4}, {0, 0, 3, 3});
  Tensor idx = Tensor::vector_i64({0});
  Node node = make_node("RoiAlign");
  node.attrs.set("output_height", int64_t(2));
  node.attrs.set("output_width", int64_t(2));
  Tensor y = evaluate_node(node, {&x, &rois, &idx}).at(0);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  for (double e : y.to_f64_vector()) EXPECT_NEAR(e, 2.0, 1e-6);
  Tensor bad = Tensor::vector_i64({1});
  EXPECT_THROW(evaluate_node(node, {&x, &rois, &bad}), Error);
}

}  // namespace
}  // namespace orchid::reference
