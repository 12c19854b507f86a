// Helpers for the normalization, linear and fold_batchnorm fission tests:
// one-node graphs over random inputs, run before and after a rewrite.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "fission/fission.h"
#include "fission/primitive.h"
#include "ir/graph.h"
#include "reference/compare.h"
#include "reference/interpreter.h"
#include "reference/op_registry.h"

namespace orchid::fission::testing {

// A tensor of uniform random values in [lo, hi).
inline Tensor random_tensor(DType dtype, const Shape& shape, uint32_t seed, double lo = -2, double hi = 2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, dist(rng));
  return t;
}

// An input of a one-node graph: a graph input of `type`, or a constant.
struct Input {
  TensorType type;
  std::optional<Tensor> constant;
};
inline Input var(Shape shape, DType dtype = DType::Float32) { return {{dtype, std::move(shape)}, std::nullopt}; }
inline Input cst(Tensor t) { return {t.type(), std::move(t)}; }

// Adds `op` to `g` over `inputs` (kNoValue allowed); the outputs' types come
// from the reference inference. Returns the outputs.
inline std::vector<ValueId> add_op(Graph& g, const std::string& op, const std::vector<ValueId>& inputs,
                                   Attributes attrs = {}, size_t num_outputs = 1) {
  Node node;
  node.name = op + std::to_string(g.nodes().size());
  node.op = op;
  node.inputs = inputs;
  node.attrs = std::move(attrs);
  std::vector<const TensorType*> types;
  std::vector<const Tensor*> values;
  for (ValueId id : inputs) {
    types.push_back(id == kNoValue ? nullptr : &g.type(id));
    values.push_back(id == kNoValue || !g.value(id).constant ? nullptr : &*g.value(id).constant);
  }
  std::vector<TensorType> out = reference::infer_node(node, types, values);
  for (size_t i = 0; i < num_outputs; ++i) node.outputs.push_back(g.add_value(node.name + "_out" + std::to_string(i), out[i]));
  std::vector<ValueId> outputs = node.outputs;
  g.add_node(std::move(node));
  return outputs;
}

// A graph computing one `op` node; every output is a graph output.
inline Graph one_node_graph(const std::string& op, const std::vector<Input>& inputs, Attributes attrs = {},
                            size_t num_outputs = 1) {
  Graph g;
  g.name = op;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string name = "in" + std::to_string(i);
    if (inputs[i].constant) {
      ids.push_back(g.add_constant(name, *inputs[i].constant));
    } else {
      ids.push_back(g.add_value(name, inputs[i].type));
      g.inputs().push_back(ids.back());
    }
  }
  g.outputs() = add_op(g, op, ids, std::move(attrs), num_outputs);
  return g;
}

// Random feeds for every graph input.
inline std::map<std::string, Tensor> random_feeds(const Graph& g, uint32_t seed) {
  std::map<std::string, Tensor> feeds;
  for (ValueId id : g.inputs()) feeds[g.value(id).name] = random_tensor(g.type(id).dtype, g.type(id).shape, seed++);
  return feeds;
}

// Both graphs agree on random inputs (rtol 1e-3, atol 1e-6).
inline void expect_same_outputs(const Graph& expected, const Graph& actual, uint32_t seed = 7) {
  std::map<std::string, Tensor> feeds = random_feeds(expected, seed);
  std::vector<Tensor> want = reference::run_graph(expected, feeds);
  std::vector<Tensor> got = reference::run_graph(actual, feeds);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    reference::Comparison c = reference::compare_tensors(got[i], want[i], 1e-3, 1e-6);
    EXPECT_TRUE(c.ok) << "output " << i << ": " << c.mismatch;
  }
}

inline int count_ops(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op == op;
  return n;
}

// Fissions `g`, checks that only primitives remain and that the outputs agree
// with the original graph; returns the fissioned graph.
inline Graph check_fission(const Graph& g, uint32_t seed = 7) {
  Graph f = fission::fission(g);
  for (const Node& node : f.nodes()) EXPECT_TRUE(fission::primitive_kind(node, f).has_value()) << node.describe();
  expect_same_outputs(g, f, seed);
  return f;
}

}  // namespace orchid::fission::testing
