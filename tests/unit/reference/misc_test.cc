#include <gtest/gtest.h>

#include "reference/op_registry.h"
#include "support/error.h"

#include "op_test_util.h"

namespace orchid::reference {
namespace {

using namespace testing;

TEST(MiscOps, IdentityAndDropout) {
  Tensor x = Tensor::from_vector(DType::Float32, {3}, std::vector<float>{1, 2, 3});
  EXPECT_EQ(values_of(evaluate_node(make_node("Identity"), {&x}).at(0)), (V{1, 2, 3}));
  Tensor ratio = Tensor::scalar_f32(0.3f);
  auto out = evaluate_node(make_node("Dropout"), {&x, &ratio});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(values_of(out[0]), (V{1, 2, 3}));
  EXPECT_EQ(out[1].dtype(), DType::Bool);
  EXPECT_EQ(values_of(out[1]), (V{1, 1, 1}));
  Tensor training = Tensor::from_vector(DType::Bool, {}, std::vector<int>{1});
  try {
    evaluate_node(make_node("Dropout"), {&x, &ratio, &training});
    FAIL() << "training mode accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("training mode is not supported"), std::string::npos) << e.what();
  }
  Tensor zero = Tensor::scalar_f32(0.0f);
  EXPECT_EQ(values_of(evaluate_node(make_node("Dropout"), {&x, &zero, &training}).at(0)), (V{1, 2, 3}));
}

TEST(MiscOps, ShapeAndSize) {
  Tensor x(DType::Float32, {2, 3, 4, 5});
  EXPECT_EQ(values_of(evaluate_node(make_node("Shape"), {&x}).at(0)), (V{2, 3, 4, 5}));
  Node sliced = make_node("Shape");
  sliced.attrs.set("start", int64_t(1));
  sliced.attrs.set("end", int64_t(-1));
  EXPECT_EQ(values_of(evaluate_node(sliced, {&x}).at(0)), (V{3, 4}));
  sliced.attrs.set("start", int64_t(-10));
  sliced.attrs.set("end", int64_t(10));
  EXPECT_EQ(values_of(evaluate_node(sliced, {&x}).at(0)), (V{2, 3, 4, 5}));
  sliced.attrs.set("start", int64_t(3));
  sliced.attrs.set("end", int64_t(1));
  EXPECT_EQ(evaluate_node(sliced, {&x}).at(0).numel(), 0);
  Tensor size = evaluate_node(make_node("Size"), {&x}).at(0);
  EXPECT_EQ(size.dtype(), DType::Int64);
  EXPECT_EQ(size.shape(), Shape{});
  EXPECT_EQ(size.at_i64(0), 120);
}

TEST(MiscOps, Constant) {
  Node node = make_node("Constant");
  node.attrs.set("value_ints", std::vector<int64_t>{4, 5});
  Tensor out = evaluate_node(node, {}).at(0);
  EXPECT_EQ(out.dtype(), DType::Int64);
  EXPECT_EQ(values_of(out), (V{4, 5}));
  Node f = make_node("Constant");
  f.attrs.set("value_float", 2.5);
  out = evaluate_node(f, {}).at(0);
  EXPECT_EQ(out.dtype(), DType::Float32);
  EXPECT_EQ(out.shape(), Shape{});
  Node t = make_node("Constant");
  t.attrs.set("value", Tensor::vector_i64({7}));
  EXPECT_EQ(values_of(evaluate_node(t, {}).at(0)), (V{7}));
  Node s = make_node("Constant");
  s.attrs.set("value_string", std::string("hi"));
  EXPECT_THROW(evaluate_node(s, {}), Error);
  EXPECT_THROW(evaluate_node(make_node("Constant"), {}), Error);
}

TEST(MiscOps, ConstantOfShape) {
  Tensor shape = Tensor::vector_i64({2, 3});
  Tensor out = evaluate_node(make_node("ConstantOfShape"), {&shape}).at(0);
  EXPECT_EQ(out.dtype(), DType::Float32);
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(values_of(out), V(6, 0.0));
  Node node = make_node("ConstantOfShape");
  Tensor value(DType::Int32, {1});
  value.data<int32_t>()[0] = 7;
  node.attrs.set("value", value);
  out = evaluate_node(node, {&shape}).at(0);
  EXPECT_EQ(out.dtype(), DType::Int32);
  EXPECT_EQ(values_of(out), V(6, 7.0));
  Tensor empty(DType::Int64, {0});
  EXPECT_EQ(evaluate_node(node, {&empty}).at(0).shape(), Shape{});
}

TEST(MiscOps, Range) {
  Tensor start = Tensor::scalar_i64(10), limit = Tensor::scalar_i64(4), delta = Tensor::scalar_i64(-3);
  Tensor out = evaluate_node(make_node("Range"), {&start, &limit, &delta}).at(0);
  EXPECT_EQ(out.dtype(), DType::Int64);
  EXPECT_EQ(values_of(out), (V{10, 7}));
  Tensor fs = Tensor::scalar_f32(1), fl = Tensor::scalar_f32(2), fd = Tensor::scalar_f32(0.25f);
  EXPECT_EQ(values_of(evaluate_node(make_node("Range"), {&fs, &fl, &fd}).at(0)), (V{1, 1.25, 1.5, 1.75}));
  Tensor empty_limit = Tensor::scalar_i64(20);
  EXPECT_EQ(evaluate_node(make_node("Range"), {&start, &empty_limit, &delta}).at(0).numel(), 0);
  Tensor zero = Tensor::scalar_i64(0);
  EXPECT_THROW(evaluate_node(make_node("Range"), {&start, &limit, &zero}), Error);
}

TEST(MiscOps, EyeLike) {
  Tensor x(DType::Int32, {2, 3});
  Node node = make_node("EyeLike");
  node.attrs.set("k", int64_t(1));
  Tensor out = evaluate_node(node, {&x}).at(0);
  EXPECT_EQ(out.dtype(), DType::Int32);
  EXPECT_EQ(values_of(out), (V{0, 1, 0, 0, 0, 1}));
  node.attrs.set("dtype", int64_t(11));  // DOUBLE
  node.attrs.set("k", int64_t(-1));
  out = evaluate_node(node, {&x}).at(0);
  EXPECT_EQ(out.dtype(), DType::Float64);
  EXPECT_EQ(values_of(out), (V{0, 0, 0, 1, 0, 0}));
  Tensor x3(DType::Float32, {2, 2, 2});
  EXPECT_THROW(evaluate_node(make_node("EyeLike"), {&x3}), Error);
}

}  // namespace
}  // namespace orchid::reference
