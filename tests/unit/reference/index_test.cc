#include <gtest/gtest.h>

#include "reference/op_registry.h"
#include "support/error.h"

#include "op_test_util.h"

namespace orchid::reference {
namespace {

using namespace testing;

TEST(IndexOps, Gather) {
  Tensor x = iota(DType::Float32, {3, 3});
  Tensor indices = make_tensor(DType::Int32, {1, 2}, {-1, 0});
  Node node = make_node("Gather");
  node.attrs.set("axis", int64_t(1));
  Tensor y = eval1(node, {&x, &indices});
  EXPECT_EQ(y.shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(values_of(y), (V{2, 0, 5, 3, 8, 6}));
  Tensor scalar = make_tensor(DType::Int64, {}, {2});
  EXPECT_EQ(values_of(eval1(make_node("Gather"), {&x, &scalar})), (V{6, 7, 8}));
  Tensor bad = make_tensor(DType::Int64, {1}, {3});
  EXPECT_NE(error_of(make_node("Gather"), {&x, &bad}).find("out of range"), std::string::npos);
  Tensor float_indices = make_tensor(DType::Float32, {1}, {0});
  EXPECT_NE(error_of(make_node("Gather"), {&x, &float_indices}).find("int32 or int64"), std::string::npos);
}

TEST(IndexOps, GatherElementsAndND) {
  Tensor x = make_tensor(DType::Float32, {2, 2}, {1, 2, 3, 4});
  Tensor indices = make_tensor(DType::Int64, {2, 2}, {0, 0, 1, 0});
  Node node = make_node("GatherElements");
  node.attrs.set("axis", int64_t(1));
  EXPECT_EQ(values_of(eval1(node, {&x, &indices})), (V{1, 1, 4, 3}));
  Tensor data = iota(DType::Int32, {2, 2, 2});
  Tensor nd = make_tensor(DType::Int64, {2, 1}, {1, 0});
  Node gather_nd = make_node("GatherND");
  gather_nd.attrs.set("batch_dims", int64_t(1));
  Tensor y = eval1(gather_nd, {&data, &nd});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(values_of(y), (V{2, 3, 4, 5}));
  Tensor pairs = make_tensor(DType::Int64, {2, 2}, {0, 1, 1, -1});
  EXPECT_EQ(values_of(eval1(make_node("GatherND"), {&data, &pairs})), (V{2, 3, 6, 7}));
}

TEST(IndexOps, ScatterElementsReductions) {
  Tensor data = make_tensor(DType::Float32, {1, 5}, {1, 2, 3, 4, 5});
  Tensor indices = make_tensor(DType::Int64, {1, 2}, {1, -4});
  Tensor updates = make_tensor(DType::Float32, {1, 2}, {10, 20});
  Node node = make_node("ScatterElements");
  node.attrs.set("axis", int64_t(1));
  EXPECT_EQ(values_of(eval1(node, {&data, &indices, &updates})), (V{1, 20, 3, 4, 5}));  // last write wins
  node.attrs.set("reduction", std::string("add"));
  EXPECT_EQ(values_of(eval1(node, {&data, &indices, &updates})), (V{1, 32, 3, 4, 5}));
  node.attrs.set("reduction", std::string("mul"));
  EXPECT_EQ(values_of(eval1(node, {&data, &indices, &updates})), (V{1, 400, 3, 4, 5}));
  node.attrs.set("reduction", std::string("min"));
  EXPECT_EQ(values_of(eval1(node, {&data, &indices, &updates})), (V{1, 2, 3, 4, 5}));
  node.attrs.set("reduction", std::string("max"));
  EXPECT_EQ(values_of(eval1(node, {&data, &indices, &updates})), (V{1, 20, 3, 4, 5}));
  node.attrs.set("reduction", std::string("avg"));
  EXPECT_NE(error_of(node, {&data, &indices, &updates}).find("unknown reduction"), std::string::npos);
  Node scatter = make_node("Scatter");  // deprecated alias
  scatter.attrs.set("axis", int64_t(1));
  EXPECT_EQ(values_of(eval1(scatter, {&data, &indices, &updates})), (V{1, 20, 3, 4, 5}));
}

TEST(IndexOps, ScatterND) {
  Tensor data = iota(DType::Int64, {2, 2});
  Tensor indices = make_tensor(DType::Int64, {2, 1}, {1, 1});
  Tensor updates = make_tensor(DType::Int64, {2, 2}, {10, 20, 30, 40});
  Node node = make_node("ScatterND");
  node.attrs.set("reduction", std::string("add"));
  EXPECT_EQ(values_of(eval1(node, {&data, &indices, &updates})), (V{0, 1, 42, 63}));
  Tensor point = make_tensor(DType::Int64, {1, 2}, {0, 1});
  Tensor one_update = make_tensor(DType::Int64, {1}, {7});
  EXPECT_EQ(values_of(eval1(make_node("ScatterND"), {&data, &point, &one_update})), (V{0, 7, 2, 3}));
}

TEST(IndexOps, OneHot) {
  Tensor indices = make_tensor(DType::Int64, {3}, {0, -1, 5});
  Tensor depth = make_tensor(DType::Float32, {}, {3});
  Tensor on_off = make_tensor(DType::Int32, {2}, {-1, 4});
  Tensor y = eval1(make_node("OneHot"), {&indices, &depth, &on_off});
  EXPECT_EQ(y.dtype(), DType::Int32);
  EXPECT_EQ(y.shape(), (Shape{3, 3}));
  EXPECT_EQ(values_of(y), (V{4, -1, -1, -1, -1, 4, -1, -1, -1}));
  Node axis0 = make_node("OneHot");
  axis0.attrs.set("axis", int64_t(0));
  EXPECT_EQ(values_of(eval1(axis0, {&indices, &depth, &on_off})), (V{4, -1, -1, -1, -1, -1, -1, 4, -1}));
}

TEST(IndexOps, NonZero) {
  Tensor x = make_tensor(DType::Float32, {2, 2}, {1, 0, 0, 3});
  Tensor y = eval1(make_node("NonZero"), {&x});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(values_of(y), (V{0, 1, 0, 1}));
  TensorType type{DType::Float32, {2, 2}};
  try {
    infer_node(make_node("NonZero"), {&type}, {nullptr});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NonZero's output shape depends on the values"), std::string::npos)
        << e.what();
  }
}

TEST(IndexOps, Trilu) {
  Tensor x = iota(DType::Float32, {3, 3});
  Tensor k = make_tensor(DType::Int64, {}, {1});
  EXPECT_EQ(values_of(eval1(make_node("Trilu"), {&x, &k})), (V{0, 1, 2, 0, 0, 5, 0, 0, 0}));
  Node lower = make_node("Trilu");
  lower.attrs.set("upper", int64_t(0));
  EXPECT_EQ(values_of(eval1(lower, {&x})), (V{0, 0, 0, 3, 4, 0, 6, 7, 8}));
}

TEST(IndexOps, Compress) {
  Tensor x = iota(DType::Float32, {3, 2});
  Tensor condition = make_tensor(DType::Bool, {2}, {0, 1});
  Node node = make_node("Compress");
  node.attrs.set("axis", int64_t(0));
  EXPECT_EQ(values_of(eval1(node, {&x, &condition})), (V{2, 3}));
  Tensor flat = make_tensor(DType::Bool, {5}, {0, 1, 0, 0, 1});
  EXPECT_EQ(values_of(eval1(make_node("Compress"), {&x, &flat})), (V{1, 4}));
}

TEST(IndexOps, Unique) {
  Tensor x = make_tensor(DType::Float32, {6}, {2, 1, 1, 3, 4, 3});
  auto outs = evaluate_node(make_node("Unique"), {&x});
  ASSERT_EQ(outs.size(), 4u);
  EXPECT_EQ(values_of(outs[0]), (V{1, 2, 3, 4}));
  EXPECT_EQ(values_of(outs[1]), (V{1, 0, 3, 4}));
  EXPECT_EQ(values_of(outs[2]), (V{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(values_of(outs[3]), (V{2, 1, 2, 1}));
  Node unsorted = make_node("Unique");
  unsorted.attrs.set("sorted", int64_t(0));
  outs = evaluate_node(unsorted, {&x});
  EXPECT_EQ(values_of(outs[0]), (V{2, 1, 3, 4}));
  EXPECT_EQ(values_of(outs[2]), (V{0, 1, 1, 2, 3, 2}));
  Tensor m = make_tensor(DType::Int32, {3, 2}, {1, 0, 0, 1, 1, 0});
  Node rows = make_node("Unique");
  rows.attrs.set("axis", int64_t(0));
  outs = evaluate_node(rows, {&m});
  EXPECT_EQ(outs[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values_of(outs[0]), (V{0, 1, 1, 0}));
  EXPECT_EQ(values_of(outs[3]), (V{1, 2}));
}

}  // namespace
}  // namespace orchid::reference
