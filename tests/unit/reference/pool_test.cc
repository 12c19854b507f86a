#include <gtest/gtest.h>

#include <cmath>

#include "reference/op_registry.h"
#include "support/error.h"

#include "op_test_util.h"

namespace orchid::reference {
namespace {

using namespace testing;

// A pooling node; a non-empty `kernel` becomes its kernel_shape.
Node pool_node(const std::string& op, const std::vector<int64_t>& kernel = {}) {
  return kernel.empty() ? make_node(op) : make_node(op, {{"kernel_shape", kernel}});
}

void expect_values(const Tensor& t, Shape shape, std::vector<double> values) {
  ASSERT_EQ(t.shape(), shape);
  ASSERT_EQ(t.numel(), int64_t(values.size()));
  for (int64_t i = 0; i < t.numel(); ++i) EXPECT_NEAR(t.at_f64(i), values[size_t(i)], 1e-5) << "at " << i;
}

TEST(PoolOps, MaxPoolWithPadsAndIndices) {
  Tensor x = iota(DType::Float32, {1, 2, 3, 3});
  Node node = pool_node("MaxPool", {2, 2});
  node.attrs.set("pads", std::vector<int64_t>{1, 1, 0, 0});
  node.attrs.set("strides", std::vector<int64_t>{2, 2});
  std::vector<Tensor> out = evaluate_node(node, {&x});
  ASSERT_EQ(out.size(), 2u);
  expect_values(out[0], {1, 2, 2, 2}, {0, 2, 6, 8, 9, 11, 15, 17});
  EXPECT_EQ(out[1].dtype(), DType::Int64);
  EXPECT_EQ(out[1].to_i64_vector(), (std::vector<int64_t>{0, 2, 6, 8, 9, 11, 15, 17}));
  node.attrs.set("storage_order", int64_t(1));  // column-major spatial indices
  EXPECT_EQ(evaluate_node(node, {&x})[1].to_i64_vector(), (std::vector<int64_t>{0, 6, 2, 8, 9, 15, 11, 17}));
}

TEST(PoolOps, MaxPoolDilationsCeilModeAndInt) {
  Tensor x = iota(DType::Float32, {1, 1, 4, 4});
  Node node = pool_node("MaxPool", {2, 2});
  node.attrs.set("dilations", std::vector<int64_t>{2, 2});
  expect_values(evaluate_node(node, {&x})[0], {1, 1, 2, 2}, {10, 11, 14, 15});
  // ceil_mode: (4 - 3) / 2 + 1 rounds up to 2 windows; the second is clipped.
  Node ceil = pool_node("MaxPool", {3, 3});
  ceil.attrs.set("strides", std::vector<int64_t>{2, 2});
  ceil.attrs.set("ceil_mode", int64_t(1));
  expect_values(evaluate_node(ceil, {&x})[0], {1, 1, 2, 2}, {10, 11, 14, 15});
  // A window that would start in the end padding is dropped: 4 + 1 pad, k 2,
  // s 2 gives ceil(3 / 2) + 1 = 3 windows, the last starting at 4.
  Tensor x4 = iota(DType::Float32, {1, 1, 1, 4});
  Node drop = pool_node("MaxPool", {1, 2});
  drop.attrs.set("strides", std::vector<int64_t>{1, 2});
  drop.attrs.set("pads", std::vector<int64_t>{0, 0, 0, 1});
  drop.attrs.set("ceil_mode", int64_t(1));
  expect_values(evaluate_node(drop, {&x4})[0], {1, 1, 1, 2}, {1, 3});
  Tensor u8 = Tensor::from_vector(DType::UInt8, {1, 1, 2, 2}, std::vector<int>{3, 250, 7, 1});
  Tensor y = evaluate_node(pool_node("MaxPool", {2, 2}), {&u8})[0];
  EXPECT_EQ(y.dtype(), DType::UInt8);
  EXPECT_EQ(y.at_i64(0), 250);
}

TEST(PoolOps, AveragePoolPadding) {
  Tensor x = iota(DType::Float32, {1, 1, 3, 3});
  Node node = pool_node("AveragePool", {2, 2});
  node.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  node.attrs.set("strides", std::vector<int64_t>{2, 2});
  // Windows: {0}, {1,2}, {3,6}, {4,5,7,8}.
  expect_values(evaluate_node(node, {&x})[0], {1, 1, 2, 2}, {0, 1.5, 4.5, 6});
  node.attrs.set("count_include_pad", int64_t(1));
  expect_values(evaluate_node(node, {&x})[0], {1, 1, 2, 2}, {0, 0.75, 2.25, 6});
  Node same = pool_node("AveragePool", {3, 3});
  same.attrs.set("auto_pad", std::string("SAME_UPPER"));
  Tensor y = evaluate_node(same, {&x})[0];
  ASSERT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
  EXPECT_NEAR(y.at_f64(0), (0 + 1 + 3 + 4) / 4.0, 1e-6);
  EXPECT_NEAR(y.at_f64(4), 4.0, 1e-6);
}

TEST(PoolOps, AveragePoolCeilMode1D) {
  Tensor x = iota(DType::Float32, {1, 1, 5});
  Node node = pool_node("AveragePool", {2});
  node.attrs.set("strides", std::vector<int64_t>{2});
  node.attrs.set("ceil_mode", int64_t(1));
  expect_values(evaluate_node(node, {&x})[0], {1, 1, 3}, {0.5, 2.5, 4});
}

TEST(PoolOps, AveragePool3D) {
  Tensor x = iota(DType::Float32, {1, 1, 2, 2, 2});
  expect_values(evaluate_node(pool_node("AveragePool", {2, 2, 2}), {&x})[0], {1, 1, 1, 1, 1}, {3.5});
}

TEST(PoolOps, LpPool) {
  Tensor x = f32({1, 1, 2, 2}, {3, -4, 1, 2});
  Node node = pool_node("LpPool", {1, 2});
  expect_values(evaluate_node(node, {&x})[0], {1, 1, 2, 1}, {5, std::sqrt(5.0)});
  node.attrs.set("p", int64_t(1));
  expect_values(evaluate_node(node, {&x})[0], {1, 1, 2, 1}, {7, 3});
  node.attrs.set("p", 1.0);  // LpPool-1's float attribute
  expect_values(evaluate_node(node, {&x})[0], {1, 1, 2, 1}, {7, 3});
  node.attrs.set("p", 1.5);
  EXPECT_THROW(evaluate_node(node, {&x}), Error);
}

TEST(PoolOps, GlobalPools) {
  Tensor x = f32({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -4});
  expect_values(evaluate_node(pool_node("GlobalAveragePool"), {&x})[0], {1, 2, 1, 1}, {2.5, -2.5});
  expect_values(evaluate_node(pool_node("GlobalMaxPool"), {&x})[0], {1, 2, 1, 1}, {4, -1});
  expect_values(evaluate_node(pool_node("GlobalLpPool"), {&x})[0], {1, 2, 1, 1},
                {std::sqrt(30.0), std::sqrt(30.0)});
}

TEST(PoolOps, MaxUnpoolInvertsMaxPool) {
  Tensor x = f32({1, 1, 2, 4}, {1, 5, 2, 0, 3, 4, 8, 7});
  Node pool = pool_node("MaxPool", {2, 2});
  pool.attrs.set("strides", std::vector<int64_t>{2, 2});
  std::vector<Tensor> pooled = evaluate_node(pool, {&x});
  Node unpool = pool_node("MaxUnpool", {2, 2});
  unpool.attrs.set("strides", std::vector<int64_t>{2, 2});
  expect_values(evaluate_node(unpool, {&pooled[0], &pooled[1]})[0], {1, 1, 2, 4}, {0, 5, 0, 0, 0, 0, 8, 0});
  // A larger output_shape pads the 2x4 result at the end.
  Tensor shape = Tensor::vector_i64({1, 1, 3, 5});
  expect_values(evaluate_node(unpool, {&pooled[0], &pooled[1], &shape})[0], {1, 1, 3, 5},
                {0, 5, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0});
  Tensor small = Tensor::vector_i64({1, 1, 1, 4});
  EXPECT_THROW(evaluate_node(unpool, {&pooled[0], &pooled[1], &small}), Error);
}

TEST(PoolOps, MaxRoiPool) {
  Tensor x = iota(DType::Float32, {1, 1, 4, 4});
  Tensor rois = f32({1, 5}, {0, 0, 0, 3, 3});
  Node node = pool_node("MaxRoiPool");
  node.attrs.set("pooled_shape", std::vector<int64_t>{2, 2});
  expect_values(evaluate_node(node, {&x, &rois})[0], {1, 1, 2, 2}, {5, 7, 13, 15});
}

TEST(PoolOps, Errors) {
  Tensor x = iota(DType::Float32, {1, 1, 3, 3});
  EXPECT_THROW(evaluate_node(pool_node("MaxPool"), {&x}), Error);             // no kernel_shape
  EXPECT_THROW(evaluate_node(pool_node("MaxPool", {2}), {&x}), Error);        // wrong rank
  EXPECT_THROW(evaluate_node(pool_node("AveragePool", {4, 4}), {&x}), Error); // larger than input
  Tensor i = Tensor(DType::Int32, {1, 1, 3, 3});
  EXPECT_THROW(evaluate_node(pool_node("AveragePool", {2, 2}), {&i}), Error);
  Node bad = pool_node("MaxPool", {2, 2});
  bad.attrs.set("auto_pad", std::string("SAME"));
  EXPECT_THROW(evaluate_node(bad, {&x}), Error);
}

}  // namespace
}  // namespace orchid::reference
