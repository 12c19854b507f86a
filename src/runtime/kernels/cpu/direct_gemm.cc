#include "runtime/kernels/cpu/direct_gemm.h"

#include <algorithm>
#include <cstring>

#include "runtime/kernels/cpu/simd.h"
#include "support/parallel.h"

namespace orchid::runtime::cpu::direct {

using simd::kLanes;
using simd::load;
using simd::splat;
using simd::store;
using simd::Vec;

static_assert(kCols == 4 * kLanes, "the tile is four vectors wide");

namespace {

int64_t padded(int64_t m, int64_t block) { return (m + block - 1) / block * block; }

}  // namespace

PackedWeights::PackedWeights(const float* a, int64_t m, int64_t k, int64_t row_stride, int64_t column_stride,
                             int64_t block_rows)
    : m_(m), k_(k) {
  if (block_rows == 8 || (block_rows == 0 && padded(m, 8) * 20 < padded(m, kRows) * 19)) {
    block_ = 8;  // asked for, or 8-row blocks waste 5% fewer rows
  }
  if (block_rows == 0 && padded(m, 7) * 20 < std::min(padded(m, kRows), padded(m, block_)) * 19) {
    block_ = 7;  // 7-row blocks waste 5% fewer rows than either (21 channels: 21, not 24)
  }
  packed_.resize(size_t(padded(m, block_) * k));
  for (int64_t m0 = 0; m0 < m; m0 += block_) {
    const int64_t rows = std::min(block_, m - m0);
    float* out = packed_.data() + m0 * k;
    for (int64_t i = 0; i < k; ++i, out += block_) {
      const float* column = a + m0 * row_stride + i * column_stride;
      for (int64_t r = 0; r < rows; ++r) out[r] = column[r * row_stride];
      for (int64_t r = rows; r < block_; ++r) out[r] = 0.f;
    }
  }
}

void PackedWeights::multiply(const float* const* b, int64_t cols, float* c, int64_t ldc, int64_t m0, int64_t m1,
                             const float* bias) const {
  for (int64_t m = m0; m < m1; m += block_) {
    const int64_t rows = std::min(block_, m1 - m);
    const float* a = packed_.data() + m * k_;
    if (block_ == 8) {
      multiply_block<8>(a, b, cols, c + m * ldc, ldc, rows, bias + m);
    } else if (block_ == 7) {
      multiply_block<7>(a, b, cols, c + m * ldc, ldc, rows, bias + m);
    } else {
      multiply_block<kRows>(a, b, cols, c + m * ldc, ldc, rows, bias + m);
    }
  }
}

// One block of R rows: tiles of 4 (R = 6 or 7: 24 or 28 accumulators of the
// 32 registers) or 3 (R = 8: 24; then one of 2 where two vectors remain)
// vectors, then single vectors, then the tail. (8 x 3 took YOLOX-Nano's
// 12 -> 16 stem conv from 1.70 to 1.57 ms against 8 x 2.)
template <int R>
void PackedWeights::multiply_block(const float* a, const float* const* b, int64_t cols, float* c, int64_t ldc,
                                   int64_t rows, const float* bias) const {
  constexpr int kWide = R == 8 ? 3 : 4;
  int64_t j = 0;
  for (; j + kWide * kLanes <= cols; j += kWide * kLanes) tile<R, kWide>(a, b, j, c, ldc, rows, bias);
  if (R == 8 && j + 2 * kLanes <= cols) {
    tile<R, 2>(a, b, j, c, ldc, rows, bias);
    j += 2 * kLanes;
  }
  for (; j + kLanes <= cols; j += kLanes) tile<R, 1>(a, b, j, c, ldc, rows, bias);
  if (j < cols) tail<R>(a, b, j, cols, c, ldc, rows, bias);
}

template <int R, int V>
void PackedWeights::tile(const float* a, const float* const* b, int64_t j, float* c, int64_t ldc, int64_t rows,
                         const float* bias) const {
  Vec acc[R][V];
  for (int64_t r = 0; r < R; ++r) {
    const Vec init = splat(r < rows ? bias[r] : 0.f);
    for (int v = 0; v < V; ++v) acc[r][v] = init;
  }
  for (int64_t k = 0; k < k_; ++k) {
    const float* bk = b[k] + j;
    Vec bv[V];
    for (int v = 0; v < V; ++v) bv[v] = load(bk + v * kLanes);
    const float* ak = a + k * R;
    for (int64_t r = 0; r < R; ++r) {
      const Vec ar = splat(ak[r]);
      for (int v = 0; v < V; ++v) acc[r][v] += ar * bv[v];
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int v = 0; v < V; ++v) store(c + r * ldc + j + v * kLanes, acc[r][v]);
  }
}

// The last cols - j (< kLanes) columns: B's pieces copied into zero-padded
// rows of one vector, one vector tile on them, its first columns kept (a
// scalar loop over the whole sum per column cost 13x).
template <int R>
void PackedWeights::tail(const float* a, const float* const* b, int64_t j, int64_t cols, float* c, int64_t ldc,
                         int64_t rows, const float* bias) const {
  thread_local std::vector<float> pieces;
  thread_local std::vector<const float*> piece_rows;
  const int64_t n = cols - j;
  pieces.assign(size_t(k_ * kLanes), 0.f);
  piece_rows.resize(size_t(k_));
  for (int64_t k = 0; k < k_; ++k) {
    std::memcpy(pieces.data() + k * kLanes, b[k] + j, size_t(n) * 4);
    piece_rows[size_t(k)] = pieces.data() + k * kLanes;
  }
  float tile_out[R * kLanes];
  tile<R, 1>(a, piece_rows.data(), 0, tile_out, kLanes, rows, bias);
  for (int64_t r = 0; r < rows; ++r) std::memcpy(c + r * ldc + j, tile_out + r * kLanes, size_t(n) * 4);
}

void pad_planes(const float* x, int64_t channels, int64_t ih, int64_t iw, int64_t top, int64_t left, int64_t qh,
                int64_t qw, float* padded) {
  parallel_for(channels, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, qh * qw)), [&](int64_t begin, int64_t end) {
    pad_rows(x + begin * ih * iw, end - begin, ih, iw, top, left, qw, 0, qh, padded + begin * qh * qw);
  });
}

void pad_rows(const float* x, int64_t channels, int64_t ih, int64_t iw, int64_t top, int64_t left, int64_t qw,
              int64_t r0, int64_t rows, float* padded) {
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t r = 0; r < rows; ++r) {
      float* dst = padded + (c * rows + r) * qw;
      const int64_t from = r0 + r - top;  // its input row
      if (from < 0 || from >= ih) {
        std::fill(dst, dst + qw, 0.f);
        continue;
      }
      std::fill(dst, dst + left, 0.f);
      std::memcpy(dst + left, x + (c * ih + from) * iw, size_t(iw) * 4);
      std::fill(dst + left + iw, dst + qw, 0.f);
    }
  }
}

}  // namespace orchid::runtime::cpu::direct
