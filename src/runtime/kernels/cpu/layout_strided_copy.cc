#include "runtime/kernels/cpu/layout_strided_copy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "reference/ops/op_utils.h"
#include "support/error.h"
#include "support/parallel.h"

namespace orchid::runtime::cpu {

namespace {

// Elements per parallel task worth a thread of its own (a few tens of KB).
constexpr int64_t kElementsPerTask = 16384;
// Tile edge of the 2-D transpose: a 32x32 tile of 8-byte elements is 8 KB,
// so the source and destination tiles both stay in L1.
constexpr int64_t kTile = 32;

// Calls fn(flat, in_offset, out_offset) for flat indices [begin, end) of the
// row-major walk over `dims`, stepping the offsets like an odometer instead of
// recomputing them per index.
template <typename F>
void walk(const std::vector<CopyDim>& dims, int64_t begin, int64_t end, int64_t in_base, int64_t out_base, F&& fn) {
  size_t n = dims.size();
  std::vector<int64_t> index(n, 0);
  int64_t rest = begin, in_off = in_base, out_off = out_base;
  for (size_t d = n; d-- > 0;) {
    index[d] = rest % dims[d].size;
    rest /= dims[d].size;
    in_off += index[d] * dims[d].in_stride;
    out_off += index[d] * dims[d].out_stride;
  }
  for (int64_t flat = begin; flat < end; ++flat) {
    fn(flat, in_off, out_off);
    for (size_t d = n; d-- > 0;) {
      in_off += dims[d].in_stride;
      out_off += dims[d].out_stride;
      if (++index[d] < dims[d].size) break;
      in_off -= dims[d].size * dims[d].in_stride;
      out_off -= dims[d].size * dims[d].out_stride;
      index[d] = 0;
    }
  }
}

int64_t numel_of(const std::vector<CopyDim>& dims) {
  int64_t n = 1;
  for (const CopyDim& d : dims) n *= d.size;
  return n;
}

// Innermost loop contiguous on both sides (or no loop at all): memcpy of rows
// (streaming stores for outputs of kStreamingBytes and more).
template <typename E>
void copy_rows(const StridedCopy& copy, const E* in, E* out) {
  std::vector<CopyDim> outer(copy.dims.begin(), copy.dims.end() - (copy.dims.empty() ? 0 : 1));
  int64_t row = copy.dims.empty() ? 1 : copy.dims.back().size;
  const bool streaming = size_t(copy_numel(copy)) * sizeof(E) >= kStreamingBytes;
  if (outer.empty()) {
    // One long run: split it so that big copies still use every thread.
    parallel_for(row, kElementsPerTask * 4, [&](int64_t begin, int64_t end) {
      copy_bytes(out + copy.out_base + begin, in + copy.in_base + begin, size_t(end - begin) * sizeof(E), streaming);
      if (streaming) stream_fence();
    });
    return;
  }
  parallel_for(numel_of(outer), std::max<int64_t>(1, kElementsPerTask / std::max<int64_t>(row, 1)),
               [&](int64_t begin, int64_t end) {
                 walk(outer, begin, end, copy.in_base, copy.out_base, [&](int64_t, int64_t i, int64_t o) {
                   copy_bytes(out + o, in + i, size_t(row) * sizeof(E), streaming);
                 });
                 if (streaming) stream_fence();
               });
}

typedef uint32_t Lanes8 __attribute__((vector_size(32)));

inline Lanes8 load8(const uint32_t* p) {
  Lanes8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store8(uint32_t* p, Lanes8 v) { std::memcpy(p, &v, sizeof v); }

// out[j] = in[2 * j] for 4-byte elements, eight at a time from two 8-wide
// loads (a space-to-depth's or a stride-2 Slice's rows: the element loop ran
// at a third of the bytes' rate).
inline int64_t copy_even_lanes(const uint32_t* __restrict in, uint32_t* __restrict out, int64_t n) {
  int64_t j = 0;
  // The loads reach in[2j + 15]: stop while that is still an element read.
  for (; j + 8 < n; j += 8) {
    store8(out + j, __builtin_shufflevector(load8(in + 2 * j), load8(in + 2 * j + 8), 0, 2, 4, 6, 8, 10, 12, 14));
  }
  return j;
}

// n elements with plain strides (restrict: the buffers never alias).
template <typename E>
void copy_run(const E* __restrict in, E* __restrict out, int64_t n, int64_t in_stride, int64_t out_stride) {
  if (in_stride == 0 && out_stride == 1) {
    std::fill_n(out, n, *in);  // a broadcast run
    return;
  }
  int64_t j = 0;
  if constexpr (sizeof(E) == 4) {
    if (in_stride == 2 && out_stride == 1) {
      j = copy_even_lanes(reinterpret_cast<const uint32_t*>(in), reinterpret_cast<uint32_t*>(out), n);
    }
  }
  for (; j < n; ++j) out[j * out_stride] = in[j * in_stride];
}

// Any strides: an element loop over the innermost dimension (stride 0
// broadcasts one element, negative strides reverse).
template <typename E>
void copy_strided(const StridedCopy& copy, const E* in, E* out) {
  std::vector<CopyDim> outer(copy.dims.begin(), copy.dims.end() - 1);
  const CopyDim inner = copy.dims.back();
  parallel_for(numel_of(outer), std::max<int64_t>(1, kElementsPerTask / std::max<int64_t>(inner.size, 1)),
               [&](int64_t begin, int64_t end) {
                 walk(outer, begin, end, copy.in_base, copy.out_base, [&](int64_t, int64_t i, int64_t o) {
                   copy_run(in + i, out + o, inner.size, inner.in_stride, inner.out_stride);
                 });
               });
}

// 8 x 8 blocks of 4-byte elements transposed in registers: eight 8-wide
// loads along r (contiguous in the input), three rounds of shuffles, eight
// 8-wide stores along c (contiguous in the output). Vector extensions and
// __builtin_shufflevector (GCC 12 and Clang), so any x86 level (and other
// targets) compiles it; with AVX the shuffles are unpack/shuffle/permute
// instructions. The bits are moved, not interpreted. (Lanes8: above.)
// out[r * out_row + c] = in[r + c * in_col] for r, c in [0, 8).
inline void transpose_block8(const uint32_t* __restrict in, uint32_t* __restrict out, int64_t out_row,
                             int64_t in_col) {
  Lanes8 a[8], b[8], c[8];
  for (int k = 0; k < 8; ++k) a[k] = load8(in + k * in_col);  // a[k][r] = in(r, column k)
  for (int k = 0; k < 8; k += 2) {
    b[k] = __builtin_shufflevector(a[k], a[k + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    b[k + 1] = __builtin_shufflevector(a[k], a[k + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int k = 0; k < 8; k += 4) {
    c[k] = __builtin_shufflevector(b[k], b[k + 2], 0, 1, 8, 9, 4, 5, 12, 13);
    c[k + 1] = __builtin_shufflevector(b[k], b[k + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    c[k + 2] = __builtin_shufflevector(b[k + 1], b[k + 3], 0, 1, 8, 9, 4, 5, 12, 13);
    c[k + 3] = __builtin_shufflevector(b[k + 1], b[k + 3], 2, 3, 10, 11, 6, 7, 14, 15);
  }
  for (int k = 0; k < 4; ++k) {
    store8(out + k * out_row, __builtin_shufflevector(c[k], c[k + 4], 0, 1, 2, 3, 8, 9, 10, 11));
    store8(out + (k + 4) * out_row, __builtin_shufflevector(c[k], c[k + 4], 4, 5, 6, 7, 12, 13, 14, 15));
  }
}

// A rows x cols block: out[r * out_row + c] = in[r + c * in_col], in kTile
// square tiles. Plain strides and restrict pointers let the compiler keep
// them in registers and vectorize the copy; 4-byte elements go through
// transpose_block8 where a whole 8 x 8 block fits (twice the element loop's
// rate on a [129, 64] -> [64, 129] batch).
template <typename E>
void copy_tile(const E* __restrict in, E* __restrict out, int64_t rows, int64_t cols, int64_t out_row,
               int64_t in_col) {
  int64_t r0 = 0;
  if constexpr (sizeof(E) == 4) {
    // Column blocks outside, row blocks inside: each input row's cache lines
    // (the tile's rows, contiguous) are used whole while they are loaded.
    const int64_t full_rows = rows / 8 * 8;
    int64_t c = 0;
    for (; c + 8 <= cols; c += 8) {
      for (int64_t r = 0; r < full_rows; r += 8) {
        transpose_block8(reinterpret_cast<const uint32_t*>(in + r + c * in_col),
                         reinterpret_cast<uint32_t*>(out + r * out_row + c), out_row, in_col);
      }
    }
    for (int64_t r = 0; r < full_rows; ++r) {
      for (int64_t cc = c; cc < cols; ++cc) out[r * out_row + cc] = in[r + cc * in_col];
    }
    r0 = full_rows;
  }
  for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
    int64_t width = std::min(kTile, cols - c0);
    for (int64_t r = r0; r < rows; ++r) {
      const E* src = in + r + c0 * in_col;
      E* dst = out + r * out_row + c0;
      for (int64_t c = 0; c < width; ++c) dst[c] = src[c * in_col];
    }
  }
}

// The output's innermost loop b (out stride 1) reads with a large stride,
// and loop a reads contiguously: copy kTile x kTile tiles so that both the
// reads (along a) and the writes (along b) use whole cache lines.
template <typename E>
void copy_tiled(const StridedCopy& copy, size_t a, const E* in, E* out) {
  const CopyDim dim_a = copy.dims[a];
  const CopyDim dim_b = copy.dims.back();
  std::vector<CopyDim> outer;
  for (size_t d = 0; d + 1 < copy.dims.size(); ++d) {
    if (d != a) outer.push_back(copy.dims[d]);
  }
  int64_t tiles_a = (dim_a.size + kTile - 1) / kTile;
  // The tiles of a as the innermost loop of the walk; `flat % tiles_a` tells which.
  outer.push_back({tiles_a, kTile * dim_a.in_stride, kTile * dim_a.out_stride});
  int64_t work = kTile * dim_b.size;
  parallel_for(numel_of(outer), std::max<int64_t>(1, kElementsPerTask / work), [&](int64_t begin, int64_t end) {
    walk(outer, begin, end, copy.in_base, copy.out_base, [&](int64_t flat, int64_t i, int64_t o) {
      int64_t rows = std::min(kTile, dim_a.size - (flat % tiles_a) * kTile);
      copy_tile(in + i, out + o, rows, dim_b.size, dim_a.out_stride, dim_b.in_stride);
    });
  });
}

// The loop (not the innermost) that reads the input contiguously, when the
// innermost one writes contiguously but does not read so.
std::optional<size_t> transpose_loop(const std::vector<CopyDim>& dims) {
  if (dims.size() < 2 || dims.back().out_stride != 1 || dims.back().in_stride == 1 || dims.back().in_stride == 0) {
    return std::nullopt;
  }
  for (size_t d = 0; d + 1 < dims.size(); ++d) {
    if (dims[d].in_stride == 1 && dims[d].size > 1) return d;
  }
  return std::nullopt;
}

template <typename E>
void run_typed(const StridedCopy& copy, const void* in, void* out) {
  const E* src = static_cast<const E*>(in);
  E* dst = static_cast<E*>(out);
  if (copy.dims.empty() || (copy.dims.back().in_stride == 1 && copy.dims.back().out_stride == 1)) {
    copy_rows(copy, src, dst);
  } else if (std::optional<size_t> a = transpose_loop(copy.dims)) {
    copy_tiled(copy, *a, src, dst);
  } else {
    copy_strided(copy, src, dst);
  }
}

}  // namespace

StridedCopy dense_output_copy(const Shape& out_shape, const std::vector<int64_t>& in_strides, int64_t in_base) {
  ORCHID_CHECK(in_strides.size() == out_shape.size()) << "strided copy rank mismatch";
  std::vector<int64_t> out_strides = shape_strides(out_shape);
  StridedCopy copy;
  copy.in_base = in_base;
  for (size_t d = 0; d < out_shape.size(); ++d) copy.dims.push_back({out_shape[d], in_strides[d], out_strides[d]});
  return copy;
}

StridedCopy coalesce(StridedCopy copy) {
  if (numel_of(copy.dims) == 0) {
    copy.dims = {{0, 0, 0}};
    return copy;
  }
  std::vector<CopyDim> merged;
  for (const CopyDim& d : copy.dims) {
    if (d.size == 1) continue;
    if (!merged.empty()) {
      CopyDim& last = merged.back();
      // (i, j) over (last, d) and i * d.size + j over one loop address the
      // same elements when last's strides are d.size times d's.
      if (last.in_stride == d.in_stride * d.size && last.out_stride == d.out_stride * d.size) {
        last = {last.size * d.size, d.in_stride, d.out_stride};
        continue;
      }
    }
    merged.push_back(d);
  }
  copy.dims = std::move(merged);
  return copy;
}

int64_t copy_numel(const StridedCopy& copy) { return numel_of(copy.dims); }

std::optional<std::vector<int64_t>> transpose_read_strides(const Graph& graph, const Node& transpose) {
  const Shape& in = graph.type(transpose.inputs[0]).shape;
  const int64_t rank = int64_t(in.size());
  std::vector<int64_t> perm = transpose.attrs.get_ints("perm");
  if (!transpose.attrs.has("perm")) {
    for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
  }
  if (int64_t(perm.size()) != rank) return std::nullopt;
  const std::vector<int64_t> in_strides = shape_strides(in);
  std::vector<int64_t> strides;
  for (int64_t p : reference::normalize_axes(perm, rank)) strides.push_back(in_strides[size_t(p)]);
  return strides;
}

void copy_bytes(void* dst, const void* src, size_t bytes, bool streaming) {
#if defined(__AVX512F__)
  if (streaming && bytes >= 256) {
    auto* d = static_cast<std::byte*>(dst);
    const auto* s = static_cast<const std::byte*>(src);
    const size_t head = (64 - reinterpret_cast<uintptr_t>(d) % 64) % 64;
    if (head > 0) std::memcpy(d, s, head);
    size_t i = head;
    for (; i + 64 <= bytes; i += 64) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i), _mm512_loadu_si512(s + i));
    }
    if (i < bytes) std::memcpy(d + i, s + i, bytes - i);
    return;
  }
#endif
  (void)streaming;
  std::memcpy(dst, src, bytes);
}

void stream_fence() {
#if defined(__AVX512F__)
  _mm_sfence();
#endif
}

void run_strided_copy(const StridedCopy& copy, size_t elem_size, const void* in, void* out) {
  if (numel_of(copy.dims) == 0) return;
  switch (elem_size) {
    case 1: return run_typed<uint8_t>(copy, in, out);
    case 2: return run_typed<uint16_t>(copy, in, out);
    case 4: return run_typed<uint32_t>(copy, in, out);
    case 8: return run_typed<uint64_t>(copy, in, out);
  }
  ORCHID_CHECK(false) << "no strided copy for elements of " << elem_size << " bytes";
}

void fill_elements(void* out, int64_t n, const void* value, size_t elem_size) {
  auto fill = [&]<typename E>() {
    E v;
    std::memcpy(&v, value, sizeof(E));
    E* dst = static_cast<E*>(out);
    parallel_for(n, kElementsPerTask * 4, [&](int64_t begin, int64_t end) { std::fill(dst + begin, dst + end, v); });
  };
  switch (elem_size) {
    case 1: return fill.template operator()<uint8_t>();
    case 2: return fill.template operator()<uint16_t>();
    case 4: return fill.template operator()<uint32_t>();
    case 8: return fill.template operator()<uint64_t>();
  }
  ORCHID_CHECK(false) << "no fill for elements of " << elem_size << " bytes";
}

}  // namespace orchid::runtime::cpu
