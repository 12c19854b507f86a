// 16-float vectors for the hand-written kernels (direct convolutions, GEMM
// deconvolution), as GCC/Clang vector extensions: one AVX-512 register where
// the build targets it (-march=native here), split by the compiler elsewhere
// (the fuzz build).
#pragma once

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
// A broadcast (a vector-scalar operation splats the scalar; filling lanes
// one by one compiles to 16 masked inserts with GCC 12).
inline Vec splat(float x) { return Vec{} + x; }
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

}  // namespace orchid::runtime::cpu::simd
