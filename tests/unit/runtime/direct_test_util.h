// Shared by the direct kernels' tests (direct_conv_test.cc,
// direct_matmul_test.cc, direct_channels_last_test.cc): a whole
// graph as one kernel of a direct variant against the interpreter.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/kernels/cpu/direct_conv.h"
#include "runtime/kernels/cpu/registry.h"
#include "runtime_test_util.h"

namespace orchid::runtime::testing {

inline std::vector<size_t> all_nodes(const Graph& graph) {
  std::vector<size_t> all;
  for (size_t i = 0; i < graph.nodes().size(); ++i) all.push_back(i);
  return all;
}

// Epilogue chains after a conv (value v of `channels` channels, output
// shape `out`): 1 bias + ReLU, 2 SiLU, 3 a residual Add of a runtime tensor
// then Clip, 4 Tanh then a per-channel scale, 5 HardSwish, else none.
inline ValueId add_conv_epilogue(GraphBuilder& b, ValueId v, int kind, int64_t channels, const Shape& out) {
  switch (kind) {
    case 1:  // bias + ReLU
      return b.op("Relu", {b.op("Add", {v, b.constant({channels, 1, 1})})});
    case 2: {  // SiLU (fission's Sigmoid + Mul pair)
      ValueId s = b.op("Sigmoid", {v});
      return b.op("Mul", {v, s});
    }
    case 3:  // residual Add of a runtime tensor, then Clip's bounds
      return b.op("Min", {b.op("Max", {b.op("Add", {v, b.input("r", out)}), b.scalar(-1.f)}), b.scalar(1.5f)});
    case 4:  // a per-channel scale after an activation (a binary post-op of constants)
      return b.op("Mul", {b.op("Tanh", {v}), b.constant({channels, 1, 1})});
    case 5: {  // HardSwish (fission's five nodes)
      ValueId gate = b.op("Add", {b.op("Div", {v, b.scalar(6.f)}), b.scalar(0.5f)});
      return b.op("Mul", {v, b.op("Min", {b.op("Max", {gate, b.scalar(0.f)}), b.scalar(1.f)})});
    }
    case 6: {  // GELU as PyTorch exports it: x * (1 + erf(x / sqrt 2)) * 0.5
      ValueId e = b.op("Add", {b.op("Erf", {b.op("Div", {v, b.scalar(1.4142135f)})}), b.scalar(1.f)});
      return b.op("Mul", {b.op("Mul", {v, e}), b.scalar(0.5f)});
    }
    default:
      return v;
  }
}

// The whole graph as one kernel of `variant` (which must be one of its
// implementations), run twice (no state may leak between runs) against the
// interpreter; the kernel must be `implementation`.
inline void expect_direct(const Graph& graph, const std::string& implementation,
                          const std::string& variant = cpu::kDirectVariant) {
  const KernelGroup group = make_group(graph, all_nodes(graph));
  const std::vector<std::string> variants = cpu::linear_variants(graph, group);
  ASSERT_NE(std::find(variants.begin(), variants.end(), variant), variants.end()) << variant;
  Program program;
  program.graph = graph;
  program.kernels.push_back(group);
  program.kernels.back().variant = variant;
  const std::map<std::string, Tensor> feeds = uniform_feeds(graph, 7, -2, 2);
  Executable executable(std::move(program));
  const std::vector<Tensor> want = reference::run_graph(graph, feeds);
  for (int run = 0; run < 2; ++run) {
    const std::vector<Tensor> got = executable.run(feeds);
    ASSERT_EQ(got.size(), want.size());
    reference::Comparison c = reference::compare_tensors(got[0], want[0], 1e-4, 1e-4);
    EXPECT_TRUE(c.ok) << c.mismatch;
  }
  EXPECT_EQ(executable.kernel_info().at(0).implementation, implementation);
}

}  // namespace orchid::runtime::testing
