// Shared helpers for runtime and kernel tests: run a graph as a compiled
// program (explicit kernel groups, or one kernel per node) and compare with
// the reference interpreter. Graph builders and random feeds come from the
// fission test helpers.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "../fission/fission_test_util.h"
#include "reference/compare.h"
#include "reference/interpreter.h"
#include "runtime/executable.h"

namespace orchid::runtime::testing {

using namespace orchid::fission::testing;  // NOLINT: graph builders and feeds

// A float32 graph under construction: inputs, random constant weights
// (seeded, one seed per constant), scalars, and a chain of nodes.
struct GraphBuilder {
  Graph g;
  uint32_t seed = 11;

  ValueId input(const std::string& name, Shape shape) {
    ValueId id = g.add_value(name, {DType::Float32, std::move(shape)});
    g.inputs().push_back(id);
    return id;
  }
  ValueId constant(Shape shape, double lo = -1, double hi = 1) {
    const uint32_t s = seed++;
    return g.add_constant("c" + std::to_string(s), random_tensor(DType::Float32, shape, s, lo, hi));
  }
  ValueId scalar(float value, Shape shape = {}) {
    Tensor t = Tensor::from_vector(DType::Float32, shape, std::vector<float>{value});
    return g.add_constant("s" + std::to_string(seed++), t);
  }
  ValueId op(const std::string& name, const std::vector<ValueId>& inputs, Attributes a = {}) {
    return add_op(g, name, inputs, std::move(a))[0];
  }
  Graph finish(ValueId out) {
    g.outputs().push_back(out);
    return g;
  }
};

inline std::vector<std::string> expect_program_matches(const Graph& reference_graph, Program program,
                                                       const std::map<std::string, Tensor>& feeds,
                                                       double rtol = 1e-4, double atol = 1e-5);

// One kernel per node of `graph`, in node order.
inline std::vector<std::vector<size_t>> one_kernel_per_node(const Graph& graph) {
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < graph.nodes().size(); ++i) groups.push_back({i});
  return groups;
}

// Runs `graph` through the runtime with the given kernel groups (default: one
// per node) on `feeds` and expects every output within rtol/atol of the
// interpreter's. Returns each kernel's implementation name, so a test can
// also assert that the fast path (not the reference kernel) ran.
inline std::vector<std::string> expect_runtime_matches(const Graph& graph, const std::map<std::string, Tensor>& feeds,
                                                       std::vector<std::vector<size_t>> groups = {},
                                                       double rtol = 1e-4, double atol = 1e-5) {
  if (groups.empty()) groups = one_kernel_per_node(graph);
  Program program;
  program.graph = graph;
  for (auto& nodes : groups) program.kernels.push_back(make_group(graph, nodes));
  return expect_program_matches(graph, std::move(program), feeds, rtol, atol);
}

// As above for a prepared program (e.g. with generated kernels, or the
// primitives of `reference_graph` after fission): its outputs are compared
// with the interpreter's run of `reference_graph`.
inline std::vector<std::string> expect_program_matches(const Graph& reference_graph, Program program,
                                                       const std::map<std::string, Tensor>& feeds,
                                                       double rtol, double atol) {
  Executable executable(std::move(program));
  std::vector<Tensor> got = executable.run(feeds);
  std::vector<Tensor> want = reference::run_graph(reference_graph, feeds);
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    EXPECT_EQ(got[i].type(), want[i].type()) << "output " << i;
    reference::Comparison c = reference::compare_tensors(got[i], want[i], rtol, atol);
    EXPECT_TRUE(c.ok) << "output " << i << ": " << c.mismatch;
  }
  std::vector<std::string> implementations;
  for (const KernelInfo& info : executable.kernel_info()) implementations.push_back(info.implementation);
  return implementations;
}

// As above on uniform feeds in [lo, hi).
inline std::vector<std::string> expect_runtime_matches(const Graph& graph, uint32_t seed = 3, double lo = -2,
                                                       double hi = 2) {
  return expect_runtime_matches(graph, uniform_feeds(graph, seed, lo, hi));
}

}  // namespace orchid::runtime::testing
