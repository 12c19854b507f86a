#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference/op_registry.h"
#include "support/error.h"

#include "op_test_util.h"

namespace orchid::reference {
namespace {

using namespace testing;

TEST(ReduceOps, SumAlongAxisKeepdims) {
  Node node = make_node("ReduceSum");
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor axes = Tensor::vector_i64({1});
  auto out = evaluate_node(node, {&x, &axes});
  EXPECT_EQ(out[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{6, 15}));
}

TEST(ReduceOps, OmittedAxesReduceEverything) {
  Node node = make_node("ReduceMean");
  node.attrs.set("keepdims", int64_t(0));
  Tensor x = f32({2, 2}, {1, 2, 3, 6});
  auto out = evaluate_node(node, {&x});
  EXPECT_EQ(out[0].shape(), Shape{});
  EXPECT_DOUBLE_EQ(out[0].at_f64(0), 3.0);
  Tensor empty_axes(DType::Int64, {0});
  out = evaluate_node(node, {&x, &empty_axes});
  EXPECT_EQ(out[0].shape(), Shape{});
}

TEST(ReduceOps, NoopWithEmptyAxesReducesNothing) {
  Node node = make_node("ReduceSum");
  node.attrs.set("noop_with_empty_axes", int64_t(1));
  Tensor x = f32({2, 2}, {1, -2, 3, 4});
  Tensor empty_axes(DType::Int64, {0});
  auto out = evaluate_node(node, {&x, &empty_axes});
  EXPECT_EQ(out[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{1, -2, 3, 4}));
  // Reducing over no axis still applies the per-element part (ONNX reference).
  node.op = "ReduceSumSquare";
  EXPECT_EQ(values_of(evaluate_node(node, {&x})[0]), (std::vector<double>{1, 4, 9, 16}));
  node.op = "ReduceL1";
  EXPECT_EQ(values_of(evaluate_node(node, {&x})[0]), (std::vector<double>{1, 2, 3, 4}));
}

TEST(ReduceOps, EmptyReductions) {
  Tensor x(DType::Float32, {2, 0});
  Tensor axes = Tensor::vector_i64({-1});
  auto reduce = [&](const char* op, const Tensor& input) {
    Node node = make_node(op);
    return evaluate_node(node, {&input, &axes})[0];
  };
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(values_of(reduce("ReduceSum", x)), (std::vector<double>{0, 0}));
  EXPECT_EQ(values_of(reduce("ReduceProd", x)), (std::vector<double>{1, 1}));
  EXPECT_EQ(values_of(reduce("ReduceMax", x)), (std::vector<double>{-inf, -inf}));
  EXPECT_EQ(values_of(reduce("ReduceMin", x)), (std::vector<double>{inf, inf}));
  EXPECT_EQ(values_of(reduce("ReduceLogSumExp", x)), (std::vector<double>{-inf, -inf}));
  EXPECT_EQ(values_of(reduce("ReduceL2", x)), (std::vector<double>{0, 0}));
  EXPECT_EQ(reduce("ReduceSum", x).shape(), (Shape{2, 1}));
  Tensor xi(DType::Int32, {2, 0});
  EXPECT_EQ(reduce("ReduceMax", xi).data<int32_t>()[0], std::numeric_limits<int32_t>::lowest());
  EXPECT_EQ(reduce("ReduceMin", xi).data<int32_t>()[1], std::numeric_limits<int32_t>::max());
}

TEST(ReduceOps, NumericsAndIntegers) {
  Node node = make_node("ReduceLogSumExp");
  Tensor big = f32({2}, {1000, 1000});
  EXPECT_NEAR(evaluate_node(node, {&big})[0].at_f64(0), 1000 + std::log(2.0), 1e-3);
  node.op = "ReduceL2";
  Tensor v = f32({2}, {3, -4});
  EXPECT_DOUBLE_EQ(evaluate_node(node, {&v})[0].at_f64(0), 5.0);
  node.op = "ReduceMax";
  Tensor nan = f32({3}, {1, std::nanf(""), 2});
  EXPECT_TRUE(std::isnan(evaluate_node(node, {&nan})[0].at_f64(0)));
  node.op = "ReduceMean";
  Tensor ints = Tensor::from_vector(DType::Int64, {2}, std::vector<int64_t>{-1, -2});
  EXPECT_EQ(evaluate_node(node, {&ints})[0].data<int64_t>()[0], -1);  // truncated like numpy astype
  node.op = "ReduceSum";
  Tensor wrap(DType::Int32, {2});
  wrap.data<int32_t>()[0] = std::numeric_limits<int32_t>::max();
  wrap.data<int32_t>()[1] = 1;
  EXPECT_EQ(evaluate_node(node, {&wrap})[0].data<int32_t>()[0], std::numeric_limits<int32_t>::min());
  Tensor half = f32({3}, {0.5f, 0.25f, 1}).cast(DType::Float16);
  Tensor h = evaluate_node(node, {&half})[0];
  EXPECT_EQ(h.dtype(), DType::Float16);
  EXPECT_DOUBLE_EQ(h.at_f64(0), 1.75);
}

TEST(ReduceOps, BoolMaxMin) {
  Tensor b = Tensor::from_vector(DType::Bool, {2, 2}, std::vector<int>{0, 1, 0, 0});
  Tensor axes = Tensor::vector_i64({1});
  Node max = make_node("ReduceMax");
  Node min = make_node("ReduceMin");
  EXPECT_EQ(evaluate_node(max, {&b, &axes})[0].to_i64_vector(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(evaluate_node(min, {&b})[0].to_i64_vector(), (std::vector<int64_t>{0}));
}

TEST(ReduceOps, UserErrors) {
  Node node = make_node("ReduceSum");
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  Tensor dup = Tensor::vector_i64({1, -1});
  EXPECT_THROW(evaluate_node(node, {&x, &dup}), Error);
  Tensor out_of_range = Tensor::vector_i64({2});
  EXPECT_THROW(evaluate_node(node, {&x, &out_of_range}), Error);
  node.attrs.set("axes", std::vector<int64_t>{0});
  EXPECT_THROW(evaluate_node(node, {&x}), Error);
  Node sum = make_node("ReduceSum");
  Tensor b(DType::Bool, {2});
  EXPECT_THROW(evaluate_node(sum, {&b}), Error);
}

TEST(ArgOps, TiesAndKeepdims) {
  Node node = make_node("ArgMax");
  node.attrs.set("axis", int64_t(1));
  Tensor x = f32({2, 3}, {1, 5, 5, 7, 2, 7});
  auto out = evaluate_node(node, {&x})[0];
  EXPECT_EQ(out.dtype(), DType::Int64);
  EXPECT_EQ(out.shape(), (Shape{2, 1}));
  EXPECT_EQ(out.to_i64_vector(), (std::vector<int64_t>{1, 0}));
  node.attrs.set("select_last_index", int64_t(1));
  node.attrs.set("keepdims", int64_t(0));
  out = evaluate_node(node, {&x})[0];
  EXPECT_EQ(out.shape(), (Shape{2}));
  EXPECT_EQ(out.to_i64_vector(), (std::vector<int64_t>{2, 2}));
  Node argmin = make_node("ArgMin");
  out = evaluate_node(argmin, {&x})[0];  // axis 0
  EXPECT_EQ(out.to_i64_vector(), (std::vector<int64_t>{0, 1, 0}));
  Tensor nan = f32({3}, {1, std::nanf(""), 3});
  EXPECT_EQ(evaluate_node(argmin, {&nan})[0].to_i64_vector(), (std::vector<int64_t>{1}));
}

TEST(CumSumOp, ExclusiveAndReverse) {
  Tensor x = f32({4}, {1, 2, 3, 4});
  Tensor axis(DType::Int32, {});
  auto run = [&](int64_t exclusive, int64_t reverse) {
    Node node = make_node("CumSum");
    node.attrs.set("exclusive", exclusive);
    node.attrs.set("reverse", reverse);
    return values_of(evaluate_node(node, {&x, &axis})[0]);
  };
  EXPECT_EQ(run(0, 0), (std::vector<double>{1, 3, 6, 10}));
  EXPECT_EQ(run(1, 0), (std::vector<double>{0, 1, 3, 6}));
  EXPECT_EQ(run(0, 1), (std::vector<double>{10, 9, 7, 4}));
  EXPECT_EQ(run(1, 1), (std::vector<double>{9, 7, 4, 0}));
  Node node = make_node("CumSum");
  Tensor m = Tensor::from_vector(DType::Int64, {2, 3}, std::vector<int64_t>{1, 2, 3, 4, 5, 6});
  Tensor last = Tensor::scalar_i64(-1);
  EXPECT_EQ(evaluate_node(node, {&m, &last})[0].to_i64_vector(), (std::vector<int64_t>{1, 3, 6, 4, 9, 15}));
}

TEST(TopKOp, LargestSmallestAndTies) {
  Node node = make_node("TopK");
  Tensor x = f32({2, 4}, {3, 1, 3, 2, 0, 5, 5, 5});
  Tensor k = Tensor::vector_i64({2});
  auto out = evaluate_node(node, {&x, &k});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{3, 3, 5, 5}));
  EXPECT_EQ(out[1].to_i64_vector(), (std::vector<int64_t>{0, 2, 1, 2}));
  node.attrs.set("largest", int64_t(0));
  node.attrs.set("axis", int64_t(0));
  out = evaluate_node(node, {&x, &k});
  EXPECT_EQ(out[0].shape(), (Shape{2, 4}));
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{0, 1, 3, 2, 3, 5, 5, 5}));
  EXPECT_EQ(out[1].to_i64_vector(), (std::vector<int64_t>{1, 0, 0, 0, 0, 1, 1, 1}));
  Tensor too_big = Tensor::vector_i64({3});
  EXPECT_THROW(evaluate_node(node, {&x, &too_big}), Error);
}

}  // namespace
}  // namespace orchid::reference
