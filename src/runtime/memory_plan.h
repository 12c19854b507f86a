// The memory plan: every intermediate tensor (a kernel output that is not a
// graph output) gets an offset in one arena, reused once the tensor is dead.
// Lifetimes are kernel-index intervals [producer, last consumer]; two tensors
// share bytes only when their intervals are disjoint, so a kernel's inputs and
// outputs never alias.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "runtime/program.h"

namespace orchid::runtime {

constexpr size_t kArenaAlignment = 64;

struct MemoryPlan {
  std::vector<int64_t> offset;        // per ValueId: byte offset in the arena, -1 if not in it
  size_t arena_bytes = 0;             // the arena's size: peak of live intermediates, after packing
  size_t intermediate_bytes = 0;      // sum of all intermediates (no reuse)
  size_t num_intermediates = 0;
};

// `bytes`, when given, overrides a value's size (per ValueId; 0 = dense
// size): tensors in a native layout may take more (padded channel blocks).
// `same_bytes` pairs (alias, source) of intermediates that are one buffer
// (a Reshape's output and input, Kernel::output_is_input_bytes), each alias
// produced after its source: the alias takes the source's offset, and the
// source lives until the alias's last reader.
MemoryPlan plan_memory(const Program& program, const std::vector<size_t>& bytes = {},
                       const std::vector<std::pair<ValueId, ValueId>>& same_bytes = {});

}  // namespace orchid::runtime
