// Helpers shared by the reference operator unit tests: build a Node, make
// tensors from values, evaluate a node and read results or errors back.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "reference/op_registry.h"
#include "support/error.h"

namespace orchid::reference::testing {

// Expected values in assertions: EXPECT_EQ(values_of(t), (V{1, 2, 3})).
using V = std::vector<double>;

// One attribute for make_node: {"axis", int64_t(1)}, {"mode", "linear"}, ...
using Attr = std::pair<std::string, AttributeValue>;

// A node running `op` with `attrs`. `name` only shows up in error messages
// ("node 'n' (Gather): ...").
inline Node make_node(const std::string& op, Attributes attrs, const std::string& name = "n") {
  Node node;
  node.name = name;
  node.op = op;
  node.attrs = std::move(attrs);
  return node;
}

// The same with the attributes listed inline: make_node("Gemm", {{"transA", int64_t(1)}}).
inline Node make_node(const std::string& op, std::initializer_list<Attr> attrs = {},
                      const std::string& name = "n") {
  Attributes list;
  for (const Attr& attr : attrs) list.set(attr.first, attr.second);
  return make_node(op, std::move(list), name);
}

// A `dtype` tensor of `shape` holding `values`, each converted like
// Tensor::set_f64 (rounded or truncated to the storage type).
template <typename T = double>
inline Tensor make_tensor(DType dtype, Shape shape, const std::vector<T>& values) {
  return Tensor::from_vector(dtype, std::move(shape), values);
}

// make_tensor for the common dtypes: f32({2}, {0.5f, 1}), i64({1}, {3}), ...
template <typename T = double>
inline Tensor f32(Shape shape, const std::vector<T>& values) {
  return make_tensor(DType::Float32, std::move(shape), values);
}
inline Tensor i32(Shape shape, const V& values) { return make_tensor(DType::Int32, std::move(shape), values); }
inline Tensor i64(Shape shape, const V& values) { return make_tensor(DType::Int64, std::move(shape), values); }
inline Tensor boolean(Shape shape, const V& values) { return make_tensor(DType::Bool, std::move(shape), values); }

// 0, 1, 2, ... in row-major order, as a `dtype` tensor of `shape`.
inline Tensor iota(DType dtype, Shape shape) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, double(i));
  return t;
}

// A tensor's elements as doubles, in row-major order.
inline std::vector<double> values_of(const Tensor& t) { return t.to_f64_vector(); }

// Evaluates `node` on `inputs` and returns its first output.
inline Tensor eval1(const Node& node, const std::vector<const Tensor*>& inputs) {
  return evaluate_node(node, inputs).at(0);
}

// The message of the orchid::Error that evaluating `node` on `inputs` throws,
// or "(no error)" when it succeeds.
inline std::string error_of(const Node& node, const std::vector<const Tensor*>& inputs) {
  try {
    evaluate_node(node, inputs);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Expects `actual` to hold `expected`, element by element within `tol`.
inline void expect_near(const Tensor& actual, const std::vector<double>& expected, double tol = 1e-5) {
  std::vector<double> got = values_of(actual);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], tol) << "element " << i;
}

}  // namespace orchid::reference::testing
