// Shared helpers for the fission rule tests: one-node graphs over random
// inputs, run before and after a rewrite and compared.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fission/fission.h"
#include "fission/primitive.h"
#include "fission/rules.h"
#include "ir/graph.h"
#include "reference/compare.h"
#include "reference/interpreter.h"
#include "reference/op_registry.h"
#include "support/error.h"

namespace orchid::fission::testing {

// A tensor of uniform random values in [lo, hi) (integers truncate towards zero).
inline Tensor random_tensor(DType dtype, const Shape& shape, uint32_t seed, double lo = -2, double hi = 2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, dist(rng));
  return t;
}

// An input of a one-node graph: a graph input (fed with values in [lo, hi) by
// one_node's feeds), a constant, or an omitted optional input.
struct Input {
  TensorType type;
  std::optional<Tensor> constant;
  bool present = true;
  double lo = -3;
  double hi = 3;
};

// A graph input of the given shape and dtype; [lo, hi) is its range for one_node feeds.
inline Input var(Shape shape, DType dtype = DType::Float32, double lo = -3, double hi = 3) {
  return {{dtype, std::move(shape)}, std::nullopt, true, lo, hi};
}

// A constant input.
inline Input cst(Tensor t) { return {t.type(), std::move(t)}; }

// A constant input built from a vector of values.
template <typename T>
inline Input cst(DType dtype, Shape shape, const std::vector<T>& values) {
  return cst(Tensor::from_vector(dtype, std::move(shape), values));
}

// A constant int64 vector input.
inline Input ints(const std::vector<int64_t>& values) { return cst(Tensor::vector_i64(values)); }

// An omitted optional input.
inline Input none() { return {{}, std::nullopt, false}; }

// Attributes from an inline list: attrs({{"axis", int64_t(1)}}).
inline Attributes attrs(std::initializer_list<std::pair<std::string, AttributeValue>> list) {
  Attributes a;
  for (const auto& [name, value] : list) a.set(name, value);
  return a;
}

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

// A one-node graph plus the feed range of each graph input.
struct OneNode {
  Graph graph;
  std::map<std::string, std::pair<double, double>> ranges;
};

// A graph computing one `op` node. Outputs listed in `unused` are left
// unconnected (kNoValue); the others are graph outputs.
inline OneNode one_node(const std::string& op, const std::vector<Input>& inputs, Attributes attrs = {},
                        size_t num_outputs = 1, const std::vector<size_t>& unused = {}) {
  OneNode result;
  Graph& g = result.graph;
  g.name = op;
  Node node;
  node.name = op + "0";
  node.op = op;
  node.attrs = std::move(attrs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string name = "in" + std::to_string(i);
    if (!inputs[i].present) {
      node.inputs.push_back(kNoValue);
    } else if (inputs[i].constant) {
      node.inputs.push_back(g.add_constant(name, *inputs[i].constant));
    } else {
      node.inputs.push_back(g.add_value(name, inputs[i].type));
      g.inputs().push_back(node.inputs.back());
      result.ranges[name] = {inputs[i].lo, inputs[i].hi};
    }
  }
  node.outputs.assign(num_outputs, kNoValue);
  std::vector<const TensorType*> types;
  std::vector<const Tensor*> values;
  for (ValueId id : node.inputs) {
    types.push_back(id == kNoValue ? nullptr : &g.type(id));
    values.push_back(id == kNoValue || !g.value(id).constant ? nullptr : &*g.value(id).constant);
  }
  std::vector<TensorType> out = reference::infer_node(node, types, values);
  for (size_t i = 0; i < num_outputs; ++i) {
    if (std::find(unused.begin(), unused.end(), i) != unused.end()) continue;
    node.outputs[i] = g.add_value("out" + std::to_string(i), out[i]);
    g.outputs().push_back(node.outputs[i]);
  }
  g.add_node(std::move(node));
  return result;
}

// The graph of one_node, with every output a graph output.
inline Graph one_node_graph(const std::string& op, const std::vector<Input>& inputs, Attributes attrs = {},
                            size_t num_outputs = 1) {
  return one_node(op, inputs, std::move(attrs), num_outputs).graph;
}

// Feeds for one_node's graph inputs, each drawn from its own range.
inline std::map<std::string, Tensor> random_feeds(const OneNode& one, uint32_t seed) {
  std::map<std::string, Tensor> feeds;
  for (ValueId id : one.graph.inputs()) {
    const Value& v = one.graph.value(id);
    auto [lo, hi] = one.ranges.at(v.name);
    feeds[v.name] = random_tensor(v.type.dtype, v.type.shape, seed++, lo, hi);
  }
  return feeds;
}

// Feeds with floats in [-2, 2) and integer inputs drawn from [int_lo, int_hi).
inline std::map<std::string, Tensor> random_feeds(const Graph& g, uint32_t seed, int64_t int_lo = 0,
                                                  int64_t int_hi = 2) {
  std::map<std::string, Tensor> feeds;
  for (ValueId id : g.inputs()) {
    const TensorType& type = g.type(id);
    bool integer = type.dtype == DType::Int32 || type.dtype == DType::Int64;
    Tensor t = random_tensor(type.dtype, type.shape, seed++, integer ? double(int_lo) : -2.0,
                             integer ? double(int_hi) : 2.0);
    if (integer) {
      std::mt19937 rng(seed++);
      std::uniform_int_distribution<int64_t> dist(int_lo, int_hi - 1);
      for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, double(dist(rng)));
    }
    feeds[g.value(id).name] = t;
  }
  return feeds;
}

// Feeds with every input (any dtype) uniform in [lo, hi), one seed per input.
inline std::map<std::string, Tensor> uniform_feeds(const Graph& g, uint32_t seed, double lo = -2, double hi = 2) {
  std::map<std::string, Tensor> feeds;
  for (ValueId id : g.inputs()) feeds[g.value(id).name] = random_tensor(g.type(id).dtype, g.type(id).shape, seed++, lo, hi);
  return feeds;
}

// Runs both graphs on `feeds`; every output agrees within rtol 1e-3, atol 1e-6.
inline void expect_same_outputs(const Graph& expected, const Graph& actual,
                                const std::map<std::string, Tensor>& feeds) {
  std::vector<Tensor> want = reference::run_graph(expected, feeds);
  std::vector<Tensor> got = reference::run_graph(actual, feeds);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    reference::Comparison c = reference::compare_tensors(got[i], want[i], 1e-3, 1e-6);
    EXPECT_TRUE(c.ok) << "output " << i << ": " << c.mismatch;
  }
}

// As above, on uniform_feeds(expected, seed).
inline void expect_same_outputs(const Graph& expected, const Graph& actual, uint32_t seed = 7) {
  expect_same_outputs(expected, actual, uniform_feeds(expected, seed));
}

// The number of `op` nodes in `g`.
inline int count_ops(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op == op;
  return n;
}

// Every node of `g` is a primitive.
inline void expect_all_primitive(const Graph& g) {
  for (const Node& node : g.nodes()) {
    EXPECT_TRUE(fission::primitive_kind(node, g).has_value()) << node.describe() << " is not a primitive";
  }
}

// Fissions `g`, checks that only primitives remain and that the outputs agree
// on uniform_feeds(g, seed); returns the fissioned graph.
inline Graph check_fission(const Graph& g, uint32_t seed = 7) {
  Graph f = fission::fission(g);
  expect_all_primitive(f);
  expect_same_outputs(g, f, seed);
  return f;
}

// As above for one_node, with each input fed from its own range.
inline Graph check_fission(const OneNode& one, uint32_t seed = 7) {
  Graph f = fission::fission(one.graph);
  expect_all_primitive(f);
  expect_same_outputs(one.graph, f, random_feeds(one, seed));
  return f;
}

// Rewrites the single node of `g` with its fission rule even when the
// primitive table keeps the operator whole, then fissions the result.
inline Graph force_rule(const Graph& g) {
  Graph out = g;
  out.nodes().clear();
  const Node& node = g.nodes().at(0);
  const FissionRule* rule = fission_rules().find(node.op);
  EXPECT_NE(rule, nullptr) << node.op;
  if (!rule) return g;
  FissionBuilder builder(out, node);
  std::vector<ValueId> results = (*rule)(node, builder);
  for (ValueId& id : out.outputs()) {
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] == id) id = results[i];
    }
  }
  return fission::fission(out);
}

}  // namespace orchid::fission::testing
