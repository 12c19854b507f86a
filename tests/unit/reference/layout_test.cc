#include <gtest/gtest.h>

#include <numeric>

#include "reference/op_registry.h"
#include "support/error.h"

#include "op_test_util.h"

namespace orchid::reference {
namespace {

using namespace testing;

TEST(LayoutOps, Reshape) {
  Tensor x = iota(DType::Float32, {2, 3, 4});
  Tensor shape = Tensor::vector_i64({0, -1, 2});
  Tensor y = eval1(make_node("Reshape"), {&x, &shape});
  EXPECT_EQ(y.shape(), (Shape{2, 6, 2}));
  EXPECT_EQ(y.at_f64(23), 23);
  Node allowzero = make_node("Reshape");
  allowzero.attrs.set("allowzero", int64_t(1));
  Tensor empty(DType::Float32, {0, 3});
  Tensor zero_shape = Tensor::vector_i64({3, 0});
  EXPECT_EQ(eval1(allowzero, {&empty, &zero_shape}).shape(), (Shape{3, 0}));
  Tensor bad = Tensor::vector_i64({5, -1});
  EXPECT_NE(error_of(make_node("Reshape"), {&x, &bad}).find("cannot reshape"), std::string::npos);
  Tensor two_inferred = Tensor::vector_i64({-1, -1});
  EXPECT_NE(error_of(make_node("Reshape"), {&x, &two_inferred}).find("more than one -1"),
            std::string::npos);
}

TEST(LayoutOps, ReshapeNeedsAConstantShape) {
  TensorType x{DType::Float32, {2, 3}};
  TensorType shape{DType::Int64, {1}};
  try {
    infer_node(make_node("Reshape"), {&x, &shape}, {nullptr, nullptr});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(shape) must be known"), std::string::npos) << e.what();
  }
}

TEST(LayoutOps, Transpose) {
  Tensor x = iota(DType::Int32, {2, 3});
  Tensor y = eval1(make_node("Transpose"), {&x});  // default: reversed axes
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(values_of(y), (V{0, 3, 1, 4, 2, 5}));
  Tensor z = iota(DType::Float16, {2, 3, 4});
  Node node = make_node("Transpose");
  node.attrs.set("perm", std::vector<int64_t>{1, 2, 0});
  Tensor t = eval1(node, {&z});
  EXPECT_EQ(t.shape(), (Shape{3, 4, 2}));
  EXPECT_EQ(t.at_f64(1), 12);  // t[0,0,1] = z[1,0,0]
  node.attrs.set("perm", std::vector<int64_t>{0, 0, 1});
  EXPECT_NE(error_of(node, {&z}).find("not a permutation"), std::string::npos);
}

TEST(LayoutOps, SqueezeUnsqueezeFlatten) {
  Tensor x = iota(DType::Float32, {1, 3, 1, 2});
  EXPECT_EQ(eval1(make_node("Squeeze"), {&x}).shape(), (Shape{3, 2}));
  Tensor axes = Tensor::vector_i64({-2});
  EXPECT_EQ(eval1(make_node("Squeeze"), {&x, &axes}).shape(), (Shape{1, 3, 2}));
  Tensor bad = Tensor::vector_i64({1});
  EXPECT_NE(error_of(make_node("Squeeze"), {&x, &bad}).find("cannot squeeze"), std::string::npos);
  Tensor y = iota(DType::Float32, {3, 4});
  Tensor un_axes = Tensor::vector_i64({3, 0});
  EXPECT_EQ(eval1(make_node("Unsqueeze"), {&y, &un_axes}).shape(), (Shape{1, 3, 4, 1}));
  Node flatten = make_node("Flatten");
  EXPECT_EQ(eval1(flatten, {&x}).shape(), (Shape{1, 6}));
  flatten.attrs.set("axis", int64_t(0));
  EXPECT_EQ(eval1(flatten, {&x}).shape(), (Shape{1, 6}));
  flatten.attrs.set("axis", int64_t(-1));
  EXPECT_EQ(eval1(flatten, {&x}).shape(), (Shape{3, 2}));
}

TEST(LayoutOps, Concat) {
  Tensor a = iota(DType::Int64, {2, 1});
  Tensor b = iota(DType::Int64, {2, 2});
  Tensor empty(DType::Int64, {2, 0});
  Node node = make_node("Concat");
  node.attrs.set("axis", int64_t(-1));
  Tensor y = eval1(node, {&a, &empty, &b});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values_of(y), (V{0, 0, 1, 1, 2, 3}));
  Tensor c = iota(DType::Int64, {3, 2});
  EXPECT_NE(error_of(node, {&a, &c}).find("incompatible"), std::string::npos);
}

TEST(LayoutOps, Split) {
  Tensor x = iota(DType::Float32, {7});
  Node node = make_node("Split");
  node.attrs.set("num_outputs", int64_t(3));  // opset 18: 3, 3, 1
  auto outs = evaluate_node(node, {&x});
  ASSERT_EQ(outs.size(), 3u);
  EXPECT_EQ(values_of(outs[2]), (V{6}));
  Tensor sizes = Tensor::vector_i64({2, 5});
  outs = evaluate_node(make_node("Split"), {&x, &sizes});
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(values_of(outs[1]), (V{2, 3, 4, 5, 6}));
  Node by_outputs = make_node("Split");  // opset < 18: the node's output count
  Tensor m = iota(DType::Float32, {2, 4});
  by_outputs.attrs.set("axis", int64_t(1));
  by_outputs.outputs = {0, 1};
  outs = evaluate_node(by_outputs, {&m});
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(values_of(outs[1]), (V{2, 3, 6, 7}));
}

TEST(LayoutOps, Slice) {
  Tensor x = iota(DType::Float32, {3, 4});
  Tensor starts = Tensor::vector_i64({-1, 100});
  Tensor ends = Tensor::vector_i64({INT64_MIN, 0});
  Tensor axes = Tensor::vector_i64({1, 0});
  Tensor steps = Tensor::vector_i64({-2, -1});
  // Axis 1 from 3 down to the start in steps of 2: 3, 1; axis 0 from 2 down to 1.
  Tensor y = eval1(make_node("Slice"), {&x, &starts, &ends, &axes, &steps});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(values_of(y), (V{11, 9, 7, 5}));
  Tensor s2 = Tensor::vector_i64({1});
  Tensor e2 = Tensor::vector_i64({1000});
  EXPECT_EQ(values_of(eval1(make_node("Slice"), {&x, &s2, &e2})), (V{4, 5, 6, 7, 8, 9, 10, 11}));
  Tensor zero = Tensor::vector_i64({0});
  EXPECT_NE(error_of(make_node("Slice"), {&x, &s2, &e2, &zero, &zero}).find("step cannot be 0"),
            std::string::npos);
}

TEST(LayoutOps, PadModes) {
  Tensor x = iota(DType::Float32, {3});  // 0 1 2
  Tensor pads = Tensor::vector_i64({2, 3});
  Tensor value = Tensor::scalar_f32(9);
  auto pad = [&](const std::string& mode, const std::vector<const Tensor*>& inputs) {
    Node node = make_node("Pad");
    node.attrs.set("mode", mode);
    return values_of(eval1(node, inputs));
  };
  EXPECT_EQ(pad("constant", {&x, &pads, &value}), (V{9, 9, 0, 1, 2, 9, 9, 9}));
  EXPECT_EQ(pad("constant", {&x, &pads}), (V{0, 0, 0, 1, 2, 0, 0, 0}));
  EXPECT_EQ(pad("edge", {&x, &pads}), (V{0, 0, 0, 1, 2, 2, 2, 2}));
  EXPECT_EQ(pad("reflect", {&x, &pads}), (V{2, 1, 0, 1, 2, 1, 0, 1}));
  EXPECT_EQ(pad("wrap", {&x, &pads}), (V{1, 2, 0, 1, 2, 0, 1, 2}));
  Tensor crop = Tensor::vector_i64({-1, 1});
  EXPECT_EQ(pad("wrap", {&x, &crop}), (V{1, 2, 1}));  // crop to [1 2] first, then wrap
}

TEST(LayoutOps, PadAxesAndCastConstant) {
  Tensor x = iota(DType::Int32, {2, 2});
  Tensor pads = Tensor::vector_i64({1, 0});
  Tensor value = Tensor::scalar_f32(7.0f);  // the importer's opset < 11 rewrite passes float32
  Tensor axes = Tensor::vector_i64({-1});
  Tensor y = eval1(make_node("Pad"), {&x, &pads, &value, &axes});
  EXPECT_EQ(y.dtype(), DType::Int32);
  EXPECT_EQ(values_of(y), (V{7, 0, 1, 7, 2, 3}));
}

TEST(LayoutOps, TileAndExpand) {
  Tensor x = iota(DType::Bool, {1, 2});
  Tensor repeats = Tensor::vector_i64({2, 2});
  Tensor y = eval1(make_node("Tile"), {&x, &repeats});
  EXPECT_EQ(y.shape(), (Shape{2, 4}));
  EXPECT_EQ(values_of(y), (V{0, 1, 0, 1, 0, 1, 0, 1}));
  Tensor z = iota(DType::Float32, {3, 1});
  Tensor shape = Tensor::vector_i64({2, 1, 2});
  Tensor e = eval1(make_node("Expand"), {&z, &shape});
  EXPECT_EQ(e.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(values_of(e), (V{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}));
}

TEST(LayoutOps, DepthToSpaceRoundTrip) {
  Tensor x = iota(DType::Float32, {1, 8, 2, 3});
  for (const char* mode : {"DCR", "CRD"}) {
    Node d2s = make_node("DepthToSpace");
    d2s.attrs.set("blocksize", int64_t(2));
    d2s.attrs.set("mode", std::string(mode));
    Tensor y = eval1(d2s, {&x});
    EXPECT_EQ(y.shape(), (Shape{1, 2, 4, 6}));
    V first_row = values_of(y);
    first_row.resize(4);
    if (std::string(mode) == "DCR") {
      // y[0,0,0,:] = x[0,0,0,0], x[0,2,0,0], x[0,0,0,1], x[0,2,0,1], ...
      EXPECT_EQ(first_row, (V{0, 12, 1, 13}));
      Node s2d = make_node("SpaceToDepth");
      s2d.attrs.set("blocksize", int64_t(2));
      EXPECT_EQ(values_of(eval1(s2d, {&y})), values_of(x));
    } else {
      EXPECT_EQ(first_row, (V{0, 6, 1, 7}));
    }
  }
}

TEST(LayoutOps, ReverseSequence) {
  Tensor x = iota(DType::Float32, {3, 2});  // [time, batch]
  Tensor lens = Tensor::vector_i64({3, 2});
  EXPECT_EQ(values_of(eval1(make_node("ReverseSequence"), {&x, &lens})), (V{4, 3, 2, 1, 0, 5}));
}

}  // namespace
}  // namespace orchid::reference
