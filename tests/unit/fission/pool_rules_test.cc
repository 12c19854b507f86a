// Fission of the pooling operators: the result is all primitives, has the
// expected structure, and matches the reference on random inputs.
#include <gtest/gtest.h>

#include <random>

#include "fission/fission.h"
#include "fission/primitive.h"
#include "reference/compare.h"
#include "reference/interpreter.h"
#include "reference/op_registry.h"
#include "support/error.h"

namespace orchid {
namespace {

// A graph of one `op` node on input x (float32 unless given) with `attrs`;
// the output type comes from the reference's shape inference.
Graph pool_graph(const std::string& op, const Shape& shape, Attributes attrs, size_t num_outputs = 1,
                 DType dtype = DType::Float32) {
  Graph g;
  g.name = op;
  ValueId x = g.add_value("x", {dtype, shape});
  g.inputs() = {x};
  Node node{"pool", op, "", {x}, {}, std::move(attrs)};
  node.outputs.assign(num_outputs, kNoValue);
  std::vector<TensorType> types = reference::infer_node(node, {&g.type(x)}, {nullptr});
  for (size_t i = 0; i < num_outputs; ++i) node.outputs[i] = g.add_value("y" + std::to_string(i), types[i]);
  g.outputs() = node.outputs;
  g.add_node(std::move(node));
  return g;
}

Tensor random_tensor(DType dtype, const Shape& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-3.0, 3.0);
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, dist(rng));
  return t;
}

size_t count_op(const Graph& g, const std::string& op) {
  size_t n = 0;
  for (const Node& node : g.nodes()) n += node.op == op;
  return n;
}

// Fissions g, checks every node is a primitive and the outputs agree with the
// original graph's on a random input; returns the fissioned graph.
Graph check_fission(const Graph& g, double rtol = 1e-5) {
  Graph f = fission::fission(g);
  for (const Node& node : f.nodes()) EXPECT_TRUE(fission::primitive_kind(node, f)) << node.describe();
  for (unsigned seed = 1; seed <= 2; ++seed) {
    std::map<std::string, Tensor> feeds = {
        {"x", random_tensor(g.type(g.inputs()[0]).dtype, g.type(g.inputs()[0]).shape, seed)}};
    std::vector<Tensor> expected = reference::run_graph(g, feeds);
    std::vector<Tensor> actual = reference::run_graph(f, feeds);
    EXPECT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size() && i < expected.size(); ++i) {
      auto cmp = reference::compare_tensors(actual[i], expected[i], rtol, 1e-6);
      EXPECT_TRUE(cmp.ok) << cmp.mismatch;
    }
  }
  return f;
}

Attributes attrs_of(std::initializer_list<std::pair<const char*, AttributeValue>> list) {
  Attributes a;
  for (const auto& [name, value] : list) a.set(name, value);
  return a;
}

TEST(PoolFission, GlobalPoolsAreReductions) {
  Graph avg = check_fission(pool_graph("GlobalAveragePool", {2, 3, 4, 5}, {}));
  EXPECT_EQ(count_op(avg, "ReduceSum"), 1u);
  Graph max = check_fission(pool_graph("GlobalMaxPool", {2, 3, 4, 5}, {}));
  EXPECT_EQ(count_op(max, "ReduceMax"), 1u);
  check_fission(pool_graph("GlobalLpPool", {2, 3, 4, 5}, attrs_of({{"p", int64_t(3)}})));
  check_fission(pool_graph("GlobalLpPool", {1, 2, 7}, {}));
}

TEST(PoolFission, MaxPoolIsPadThenSlicesAndMaxPerAxis) {
  Attributes a = attrs_of({{"kernel_shape", std::vector<int64_t>{3, 3}},
                           {"strides", std::vector<int64_t>{2, 2}},
                           {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  Graph f = check_fission(pool_graph("MaxPool", {1, 2, 7, 8}, a));
  // Three taps along each axis (3 + 3 Slices), not one per window tap (9).
  EXPECT_EQ(count_op(f, "Pad"), 1u);
  EXPECT_EQ(count_op(f, "Slice"), 6u);
  EXPECT_EQ(count_op(f, "Max"), 4u);
}

TEST(PoolFission, MaxPoolOneByOneIsOneSlice) {
  Graph f = check_fission(pool_graph("MaxPool", {1, 2, 5, 5}, attrs_of({{"kernel_shape", std::vector<int64_t>{1, 1}}})));
  EXPECT_EQ(count_op(f, "Slice"), 1u);
  EXPECT_EQ(count_op(f, "Max"), 0u);
}

TEST(PoolFission, MaxPoolGeometries) {
  check_fission(pool_graph("MaxPool", {1, 2, 9, 9},
                           attrs_of({{"kernel_shape", std::vector<int64_t>{3, 2}},
                                     {"dilations", std::vector<int64_t>{2, 3}},
                                     {"ceil_mode", int64_t(1)},
                                     {"strides", std::vector<int64_t>{2, 2}}})));
  check_fission(pool_graph("MaxPool", {1, 1, 10},
                           attrs_of({{"kernel_shape", std::vector<int64_t>{4}},
                                     {"auto_pad", std::string("SAME_LOWER")},
                                     {"strides", std::vector<int64_t>{3}}})));
  check_fission(pool_graph("MaxPool", {1, 1, 4, 5, 6}, attrs_of({{"kernel_shape", std::vector<int64_t>{2, 2, 2}}})));
}

TEST(PoolFission, MaxPoolIndicesFollowTheFirstMaximum) {
  for (int64_t storage_order : {0, 1}) {
    Attributes a = attrs_of({{"kernel_shape", std::vector<int64_t>{3, 2}},
                             {"strides", std::vector<int64_t>{2, 1}},
                             {"pads", std::vector<int64_t>{1, 1, 1, 0}},
                             {"ceil_mode", int64_t(1)},
                             {"storage_order", storage_order}});
    Graph f = check_fission(pool_graph("MaxPool", {2, 3, 6, 5}, a, 2));
    EXPECT_EQ(count_op(f, "Greater"), 5u);
  }
  // Ties keep the first tap: an int8 input of few distinct values.
  check_fission(
      pool_graph("MaxPool", {1, 2, 6, 6},
                 attrs_of({{"kernel_shape", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}),
                 2, DType::Int8));
}

TEST(PoolFission, AveragePoolCountsExactly) {
  for (int64_t include_pad : {0, 1}) {
    for (int64_t ceil_mode : {0, 1}) {
      Attributes a = attrs_of({{"kernel_shape", std::vector<int64_t>{3, 3}},
                               {"strides", std::vector<int64_t>{2, 2}},
                               {"pads", std::vector<int64_t>{1, 0, 2, 1}},
                               {"ceil_mode", ceil_mode},
                               {"count_include_pad", include_pad}});
      Graph f = check_fission(pool_graph("AveragePool", {2, 3, 8, 7}, a));
      EXPECT_EQ(count_op(f, "Div"), 1u);
    }
  }
  check_fission(
      pool_graph("AveragePool", {1, 2, 6, 6},
                 attrs_of({{"kernel_shape", std::vector<int64_t>{3, 3}}, {"auto_pad", std::string("SAME_UPPER")}})));
}

TEST(PoolFission, HalfSumsInFloat32AndIntegerMax) {
  Attributes a = attrs_of({{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  // ONNX's tolerance: the reference sums in double, fission in float32, both
  // round once to float16.
  Graph f = check_fission(pool_graph("AveragePool", {1, 2, 5, 5}, a, 1, DType::Float16), 1e-3);
  EXPECT_EQ(count_op(f, "Cast"), 2u);
  check_fission(pool_graph("GlobalAveragePool", {1, 2, 5, 5}, {}, 1, DType::Float16), 1e-3);
  check_fission(pool_graph("MaxPool", {1, 2, 5, 5}, a, 1, DType::UInt8));
}

TEST(PoolFission, LpPool) {
  for (int64_t p : {1, 2, 3}) {
    check_fission(pool_graph(
        "LpPool", {1, 2, 6, 5},
        attrs_of(
            {{"kernel_shape", std::vector<int64_t>{2, 3}}, {"pads", std::vector<int64_t>{1, 1, 0, 1}}, {"p", p}})));
  }
}

}  // namespace
}  // namespace orchid
