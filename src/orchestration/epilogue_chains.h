// The epilogue chain of a linear primitive: the nodes after it that a oneDNN
// kernel can compute as post-ops. The chain grows one step at a time along
// sole readers (a value read by one node only, and not a graph output), or by
// SiLU's Sigmoid + Mul pair, HardSwish's five nodes or an arithmetic
// region reading the value more than once (GELU), so the kernel writes only its last value and can
// run at its last node's place. Shared by the baseline plan (the longest
// chain) and candidate enumeration (every prefix). Before a MatMul, the
// Transpose that computes its second operand can join the kernel too (a
// prologue: the kernel reads the Transpose's input through strides).
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>
#include <vector>

#include "ir/graph.h"

namespace orchid::orchestration {

class EpilogueChains {
 public:
  explicit EpilogueChains(const Graph& graph);

  // {anchor, e1, ..., ek} for each k >= 1 such that `accepts` accepts the
  // group (ascending k); growth stops at the first step it turns down.
  std::vector<std::vector<size_t>> prefixes(size_t anchor,
                                            const std::function<bool(const std::vector<size_t>&)>& accepts) const;

  // The Transpose node computing a MatMul anchor's second operand, when the
  // anchor is the only reader of that operand (which the kernel's rules may
  // still turn down).
  std::optional<size_t> operand_transpose(size_t anchor) const;

 private:
  std::optional<std::vector<size_t>> next_epilogue(ValueId value) const;
  std::optional<std::vector<size_t>> silu_after(ValueId value) const;
  std::optional<std::vector<size_t>> hard_swish_after(ValueId value) const;
  std::optional<std::vector<size_t>> mish_after(ValueId value) const;
  std::optional<std::vector<size_t>> leaky_relu_after(ValueId value) const;
  std::optional<std::vector<size_t>> arithmetic_region_after(ValueId value) const;
  bool arithmetic(size_t node) const;
  bool closed_inputs(const std::set<size_t>& region, ValueId value, std::vector<ValueId>& open) const;
  std::optional<size_t> sole_consumer(ValueId value) const;
  std::optional<size_t> reader(ValueId value, const char* op) const;
  bool follow(std::vector<size_t>& nodes, std::initializer_list<const char*> ops) const;

  const Graph& graph_;
  std::vector<std::vector<size_t>> consumers_;  // per value: nodes reading it (once per read)
  std::vector<std::optional<size_t>> producer_;  // per value: the node computing it
  std::vector<bool> graph_output_;
};

}  // namespace orchid::orchestration
