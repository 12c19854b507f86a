// The register-blocked GEMM of the direct kernels: C = bias + A B for a
// range of C's columns, A a constant matrix (a layer's weights) packed for
// the register tile, B given as one pointer per row (a row of X, or of a
// shifted, padded plane for an implicit GEMM).
//
// The tile is kRows rows of C by kCols columns (kRows x 4 vectors of
// accumulators); A is packed per block of kRows rows as [K][kRows], so each
// step of the sum broadcasts kRows consecutive weights and loads 4 vectors
// of one B row.
#pragma once

#include <cstdint>
#include <vector>

namespace orchid::runtime::cpu::direct {

inline constexpr int64_t kRows = 6;
inline constexpr int64_t kCols = 64;

class PackedWeights {
 public:
  PackedWeights() = default;
  // a: [m][k], row-major.
  PackedWeights(const float* a, int64_t m, int64_t k);
  int64_t rows() const { return m_; }
  int64_t depth() const { return k_; }

  // C's rows [m0, m1) (m0 a multiple of kRows) at columns [0, cols) of
  // `c` (rows ldc apart): bias[m] + sum_k A[m][k] b[k][j].
  void multiply(const float* const* b, int64_t cols, float* c, int64_t ldc, int64_t m0, int64_t m1,
                const float* bias) const;

 private:
  template <int V>
  void tile(const float* a, const float* const* b, int64_t j, float* c, int64_t ldc, int64_t rows,
            const float* bias) const;
  void tail(const float* a, const float* const* b, int64_t j, int64_t cols, float* c, int64_t ldc, int64_t rows,
            const float* bias) const;

  std::vector<float> packed_;
  int64_t m_ = 0, k_ = 0;
};

// The B rows of an implicit GEMM: padded[c][r][col] = x[c][r - top][col -
// left] for `channels` planes of ih x iw, zero outside, each padded plane
// qh x qw (qh >= ih + top, qw >= iw + left); in parallel over channels.
void pad_planes(const float* x, int64_t channels, int64_t ih, int64_t iw, int64_t top, int64_t left, int64_t qh,
                int64_t qw, float* padded);

}  // namespace orchid::runtime::cpu::direct
