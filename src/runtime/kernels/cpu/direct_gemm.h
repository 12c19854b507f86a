// The register-blocked GEMM of the direct kernels: C = bias + A B for a
// range of C's columns, A a constant matrix (a layer's weights) packed for
// the register tile, B given as one pointer per row (a row of X, or of a
// shifted, padded plane for an implicit GEMM).
//
// The tile is kRows rows of C by kCols columns (kRows x 4 vectors of
// accumulators), or 8 rows by 48 columns (8 x 3 vectors, then one tile of
// 2 where 32 columns remain) where C's rows fill 8-row blocks with clearly
// less padding (16, 32 or 56 channels, say: 6-row blocks would compute 18,
// 36 or 60), or 7 rows by kCols where 7-row blocks pad less than both (21
// channels). A is packed per block of rows
// as [K][block rows], so each step of the sum broadcasts a block's
// consecutive weights and loads the tile's vectors of one B row.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace orchid::runtime::cpu::direct {

inline constexpr int64_t kRows = 6;
inline constexpr int64_t kCols = 64;

class PackedWeights {
 public:
  PackedWeights() = default;
  // a: [m][k], row-major.
  PackedWeights(const float* a, int64_t m, int64_t k) : PackedWeights(a, m, k, k, 1) {}
  // A[row][i] = a[row * row_stride + i * column_stride] (row_stride 1: A is
  // the transpose of a row-major [k][m]); block_rows 6 or 8, 0 to choose
  // (6, 7 or 8) by the padding.
  PackedWeights(const float* a, int64_t m, int64_t k, int64_t row_stride, int64_t column_stride,
                int64_t block_rows = 0);
  int64_t rows() const { return m_; }
  int64_t depth() const { return k_; }
  // Rows per packed block: 6 (kRows), 7 or 8.
  int64_t block_rows() const { return block_; }
  // The packed matrix (Kernel::weight_buffers).
  std::span<const std::byte> bytes() const { return std::as_bytes(std::span(packed_)); }

  // C's rows [m0, m1) (m0 a multiple of block_rows()) at columns [0, cols) of
  // `c` (rows ldc apart): bias[m] + sum_k A[m][k] b[k][j].
  void multiply(const float* const* b, int64_t cols, float* c, int64_t ldc, int64_t m0, int64_t m1,
                const float* bias) const;

 private:
  template <int R>
  void multiply_block(const float* a, const float* const* b, int64_t cols, float* c, int64_t ldc, int64_t rows,
                      const float* bias) const;
  template <int R, int V>
  void tile(const float* a, const float* const* b, int64_t j, float* c, int64_t ldc, int64_t rows,
            const float* bias) const;
  template <int R>
  void tail(const float* a, const float* const* b, int64_t j, int64_t cols, float* c, int64_t ldc, int64_t rows,
            const float* bias) const;

  std::vector<float> packed_;
  int64_t m_ = 0, k_ = 0, block_ = kRows;
};

// The B rows of an implicit GEMM: padded[c][r][col] = x[c][r - top][col -
// left] for `channels` planes of ih x iw, zero outside, each padded plane
// qh x qw (qh >= ih + top, qw >= iw + left); in parallel over channels.
void pad_planes(const float* x, int64_t channels, int64_t ih, int64_t iw, int64_t top, int64_t left, int64_t qh,
                int64_t qw, float* padded);

// Rows [r0, r0 + rows) of those padded planes, for `channels` planes, one
// after another (rows x qw floats each), on the calling thread.
void pad_rows(const float* x, int64_t channels, int64_t ih, int64_t iw, int64_t top, int64_t left, int64_t qw,
              int64_t r0, int64_t rows, float* padded);

}  // namespace orchid::runtime::cpu::direct
