// 16-float vectors for the hand-written kernels (direct convolutions, GEMM
// deconvolution), as GCC/Clang vector extensions: one AVX-512 register where
// the build targets it (-march=native here), split by the compiler elsewhere
// (the fuzz build).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace orchid::runtime::cpu::simd {

using Vec = float __attribute__((vector_size(64)));
inline constexpr int64_t kLanes = 16;

inline Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }
// A broadcast. x - 0 is x for every x (-0 included), so GCC folds the
// subtraction and the splat becomes a broadcast load, or the {1to16} operand
// of an FMA. (Vec{} + x is not x for x = -0: GCC kept a scalar add and a
// register broadcast per splat, which in the direct GEMM's inner loop took
// the FMA port 5 on Intel for a third of its cycles. Filling lanes one by
// one compiles to 16 masked inserts with GCC 12.)
inline Vec splat(float x) { return x - Vec{}; }
inline float sum_lanes(Vec v) {
  float s = 0.f;
  for (int64_t i = 0; i < kLanes; ++i) s += v[i];
  return s;
}

// sum_k a[k] b[k], 16 lanes at a time.
inline float dot(const float* a, const float* b, int64_t n) {
  Vec acc{};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes) acc += load(a + k) * load(b + k);
  float s = sum_lanes(acc);
  for (; k < n; ++k) s += a[k] * b[k];
  return s;
}

// A store that bypasses the caches (p 64-byte aligned): for outputs far
// larger than the cache that nothing reads back soon, it saves reading each
// line before writing it. Ordered by the fence of the parallel region's end
// (stream_fence) before other threads read the data.
inline void store_stream(float* p, Vec v) {
#ifdef __AVX512F__
  _mm512_stream_ps(p, __m512(v));
#else
  store(p, v);
#endif
}
inline void stream_fence() { _mm_sfence(); }

// The first n (<= kLanes) lanes of v stored at p; the memory after them is
// not touched.
inline void store_first(float* p, Vec v, int64_t n) {
#ifdef __AVX512F__
  _mm512_mask_storeu_ps(p, __mmask16((1u << n) - 1u), __m512(v));
#else
  std::memcpy(p, &v, size_t(n) * sizeof(float));
#endif
}

// out[2 j] = even[j], out[2 j + 1] = odd[j] for the whole vectors of n, each
// pair of output vectors written by put(p, v); returns how many j it did.
template <typename Put>
inline int64_t interleave_vectors(const float* even, const float* odd, int64_t n, float* out, Put put) {
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const Vec a = load(even + j), b = load(odd + j);
    put(out + 2 * j, __builtin_shufflevector(a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23));
    put(out + 2 * j + kLanes, __builtin_shufflevector(a, b, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31));
  }
  return j;
}

// out[2 j] = even[j], out[2 j + 1] = odd[j] for j < n, as vector shuffles;
// streamed (store_stream) if asked and out is 64-byte aligned.
inline void interleave_pairs(const float* even, const float* odd, int64_t n, float* out, bool stream = false) {
  int64_t j = stream && reinterpret_cast<uintptr_t>(out) % 64 == 0 ? interleave_vectors(even, odd, n, out, store_stream)
                                                                   : interleave_vectors(even, odd, n, out, store);
  for (; j < n; ++j) out[2 * j] = even[j], out[2 * j + 1] = odd[j];
}

// A row of `width` split by a stride into `phases` column phases (phases =
// min(stride, width)), joined again: out[p + j phases] = phase p's element
// j, phase p at first + p phase_step with ceil((width - p) / phases)
// elements.
inline void interleave_phases(const float* first, int64_t phase_step, int64_t width, int64_t phases, float* out,
                              bool stream = false) {
  if (phases == 1) {
    std::memcpy(out, first, size_t(width) * sizeof(float));
  } else if (phases == 2) {
    const float* odd = first + phase_step;
    interleave_pairs(first, odd, width / 2, out, stream);
    if (width % 2 != 0) out[width - 1] = first[width / 2];
  } else {
    for (int64_t p = 0; p < phases; ++p) {
      const float* phase = first + p * phase_step;
      for (int64_t j = 0; p + j * phases < width; ++j) out[p + j * phases] = phase[j];
    }
  }
}

}  // namespace orchid::runtime::cpu::simd
