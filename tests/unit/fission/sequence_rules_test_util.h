// Helpers for the sequence, loss and signal fission tests: one-node graphs,
// random feeds (integer inputs drawn from a range), a forced rewrite for
// operators the primitive table keeps whole, and the differential check.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "fission/fission.h"
#include "fission/primitive.h"
#include "fission/rules.h"
#include "ir/graph.h"
#include "reference/compare.h"
#include "reference/interpreter.h"
#include "reference/op_registry.h"
#include "support/error.h"

namespace orchid::fission::seq_testing {

// Uniform random values in [lo, hi) (integers: truncated toward zero).
inline Tensor random_tensor(DType dtype, const Shape& shape, uint32_t seed, double lo = -2, double hi = 2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, dist(rng));
  return t;
}

// A graph input of `type` or a constant.
struct Input {
  TensorType type;
  std::optional<Tensor> constant;
  bool present = true;  // false: an omitted optional input
};
inline Input var(Shape shape, DType dtype = DType::Float32) { return {{dtype, std::move(shape)}, std::nullopt}; }
inline Input cst(Tensor t) { return {t.type(), std::move(t)}; }
inline Input none() { return {{}, std::nullopt, false}; }

// A graph computing one `op` node; every output is a graph output.
inline Graph one_node_graph(const std::string& op, const std::vector<Input>& inputs, Attributes attrs,
                            size_t num_outputs) {
  Graph g;
  g.name = op;
  Node node;
  node.name = op + "0";
  node.op = op;
  node.attrs = std::move(attrs);
  std::vector<const TensorType*> types;
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string name = "in" + std::to_string(i);
    if (!inputs[i].present) {
      node.inputs.push_back(kNoValue);
    } else if (inputs[i].constant) {
      node.inputs.push_back(g.add_constant(name, *inputs[i].constant));
    } else {
      node.inputs.push_back(g.add_value(name, inputs[i].type));
      g.inputs().push_back(node.inputs.back());
    }
  }
  for (ValueId id : node.inputs) {
    types.push_back(id == kNoValue ? nullptr : &g.type(id));
    values.push_back(id == kNoValue || !g.value(id).constant ? nullptr : &*g.value(id).constant);
  }
  std::vector<TensorType> out = reference::infer_node(node, types, values);
  for (size_t i = 0; i < num_outputs; ++i) node.outputs.push_back(g.add_value("out" + std::to_string(i), out[i]));
  g.outputs() = node.outputs;
  g.add_node(std::move(node));
  return g;
}

// Random feeds; integer inputs are drawn from [int_lo, int_hi).
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

inline int count_ops(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op == op;
  return n;
}

inline void expect_all_primitive(const Graph& g) {
  for (const Node& node : g.nodes()) EXPECT_TRUE(fission::primitive_kind(node, g).has_value()) << node.describe();
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

}  // namespace orchid::fission::seq_testing
