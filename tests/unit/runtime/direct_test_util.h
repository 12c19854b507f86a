// Shared by the direct kernels' tests (direct_conv_test.cc,
// direct_matmul_test.cc): a whole graph as one kernel of the "direct"
// variant against the interpreter.
#pragma once

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

// The whole graph as one kernel of the "direct" variant (which must be its
// only other implementation), run twice (no state may leak between runs)
// against the interpreter; the kernel must be `implementation`.
inline void expect_direct(const Graph& graph, const std::string& implementation) {
  const KernelGroup group = make_group(graph, all_nodes(graph));
  ASSERT_EQ(cpu::linear_variants(graph, group), std::vector<std::string>{cpu::kDirectVariant});
  Program program;
  program.graph = graph;
  program.kernels.push_back(group);
  program.kernels.back().variant = cpu::kDirectVariant;
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
