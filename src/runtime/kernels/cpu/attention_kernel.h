// Attention as one kernel: O = softmax(scale * Q K^T, masked) V over the
// last axis, the primitives fission and the exporters leave it as (MatMul,
// Mul or Div by a scalar, Where with a constant condition or Add of a
// constant mask, ReduceMax, Sub, Exp, ReduceSum, Div, MatMul), computed per
// batch item and block of query rows: the block's scores (rows x keys) are
// made, masked, exponentiated and multiplied by V while they are in cache,
// so the L x L scores are never written to memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/kernel.h"

namespace orchid::runtime::cpu {

// The attention kernel is offered (orchestration's candidates) when each
// batch item's scores have at least this many elements: below it the
// separate kernels (oneDNN's batched products, a generated softmax) measured
// as fast or faster (ViT-S 197 x 197, BERT 128 x 128; docs/results.md).
inline constexpr int64_t kMinAttentionScores = 256 * 256;

// The number of scores per batch item (Lq x Lk) of the attention found at
// `matmul` (find_attention), 0 when none.
int64_t attention_scores(const Graph& graph, size_t matmul);

// The nodes of the attention whose first product is node `matmul`
// (ascending), or nullopt when
// the nodes after it do not form one.
std::optional<std::vector<size_t>> find_attention(const Graph& graph, size_t matmul);

// (make_attention_kernel, the kernel for a group of exactly such nodes, is
// with the other factories in registry.h.)

}  // namespace orchid::runtime::cpu
