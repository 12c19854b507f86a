// G2BMM and GBMM on the CPU, float32 (semantics: reference/ops/banded.h).
//
// Both are sums of scaled rows. For an output row (b, m) and a run of its
// columns, out[j] = Sum_t coef[t] * src[t * stride + j]:
//  - GBMM: t runs over the band's taps w whose B row m + d*(w - W) lies in
//    [0, N), coef is A's row, src B's rows: an axpy of B rows over k.
//  - G2BMM: t runs over k, coef is A's row, and src is B transposed, per
//    batch and per residue r of the rows modulo d: T_r[k][j] = B[j*d + r][k].
//    For m = q*d + r, tap w reads B row d*(q + w - W) + r = T_r column
//    q - W + w, so the band is a contiguous run of every T_r row.
//    Blocks of 16 rows whose taps all lie inside B are one small GEMM of
//    the direct kernels (direct_gemm.h) on the union of their windows, its
//    diagonal strip kept (band_by_gemm); the rows near the ends are summed
//    as below.
// Taps whose B row is outside [0, N) are skipped by narrowing the run of
// taps per row (no test in the inner loop); their outputs are zero. A run is
// computed in blocks whose accumulators stay in vector registers (8, 4, 2, 1
// vectors, then a masked or scalar tail). Sums are reassociated relative to
// the reference (and fused multiply-adds round once), nothing else.
#include "runtime/kernels/cpu/banded_kernel.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "runtime/kernels/cpu/direct_gemm.h"
#include "runtime/kernels/cpu/registry.h"
#include "support/error.h"
#include "support/parallel.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace orchid::runtime::cpu {

namespace {

#if defined(__AVX512F__)
constexpr int64_t kLanes = 16;
using Vec = __m512;
inline Vec vzero() { return _mm512_setzero_ps(); }
inline Vec vset1(float x) { return _mm512_set1_ps(x); }
inline Vec vload(const float* p) { return _mm512_loadu_ps(p); }
inline void vstore(float* p, Vec v) { _mm512_storeu_ps(p, v); }
inline Vec vfma(Vec acc, Vec a, Vec b) { return _mm512_fmadd_ps(a, b, acc); }
#else
// GCC/clang vector extensions: the compiler picks the instructions.
constexpr int64_t kLanes = 8;
typedef float Vec __attribute__((vector_size(32)));
inline Vec vzero() { return Vec{}; }
inline Vec vset1(float x) { return x - Vec{}; }  // a broadcast (simd::splat)
inline Vec vload(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void vstore(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }
inline Vec vfma(Vec acc, Vec a, Vec b) { return acc + a * b; }
#endif

// Multiply-adds worth a thread of their own.
constexpr int64_t kWorkPerTask = 32768;

// Independent accumulator chains a block keeps, so that the latency of
// fused multiply-adds (4 cycles, 2 per cycle) does not bound a narrow block.
constexpr int kChains = 8;

// out[0, V * kLanes) = Sum_t coef[t] * src[t * stride + j]. A block of V < 8
// vectors splits the terms over U = 8 / V chains, summed at the end.
template <int V>
inline void sum_block(int64_t terms, const float* coef, const float* src, int64_t stride, float* out) {
  constexpr int U = V >= kChains ? 1 : kChains / V;
  Vec acc[U][V];
  for (int u = 0; u < U; ++u) {
    for (int v = 0; v < V; ++v) acc[u][v] = vzero();
  }
  int64_t t = 0;
  for (; t + U <= terms; t += U) {
    for (int u = 0; u < U; ++u) {
      const Vec c = vset1(coef[t + u]);
      const float* s = src + (t + u) * stride;
      for (int v = 0; v < V; ++v) acc[u][v] = vfma(acc[u][v], c, vload(s + v * kLanes));
    }
  }
  for (; t < terms; ++t) {
    const Vec c = vset1(coef[t]);
    for (int v = 0; v < V; ++v) acc[0][v] = vfma(acc[0][v], c, vload(src + t * stride + v * kLanes));
  }
  for (int u = 1; u < U; ++u) {
    for (int v = 0; v < V; ++v) acc[0][v] = acc[0][v] + acc[u][v];
  }
  for (int v = 0; v < V; ++v) vstore(out + v * kLanes, acc[0][v]);
}

// The same for n < kLanes columns.
inline void sum_tail(int64_t n, int64_t terms, const float* coef, const float* src, int64_t stride, float* out) {
#if defined(__AVX512F__)
  const __mmask16 mask = __mmask16((1u << n) - 1);
  Vec acc[kChains];
  for (int u = 0; u < kChains; ++u) acc[u] = vzero();
  int64_t t = 0;
  for (; t + kChains <= terms; t += kChains) {
    for (int u = 0; u < kChains; ++u) {
      acc[u] = vfma(acc[u], vset1(coef[t + u]), _mm512_maskz_loadu_ps(mask, src + (t + u) * stride));
    }
  }
  for (; t < terms; ++t) acc[0] = vfma(acc[0], vset1(coef[t]), _mm512_maskz_loadu_ps(mask, src + t * stride));
  for (int u = 1; u < kChains; ++u) acc[0] = acc[0] + acc[u];
  _mm512_mask_storeu_ps(out, mask, acc[0]);
#else
  float acc[kLanes] = {};
  for (int64_t t = 0; t < terms; ++t) {
    for (int64_t j = 0; j < n; ++j) acc[j] += coef[t] * src[t * stride + j];
  }
  std::memcpy(out, acc, size_t(n) * sizeof(float));
#endif
}

// out[0, n) = Sum_{t < terms} coef[t] * src[t * stride + j].
void sum_rows(int64_t n, int64_t terms, const float* coef, const float* src, int64_t stride, float* out) {
  int64_t j = 0;
  for (; j + 8 * kLanes <= n; j += 8 * kLanes) sum_block<8>(terms, coef, src + j, stride, out + j);
  if (j + 4 * kLanes <= n) sum_block<4>(terms, coef, src + j, stride, out + j), j += 4 * kLanes;
  if (j + 2 * kLanes <= n) sum_block<2>(terms, coef, src + j, stride, out + j), j += 2 * kLanes;
  if (j + kLanes <= n) sum_block<1>(terms, coef, src + j, stride, out + j), j += kLanes;
  if (j < n) sum_tail(n - j, terms, coef, src + j, stride, out + j);
}

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The taps [lo, hi) of row m whose B row m + d*(w - W) lies in [0, N).
std::pair<int64_t, int64_t> valid_taps(const reference::BandedDims& d, int64_t m) {
  const int64_t lo = std::max<int64_t>(0, d.width - m / d.dilation);
  const int64_t hi = std::min<int64_t>(d.band(), d.width + floor_div(d.n - 1 - m, d.dilation) + 1);
  return {lo, std::max(lo, hi)};
}

int64_t grain_for(int64_t work_per_item) {
  return std::max<int64_t>(1, kWorkPerTask / std::max<int64_t>(1, work_per_item));
}

// The transposed B of G2BMM: per batch and residue r < residues, K rows of
// `ld` floats, T_r[k][j] = B[j*d + r][k] for j < ceil((N - r) / d). The row
// length is an odd number of cache lines, so the K rows a block reads do not
// all fall into the same cache sets.
struct Transposed {
  int64_t residues = 0, ld = 0;
  const float* at(const reference::BandedDims& d, int64_t b, int64_t r) const {
    return data + (b * residues + r) * d.k * ld;
  }
  float* data = nullptr;
};

constexpr int64_t kTile = 16;

// dst[k * ld + j] = src[j * src_stride + k] for j < rows, k < cols (at most kTile each).
void transpose_tile_scalar(int64_t rows, int64_t cols, const float* src, int64_t src_stride, float* dst, int64_t ld) {
  for (int64_t j = 0; j < rows; ++j) {
    for (int64_t k = 0; k < cols; ++k) dst[k * ld + j] = src[j * src_stride + k];
  }
}

// The same for a full 16 x 16 tile. Without AVX-512 the compiler's code for
// the scalar loop is used.
void transpose_tile(const float* src, int64_t src_stride, float* dst, int64_t ld) {
#if defined(__AVX512F__)
  // Four butterfly stages; the stage of block size s swaps bit s of the row
  // and of the column index: in every group of 2s columns, r'[i] takes
  // r[i+s]'s first s columns as its last s, r'[i+s] r[i]'s last s as its first s.
  Vec r[kTile];
  for (int64_t j = 0; j < kTile; ++j) r[j] = vload(src + j * src_stride);
  for (int s = 8; s >= 1; s /= 2) {
    alignas(64) int32_t lo_index[kTile], hi_index[kTile];
    for (int p = 0; p < kTile; ++p) {
      lo_index[p] = (p & s) ? kTile + p - s : p;
      hi_index[p] = (p & s) ? kTile + p : p + s;
    }
    const __m512i lo = _mm512_load_si512(lo_index), hi = _mm512_load_si512(hi_index);
    for (int i = 0; i < kTile; ++i) {
      if (i & s) continue;
      const Vec a = r[i], b = r[i + s];
      r[i] = _mm512_permutex2var_ps(a, lo, b);
      r[i + s] = _mm512_permutex2var_ps(a, hi, b);
    }
  }
  for (int64_t k = 0; k < kTile; ++k) vstore(dst + k * ld, r[k]);
#else
  transpose_tile_scalar(kTile, kTile, src, src_stride, dst, ld);
#endif
}

Transposed transpose_b(const reference::BandedDims& d, const float* b, std::vector<float>& scratch) {
  Transposed t;
  t.residues = std::min(d.dilation, d.n);
  const int64_t columns = (d.n + d.dilation - 1) / d.dilation;
  t.ld = (columns + 31) / 32 * 32 + 16;
  scratch.resize(size_t(d.batch * t.residues * d.k * t.ld));
  t.data = scratch.data();
  parallel_for(d.batch * t.residues, grain_for(columns * d.k), [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t batch = item / t.residues, r = item % t.residues;
      const int64_t count = (d.n - r + d.dilation - 1) / d.dilation;
      const float* src = b + batch * d.n * d.k;
      float* dst = t.data + item * d.k * t.ld;
      for (int64_t j0 = 0; j0 < count; j0 += kTile) {
        for (int64_t k0 = 0; k0 < d.k; k0 += kTile) {
          const int64_t rows = std::min(kTile, count - j0), cols = std::min(kTile, d.k - k0);
          const float* from = src + (j0 * d.dilation + r) * d.k + k0;
          float* to = dst + k0 * t.ld + j0;
          if (rows == kTile && cols == kTile) {
            transpose_tile(from, d.dilation * d.k, to, t.ld);
          } else {
            transpose_tile_scalar(rows, cols, from, d.dilation * d.k, to, t.ld);
          }
        }
      }
    }
  });
  return t;
}

class BandedKernel : public Kernel {
 public:
  BandedKernel(reference::BandedDims dims, size_t a_slot, size_t b_slot)
      : dims_(dims), a_slot_(a_slot), b_slot_(b_slot) {}

  void run(const KernelArgs& args) override {
    const auto* a = static_cast<const float*>(args.inputs[a_slot_]);
    const auto* b = static_cast<const float*>(args.inputs[b_slot_]);
    auto* c = static_cast<float*>(args.outputs[0]);
    if (dims_.g2bmm) {
      g2bmm_f32(dims_, a, b, c, scratch_);
    } else {
      gbmm_f32(dims_, a, b, c);
    }
  }

  std::string implementation() const override { return dims_.g2bmm ? "banded g2bmm" : "banded gbmm"; }

 private:
  reference::BandedDims dims_;
  size_t a_slot_, b_slot_;
  std::vector<float> scratch_;
};

// Rows of one batch and residue per task of G2BMM; two of the GEMM's 8-row blocks.
constexpr int64_t kRowBlock = 16;

bool all_taps_valid(const reference::BandedDims& d, int64_t m) {
  return valid_taps(d, m) == std::pair<int64_t, int64_t>(0, d.band());
}

// kRowBlock rows q0.. of residue r whose taps all lie inside B, as one GEMM:
// P[i][j] = Sum_k A[q0 + i][k] T_r[k][q0 - W + j] for j < band + kRowBlock - 1,
// and row q0 + i's band is P[i][i, i + band), a diagonal strip of P. That is
// (band + 15) / band of the band's products (1.12x for Longformer's 129
// taps) at the register-blocked GEMM's rate, where a loaded vector of T_r
// serves 8 rows, instead of a load per multiply-add. `a_rows` is row q0 of
// A, the next rows `a_stride` apart; `out` row q0's band, the next rows
// `out_stride` apart.
void band_by_gemm(const reference::BandedDims& d, const float* a_rows, int64_t a_stride, const float* rows_of_r,
                  int64_t ld, int64_t q0, float* out, int64_t out_stride) {
  static const float kZeros[kRowBlock] = {};
  thread_local std::vector<const float*> b_rows;
  thread_local std::vector<float> tile;
  const int64_t band = d.band(), cols = band + kRowBlock - 1;
  const direct::PackedWeights a(a_rows, kRowBlock, d.k, a_stride, 1, 8);
  b_rows.resize(size_t(d.k));
  for (int64_t k = 0; k < d.k; ++k) b_rows[size_t(k)] = rows_of_r + k * ld + (q0 - d.width);
  tile.resize(size_t(kRowBlock * cols));
  a.multiply(b_rows.data(), cols, tile.data(), cols, 0, kRowBlock, kZeros);
  for (int64_t i = 0; i < kRowBlock; ++i) {
    std::memcpy(out + i * out_stride, tile.data() + i * cols + i, size_t(band) * sizeof(float));
  }
}

}  // namespace

void g2bmm_f32(const reference::BandedDims& d, const float* a, const float* b, float* c,
               std::vector<float>& scratch) {
  const int64_t band = d.band();
  const Transposed t = transpose_b(d, b, scratch);
  // Blocks of rows whose taps all lie inside B are one GEMM each
  // (band_by_gemm). Rows m = q*d + r near the ends read the same rows of
  // T_r, shifted by one column per q: a block of kRowBlock consecutive q is
  // done one chunk of kChunk band columns at a time, so the chunk's
  // K x kChunk floats of T_r stay in L1 across the block's rows.
  constexpr int64_t kChunk = 4 * kLanes;
  const int64_t per_residue = (d.m + d.dilation - 1) / d.dilation;  // q values of residue 0, the most
  const int64_t blocks = (per_residue + kRowBlock - 1) / kRowBlock;
  parallel_for(d.batch * d.dilation * blocks, grain_for(kRowBlock * band * d.k), [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t batch = item / (d.dilation * blocks), r = item / blocks % d.dilation;
      const int64_t q0 = item % blocks * kRowBlock;
      const int64_t q1 = std::min(q0 + kRowBlock, (d.m - r + d.dilation - 1) / d.dilation);
      if (r < t.residues && q1 - q0 == kRowBlock && all_taps_valid(d, q0 * d.dilation + r) &&
          all_taps_valid(d, (q1 - 1) * d.dilation + r)) {
        const int64_t m0 = batch * d.m + q0 * d.dilation + r;
        band_by_gemm(d, a + m0 * d.k, d.dilation * d.k, t.at(d, batch, r), t.ld, q0, c + m0 * band,
                     d.dilation * band);
        continue;
      }
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t m = q * d.dilation + r;
        float* out = c + (batch * d.m + m) * band;
        const auto [lo, hi] = valid_taps(d, m);
        std::fill(out, out + lo, 0.f);
        std::fill(out + hi, out + band, 0.f);
      }
      if (r >= t.residues) continue;  // no B rows at all: every tap is outside
      const float* rows_of_r = t.at(d, batch, r);
      for (int64_t w0 = 0; w0 < band; w0 += kChunk) {
        for (int64_t q = q0; q < q1; ++q) {
          const int64_t m = q * d.dilation + r;
          const auto [valid_lo, valid_hi] = valid_taps(d, m);
          const int64_t lo = std::max(valid_lo, w0), hi = std::min(valid_hi, w0 + kChunk);
          if (lo >= hi) continue;
          const int64_t row = batch * d.m + m;
          sum_rows(hi - lo, d.k, a + row * d.k, rows_of_r + (q - d.width + lo), t.ld, c + row * band + lo);
        }
      }
    }
  });
}

void gbmm_f32(const reference::BandedDims& d, const float* a, const float* b, float* c) {
  const int64_t band = d.band();
  parallel_for(d.batch * d.m, grain_for(band * d.k), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t batch = row / d.m, m = row % d.m;
      float* out = c + row * d.k;
      const auto [lo, hi] = valid_taps(d, m);
      if (lo == hi) {
        std::fill(out, out + d.k, 0.f);
        continue;
      }
      const float* src = b + (batch * d.n + m + d.dilation * (lo - d.width)) * d.k;
      sum_rows(d.k, hi - lo, a + row * band + lo, src, d.dilation * d.k, out);
    }
  });
}

std::unique_ptr<Kernel> make_banded_kernel(const Graph& graph, const KernelGroup& group) {
  if (group.nodes.size() != 1) return nullptr;
  const Node& node = graph.nodes().at(group.nodes[0]);
  if (!reference::is_banded_op(node) || node.inputs.size() != 2 || node.outputs.size() != 1) return nullptr;
  if (node.inputs[0] == kNoValue || node.inputs[1] == kNoValue) return nullptr;
  for (ValueId id : {node.inputs[0], node.inputs[1], node.outputs[0]}) {
    if (graph.type(id).dtype != DType::Float32) return nullptr;
  }
  if (group.outputs != std::vector<ValueId>{node.outputs[0]}) return nullptr;
  reference::BandedDims dims;
  try {
    dims = reference::banded_dims(node, graph.type(node.inputs[0]).shape, graph.type(node.inputs[1]).shape);
  } catch (const Error& e) {
    ORCHID_FAIL() << node.describe() << ": " << e.what();
  }
  // A and B may be the same value, listed once among the group's inputs.
  return std::make_unique<BandedKernel>(dims, input_slot(group, node.inputs[0]), input_slot(group, node.inputs[1]));
}

}  // namespace orchid::runtime::cpu
