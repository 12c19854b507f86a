// The iteration plan of an elementwise kernel, resolved once when the kernel
// is built: the output's dimensions with numpy broadcasting folded into
// per-input strides, size-1 dimensions dropped and adjacent dimensions merged
// where every input walks them as one, so that the innermost dimension — a
// contiguous run of the output — is as long as possible. Equal shapes and
// scalar operands come out as a single dimension: one flat loop.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "ir/tensor.h"

namespace orchid::runtime::cpu {

struct BroadcastPlan {
  int64_t numel = 0;
  std::vector<int64_t> dims;                  // merged output dimensions, outermost first (at least one)
  std::vector<std::vector<int64_t>> strides;  // per input, per merged dimension; 0 where broadcast
  // Bit j set when input j walks the innermost dimension (stride 1); clear
  // when it repeats one element along it (stride 0). Dense row-major inputs
  // have no other inner stride.
  unsigned contiguous_mask = 0;
};

// The plan of an output of `out_shape` computed from inputs of `in_shapes`,
// which broadcast to it (numpy rules, aligned to the right).
BroadcastPlan make_broadcast_plan(const Shape& out_shape, const std::vector<Shape>& in_shapes);

// Calls run(out_offset, in_offsets, count) for the contiguous runs covering
// output elements [begin, end): out[out_offset + k] is computed from, for each
// input j, element in_offsets[j] + k * (inner stride of j), k in [0, count).
// The range need not start or end on a row boundary, so that a parallel loop
// can cut the output into equal chunks whatever the shape.
template <size_t N, typename RunFn>
void for_each_run(const BroadcastPlan& plan, int64_t begin, int64_t end, RunFn&& run) {
  const size_t rank = plan.dims.size();
  const int64_t inner = plan.dims[rank - 1];
  // Position of `begin`: its row's index in the outer dimensions, and the
  // offset of that row in each input.
  std::vector<int64_t> idx(rank, 0);
  std::array<int64_t, N> row_offset{};
  int64_t row = begin / inner;
  for (size_t d = rank - 1; d-- > 0;) {
    idx[d] = row % plan.dims[d];
    row /= plan.dims[d];
    for (size_t j = 0; j < N; ++j) row_offset[j] += idx[d] * plan.strides[j][d];
  }
  int64_t k = begin % inner;
  for (int64_t pos = begin; pos < end;) {
    const int64_t count = std::min(inner - k, end - pos);
    std::array<int64_t, N> offsets;
    for (size_t j = 0; j < N; ++j) offsets[j] = row_offset[j] + k * plan.strides[j][rank - 1];
    run(pos, offsets, count);
    pos += count;
    k = 0;
    // Advance the odometer over the outer dimensions.
    for (size_t d = rank - 1; d-- > 0;) {
      if (++idx[d] < plan.dims[d]) {
        for (size_t j = 0; j < N; ++j) row_offset[j] += plan.strides[j][d];
        break;
      }
      for (size_t j = 0; j < N; ++j) row_offset[j] -= plan.strides[j][d] * (plan.dims[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace orchid::runtime::cpu
