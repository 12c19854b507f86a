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

PackedWeights::PackedWeights(const float* a, int64_t m, int64_t k) : m_(m), k_(k) {
  packed_.assign(size_t((m + kRows - 1) / kRows * kRows * k), 0.f);
  for (int64_t row = 0; row < m; ++row) {
    const int64_t block = row / kRows, r = row % kRows;
    for (int64_t i = 0; i < k; ++i) packed_[size_t((block * k + i) * kRows + r)] = a[row * k + i];
  }
}

void PackedWeights::multiply(const float* const* b, int64_t cols, float* c, int64_t ldc, int64_t m0, int64_t m1,
                             const float* bias) const {
  for (int64_t m = m0; m < m1; m += kRows) {
    const int64_t rows = std::min(kRows, m1 - m);
    const float* a = packed_.data() + m / kRows * kRows * k_;
    float* cm = c + m * ldc;
    int64_t j = 0;
    for (; j + kCols <= cols; j += kCols) tile<4>(a, b, j, cm, ldc, rows, bias + m);
    for (; j + kLanes <= cols; j += kLanes) tile<1>(a, b, j, cm, ldc, rows, bias + m);
    if (j < cols) tail(a, b, j, cols, cm, ldc, rows, bias + m);
  }
}

template <int V>
void PackedWeights::tile(const float* a, const float* const* b, int64_t j, float* c, int64_t ldc, int64_t rows,
                         const float* bias) const {
  Vec acc[kRows][V];
  for (int64_t r = 0; r < kRows; ++r) {
    const Vec init = splat(r < rows ? bias[r] : 0.f);
    for (int v = 0; v < V; ++v) acc[r][v] = init;
  }
  for (int64_t k = 0; k < k_; ++k) {
    const float* bk = b[k] + j;
    Vec bv[V];
    for (int v = 0; v < V; ++v) bv[v] = load(bk + v * kLanes);
    const float* ak = a + k * kRows;
    for (int64_t r = 0; r < kRows; ++r) {
      const Vec ar = splat(ak[r]);
      for (int v = 0; v < V; ++v) acc[r][v] += ar * bv[v];
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int v = 0; v < V; ++v) store(c + r * ldc + j + v * kLanes, acc[r][v]);
  }
}

void PackedWeights::tail(const float* a, const float* const* b, int64_t j, int64_t cols, float* c, int64_t ldc,
                         int64_t rows, const float* bias) const {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t col = j; col < cols; ++col) {
      float sum = bias[r];
      for (int64_t k = 0; k < k_; ++k) sum += a[k * kRows + r] * b[k][col];
      c[r * ldc + col] = sum;
    }
  }
}

void pad_planes(const float* x, int64_t channels, int64_t ih, int64_t iw, int64_t top, int64_t left, int64_t qh,
                int64_t qw, float* padded) {
  parallel_for(channels, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, qh * qw)), [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      float* dst = padded + c * qh * qw;
      std::fill(dst, dst + qh * qw, 0.f);
      for (int64_t r = 0; r < ih; ++r) std::memcpy(dst + (r + top) * qw + left, x + (c * ih + r) * iw, size_t(iw) * 4);
    }
  });
}

}  // namespace orchid::runtime::cpu::direct
