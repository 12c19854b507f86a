// Attention as one kernel: O = softmax(scale * Q K^T, masked) V over the
// last axis, the primitives fission and the exporters leave it as (MatMul,
// Mul or Div by a scalar, Where with a constant condition or Add of a
// constant mask, ReduceMax, Sub, Exp, ReduceSum, Div, MatMul), computed per
// batch item and block of query rows: the block's scores (rows x keys) are
// made, masked, exponentiated and multiplied by V while they are in cache,
// so the L x L scores are never written to memory.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/kernel.h"

namespace orchid::runtime::cpu {

// The nodes of the attention whose first product is node `matmul`
// (ascending), or nullopt when
// the nodes after it do not form one.
std::optional<std::vector<size_t>> find_attention(const Graph& graph, size_t matmul);

// (make_attention_kernel, the kernel for a group of exactly such nodes, is
// with the other factories in registry.h.)

}  // namespace orchid::runtime::cpu
