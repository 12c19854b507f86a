// Vector forms of fast_math's sigmoid family (elementwise_math.h) for
// epilogues applied to results in cache: a linear kernel's SiLU or Sigmoid
// on its output tile. There the division in 1 / (1 + e^-x) bounds the rate
// (vdivps: about 10 cycles a vector on these Intel cores): a SiLU over 173K
// floats in L2 took 0.47 ns per element with the scalar functions
// vectorized by the compiler and 0.27 with a reciprocal estimate refined by
// one Newton step (tests/unit/runtime/simd_math_test.cc measures the same
// accuracy as the scalar form: a few ulp).
#pragma once

#include <cstdint>

#include "runtime/kernels/cpu/elementwise_math.h"
#include "runtime/kernels/cpu/simd.h"

namespace orchid::runtime::cpu::simd {

using UVec = uint32_t __attribute__((vector_size(64)));

// 1 / d for normal positive d: AVX-512's 14-bit estimate (the zero-masked
// form: GCC warns on the plain one's undefined pass-through) and one Newton
// step (relative error about 2^-28 before the final rounding); a division
// where the build has no AVX-512 (the fuzz build).
inline Vec reciprocal(Vec d) {
#ifdef __AVX512F__
  const Vec r = Vec(_mm512_maskz_rcp14_ps(__mmask16(0xffff), __m512(d)));
  return r * (2.0f - d * r);
#else
  return 1.0f / d;
#endif
}

// Lanes of `a` where `take_a`, else of `b` (take_a from a vector comparison).
inline Vec select(decltype(Vec{} < Vec{}) take_a, Vec a, Vec b) { return take_a ? a : b; }

// v clamped to [lo, hi]; a NaN lane gives a bound (the callers select NaN
// lanes themselves or let the NaN through a product).
inline Vec clamp(Vec v, float lo, float hi) {
#ifdef __AVX512F__
  return Vec(_mm512_min_ps(_mm512_max_ps(__m512(v), _mm512_set1_ps(lo)), _mm512_set1_ps(hi)));
#else
  v = select(v < lo, splat(lo), v);
  return select(v > hi, splat(hi), v);
#endif
}

// fast_math::exp_normal_range, lane by lane: e^x for x in [-87.0, 87.34].
inline Vec exp_normal_range(Vec x) {
  const Vec t = x * 1.44269504088896341f + fast_math::kExpShifter;
  const Vec n = t - fast_math::kExpShifter;
  Vec r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  Vec p = splat(1.3843607157e-3f);
  p = p * r + 8.3741955459e-3f;
  p = p * r + 4.1668005288e-2f;
  p = p * r + 1.6666430235e-1f;
  p = p * r + 4.9999994040e-1f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return Vec(UVec(p) + (UVec(t) << 23));
}

// fast_math::sigmoid with the reciprocal above: the same clamp and the
// same 0 below ln(FLT_MIN); a NaN lane gives a finite number.
inline Vec sigmoid_of_number(Vec x) {
  constexpr float kLnMinNormal = -87.33654475f;
  const Vec e = exp_normal_range(clamp(-x, -87.0f, -kLnMinNormal));
  return select(x < kLnMinNormal, Vec{}, reciprocal(1.0f + e));
}

// fast_math::sigmoid, NaN kept.
inline Vec sigmoid(Vec x) { return select(x != x, x, sigmoid_of_number(x)); }

// x sigmoid(alpha x), oneDNN's eltwise_swish (SiLU for alpha = 1); a NaN x
// stays NaN through the product.
inline Vec swish(Vec x, float alpha) { return x * sigmoid_of_number(alpha * x); }

// y[i] = f(y[i]) for i < n: whole vectors by `vector`, the rest by `scalar`.
template <typename VectorFn, typename ScalarFn>
inline void map(float* y, int64_t n, VectorFn vector, ScalarFn scalar) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(y + i, vector(load(y + i)));
  for (; i < n; ++i) y[i] = scalar(y[i]);
}

}  // namespace orchid::runtime::cpu::simd
