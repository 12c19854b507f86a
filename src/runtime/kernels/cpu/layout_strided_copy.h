// Strided copies: the engine under the layout kernels. Transpose, Slice,
// Expand, Concat and Pad's interior are all "output element at a multi-index
// comes from the input element at base + sum(index * stride)", with stride 0
// for broadcast axes and negative strides for reversed slices. Layout kernels
// move bytes, so the engine works per element size (1, 2, 4, 8 bytes) and
// serves every dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace orchid::runtime::cpu {

// One loop of a strided copy; strides count elements and may be 0 or negative.
struct CopyDim {
  int64_t size = 1;
  int64_t in_stride = 0;
  int64_t out_stride = 0;
};

// out[out_base + sum i_d * out_stride_d] = in[in_base + sum i_d * in_stride_d]
// for every index i over `dims` (outermost first).
struct StridedCopy {
  std::vector<CopyDim> dims;
  int64_t in_base = 0;
  int64_t out_base = 0;
};

// A copy that writes a dense row-major output of `out_shape`, reading input
// dimension d of the output with stride in_strides[d].
StridedCopy dense_output_copy(const Shape& out_shape, const std::vector<int64_t>& in_strides, int64_t in_base = 0);

// The input strides a Transpose node's output reads, one per output
// dimension: its perm (default: reversed) applied to the input's row-major
// strides; nullopt when the perm does not match the input's rank.
std::optional<std::vector<int64_t>> transpose_read_strides(const Graph& graph, const Node& transpose);

// Where a tensor's elements are read from: element i (a multi-index) at
// base + sum(i_d * strides_d), in elements of its source buffer.
struct StridedView {
  std::vector<int64_t> strides;
  int64_t base = 0;
};
StridedView row_major_view(const Shape& shape);

// What a Slice node with constant starts, ends, axes and steps reads of a
// tensor seen through `in`: its output as a view of the same buffer (starts
// clamped as the interpreter clamps them; the output shape, already
// inferred, gives the lengths). nullopt for computed parameters or a zero
// step. Defined in layout.cc, beside the Slice kernel.
std::optional<StridedView> slice_view(const Graph& graph, const Node& slice, const StridedView& in);

// A constant-mode Pad node's pads per axis of its input (negative: a crop)
// and its fill value (nullptr: zero), when pads, value and axes are all
// constant. Defined in layout.cc, beside the Pad kernel.
struct ConstantPads {
  std::vector<int64_t> begin, end;
  const Tensor* value = nullptr;
};
std::optional<ConstantPads> constant_pads(const Graph& graph, const Node& pad);

// The same copy with size-1 loops dropped and adjacent loops merged wherever
// both strides chain, so that runs of contiguous memory become one loop (and
// memcpy) and a transpose becomes a 2-D one. An empty copy keeps a size-0 loop.
StridedCopy coalesce(StridedCopy copy);

// Performs `copy` on elements of `elem_size` bytes, in parallel when large:
// memcpy of runs when the innermost loop is contiguous on both sides, a tiled
// 2-D transpose when the output's innermost loop reads across the input's
// contiguous one, and a strided element loop otherwise.
void run_strided_copy(const StridedCopy& copy, size_t elem_size, const void* in, void* out);

// Outputs of at least this many bytes are copied with non-temporal
// (streaming) stores: they do not stay in the cache anyway, and a plain
// store first reads every line it writes (Longformer's 270 MB banded-key
// Gather, 129-row runs: 11.7 -> 8.1 ms at 1 thread).
inline constexpr size_t kStreamingBytes = size_t(16) << 20;

// memcpy of `bytes`; with `streaming`, the destination's whole 64-byte lines
// are written by non-temporal stores (plain memcpy where the target has no
// AVX-512). A thread that streamed calls stream_fence() before others read.
void copy_bytes(void* dst, const void* src, size_t bytes, bool streaming);
void stream_fence();

// Sets `n` elements of `elem_size` bytes at `out` to the element at `value`.
void fill_elements(void* out, int64_t n, const void* value, size_t elem_size);

// The number of elements a copy moves.
int64_t copy_numel(const StridedCopy& copy);

}  // namespace orchid::runtime::cpu
