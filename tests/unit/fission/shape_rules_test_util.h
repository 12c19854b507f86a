// Helpers for the shape, elementwise and reduce fission rule tests: one-node
// graphs (optional inputs may be omitted), random feeds with a range per
// input, and the differential check against the original graph.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
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

namespace orchid::fission::rules_testing {

// Uniform random values in [lo, hi) (integers truncate towards zero).
inline Tensor random_tensor(DType dtype, const Shape& shape, uint32_t seed, double lo, double hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, dist(rng));
  return t;
}

// An input of a one-node graph: a graph input fed with values in [lo, hi), a
// constant, or an omitted optional input.
struct Input {
  TensorType type;
  std::optional<Tensor> constant;
  bool present = true;
  double lo = -3;
  double hi = 3;
};
inline Input var(Shape shape, DType dtype = DType::Float32, double lo = -3, double hi = 3) {
  return {{dtype, std::move(shape)}, std::nullopt, true, lo, hi};
}
inline Input cst(Tensor t) { return {t.type(), std::move(t)}; }
inline Input none() { return {{}, std::nullopt, false}; }
inline Input ints(const std::vector<int64_t>& values) { return cst(Tensor::vector_i64(values)); }
template <typename T>
inline Input cst(DType dtype, Shape shape, const std::vector<T>& values) {
  return cst(Tensor::from_vector(dtype, std::move(shape), values));
}

// A graph computing one `op` node. Outputs listed in `unused` are left
// unconnected (kNoValue); the others are graph outputs. The ranges of the
// graph inputs are returned through `ranges` for random_feeds.
struct OneNode {
  Graph graph;
  std::map<std::string, std::pair<double, double>> ranges;
};

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

inline std::map<std::string, Tensor> random_feeds(const OneNode& one, uint32_t seed) {
  std::map<std::string, Tensor> feeds;
  for (ValueId id : one.graph.inputs()) {
    const Value& v = one.graph.value(id);
    auto [lo, hi] = one.ranges.at(v.name);
    feeds[v.name] = random_tensor(v.type.dtype, v.type.shape, seed++, lo, hi);
  }
  return feeds;
}

inline int count_ops(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op == op;
  return n;
}

// Runs the original and the fissioned graph on `feeds`; every output agrees
// within rtol 1e-3, atol 1e-6 (NaN matches NaN).
inline void expect_same_outputs(const Graph& original, const Graph& fissioned,
                                const std::map<std::string, Tensor>& feeds) {
  std::vector<Tensor> want = reference::run_graph(original, feeds);
  std::vector<Tensor> got = reference::run_graph(fissioned, feeds);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    reference::Comparison c = reference::compare_tensors(got[i], want[i], 1e-3, 1e-6);
    EXPECT_TRUE(c.ok) << "output " << i << ": " << c.mismatch;
  }
}

// Fissions the graph, checks that only primitives remain and that the outputs
// agree on random feeds; returns the fissioned graph for structural checks.
inline Graph check_fission(const OneNode& one, uint32_t seed = 7) {
  Graph f = fission::fission(one.graph);
  for (const Node& node : f.nodes()) {
    EXPECT_TRUE(fission::primitive_kind(node, f).has_value()) << node.describe() << " is not a primitive";
  }
  expect_same_outputs(one.graph, f, random_feeds(one, seed));
  return f;
}

// Attributes from an inline list: attrs({{"axis", int64_t(1)}}).
inline Attributes attrs(std::initializer_list<std::pair<std::string, AttributeValue>> list) {
  Attributes a;
  for (const auto& [name, value] : list) a.set(name, value);
  return a;
}

}  // namespace orchid::fission::rules_testing
