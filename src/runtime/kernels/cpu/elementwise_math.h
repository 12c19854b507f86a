// Vectorizable float32 Exp, Log, Sigmoid, Tanh and Erf for the elementwise
// kernels and the generated ones. std::exp and friends are library calls the
// compiler cannot vectorize without -ffast-math; these are branch-free
// inline functions that it can (-O3 -march=native).
//
// Accuracy: every function computes in float, 16 lanes at a time, a few ulp
// from the true value where it is a normal float (the range sweep measures
// relative errors of 8.7e-8 for Exp, 7.9e-8 for Log, 1.4e-7 for Tanh, 1.5e-7
// for Sigmoid, 1.8e-7 for Erf: 1.3 to 3 ulp), like the vectorized math of ONNX
// Runtime and OpenVINO.
// Overflow gives inf, exponentials below the normal range are 0 (other
// denormal results within one denormal step), NaN propagates, +-inf give the limits
// (tests/unit/runtime/elementwise_kernel_test.cc sweeps the float range).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace orchid::runtime::cpu::fast_math {

// Clamping keeps NaN (every comparison with it is false).
inline float clamp(float v, float lo, float hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

// e^r for |r| <= ln2/2: a degree-6 polynomial fitted for relative error
// (2e-9 in real arithmetic, 9.5e-8 evaluated in float), one multiply-add
// fewer than the degree-7 Taylor polynomial it replaced.
inline float exp_reduced(float r) {
  float p = 1.3843607157e-3f;
  p = std::fma(p, r, 8.3741955459e-3f);
  p = std::fma(p, r, 4.1668005288e-2f);
  p = std::fma(p, r, 1.6666430235e-1f);
  p = std::fma(p, r, 4.9999994040e-1f);
  p = std::fma(p, r, 1.0f);
  return std::fma(p, r, 1.0f);
}

// x = n ln2 + r: t holds n in its low mantissa bits (adding 1.5 * 2^23
// rounds x log2(e) to an integer there: no float->int conversion, which is
// undefined on NaN), r is exact to ~1e-10 (ln2 in two parts).
inline constexpr float kExpShifter = 12582912.0f;
inline float exp_reduce(float x, float& t) {
  t = std::fma(x, 1.44269504088896341f, kExpShifter);
  const float n = t - kExpShifter;
  const float r = std::fma(-n, 0.693359375f, x);
  return std::fma(-n, -2.12194440e-4f, r);
}

// e^x for x in [-87.0, 87.34] only (n from -126 to 126, e^x a normal
// float): 2^n is added to the polynomial's exponent field as an integer
// (t's bits shifted left by 23 are n << 23), no multiplication.
inline float exp_normal_range(float x) {
  float t;
  const float p = exp_reduced(exp_reduce(x, t));
  return std::bit_cast<float>(std::bit_cast<uint32_t>(p) + (std::bit_cast<uint32_t>(t) << 23));
}

// e^x on the whole float range. Above 88.73 the result is inf; below
// ln(FLT_MIN) = -87.3365, where e^x is a denormal float, it is 0: a vector
// instruction that makes a denormal takes a microcode assist on these CPUs,
// and a causal softmax's masked half (e^-inf) paid it per vector (GPT's
// 8x256x256 softmax kernel: 1.26 ms on masked input, 0.40 on unmasked).
// 2^n, up to 2^128, as two powers of two that are normal floats.
inline float exp(float x) {
  constexpr float kLnMinNormal = -87.33654475f;
  const bool underflow = x < kLnMinNormal;  // false for NaN
  x = clamp(x, kLnMinNormal, 88.73f);
  float t;
  const float p = exp_reduced(exp_reduce(x, t));
  const int32_t k = int32_t(std::bit_cast<uint32_t>(t) - 0x4B400000u);  // n as an integer
  const int32_t half = k >> 1;
  const float scale_a = std::bit_cast<float>(uint32_t(half + 127) << 23);
  const float scale_b = std::bit_cast<float>(uint32_t(k - half + 127) << 23);
  const float y = p * scale_a * scale_b;
  return underflow ? 0.0f : y;
}

// e^x for x <= 0 (or NaN): exp without its overflow half. 2^n is a normal
// float there (n >= -126), so it goes into the exponent field by one
// integer addition (exp_normal_range), where exp multiplies by two scales,
// and x is clamped from below only. A softmax's x - max(x) is such an
// argument (ViT's 6x197x197 softmax kernel at 1 thread: 0.140 ms with exp,
// 0.110 with this). Below ln(FLT_MIN) the result is 0, like exp's; NaN (x -
// max of a row holding NaN or inf) stays NaN. Positive x, which the callers
// never pass, would still be right up to 87.3.
inline float exp_nonpositive(float x) {
  constexpr float kLnMinNormal = -87.33654475f;
  const bool underflow = x < kLnMinNormal;  // false for NaN
  const float y = exp_normal_range(underflow ? kLnMinNormal : x);
  const float r = underflow ? 0.0f : y;
  return x != x ? x : r;
}

// ln x = ln m + e ln2 with x = m 2^e, m in [sqrt(1/2), sqrt(2)) (denormals
// scaled by 2^23 first); ln(1 + f), f = m - 1, as f - f^2/2 + f^3 P(f) with
// Cephes' degree-8 minimax P (relative error ~7.6e-8), ln2 in two parts.
// Exact cases by selects: ln 0 = -inf (either sign), ln of a negative =
// NaN, ln inf = inf, NaN propagates.
inline float log(float x) {
  const bool denormal = std::fabs(x) < std::numeric_limits<float>::min();
  const float scaled = denormal ? x * 8388608.0f : x;
  const uint32_t bits = std::bit_cast<uint32_t>(scaled);
  float e = float(int32_t((bits >> 23) & 0xff) - 127) - (denormal ? 23.0f : 0.0f);
  float m = std::bit_cast<float>((bits & 0x007fffffu) | 0x3f800000u);
  const bool high = m > 1.41421356f;
  m = high ? 0.5f * m : m;
  e = high ? e + 1.0f : e;
  const float f = m - 1.0f;
  const float f2 = f * f;
  float p = 7.0376836292e-2f;
  p = std::fma(p, f, -1.1514610310e-1f);
  p = std::fma(p, f, 1.1676998740e-1f);
  p = std::fma(p, f, -1.2420140846e-1f);
  p = std::fma(p, f, 1.4249322787e-1f);
  p = std::fma(p, f, -1.6668057665e-1f);
  p = std::fma(p, f, 2.0000714765e-1f);
  p = std::fma(p, f, -2.4999993993e-1f);
  p = std::fma(p, f, 3.3333331174e-1f);
  float y = p * f * f2;
  y = std::fma(e, -2.12194440e-4f, y);
  y = std::fma(-0.5f, f2, y);
  float r = f + y;
  r = std::fma(e, 0.693359375f, r);
  r = x > 0.0f ? r : (x == 0.0f ? -HUGE_VALF : std::numeric_limits<float>::quiet_NaN());
  r = x == HUGE_VALF ? HUGE_VALF : r;
  return x != x ? x : r;
}

// 1 / (1 + e^-x), e^-x with -x clamped to [-87, ln(FLT_MIN) negated] so
// it stays a normal float (exp_normal_range). For large negative x the
// result is 1 / e^-x to e^-x's relative accuracy (the 1 vanishes in the
// sum); below ln(FLT_MIN), where the result is a denormal, it is 0. NaN is
// selected last (the exponent-field addition need not keep a NaN's
// payload a NaN). No select on the sign and no second product: a SiLU map
// 0.55 -> 0.40 ns per element at 1 thread (docs/results.md).
inline float sigmoid(float x) {
  const float e = exp_normal_range(clamp(-x, -87.0f, 87.33654475f));
  const float s = 1.0f / (1.0f + e);
  const float y = x < -87.33654475f ? 0.0f : s;
  return x != x ? x : y;
}

// tanh on |x|, sign restored last (tanh(-0) = -0). Below 0.625: x + x^3
// P(x^2), Cephes' degree-4 minimax P; elsewhere 1 - 2/(e^2|x| + 1), whose
// cancellation at most doubles e^x's error there; tanh is 1 in float beyond
// |x| = 9.1, so |x| clamps to 10.
inline float tanh(float x) {
  const float a = clamp(std::fabs(x), 0.0f, 10.0f);
  const float a2 = a * a;
  float p = -5.70498872745e-3f;
  p = std::fma(p, a2, 2.06390887954e-2f);
  p = std::fma(p, a2, -5.37397155531e-2f);
  p = std::fma(p, a2, 1.33314422036e-1f);
  p = std::fma(p, a2, -3.33332819422e-1f);
  const float small = std::fma(a * a2, p, a);
  const float large = 1.0f - 2.0f / (exp_normal_range(2.0f * a) + 1.0f);  // 2a <= 20
  const float magnitude = a < 0.625f ? small : large;
  return x != x ? x : std::copysign(magnitude, x);
}

// tanh(ln(1 + e^x)), Mish's factor, as a rational function of one
// exponential: with e = e^-|x| in (0, 1], (1 + 2e) / (1 + 2e + 2e^2) for
// x >= 0 and e (2 + e) / (2 + 2e + e^2) below; sums of positive terms, so
// no cancellation (a few ulp), where tanh of the softplus takes three
// transcendental functions.
inline float tanh_softplus(float x) {
  const float e = exp(-std::fabs(x));
  const bool positive = x >= 0.0f;
  const float num = positive ? std::fma(2.0f, e, 1.0f) : e * (2.0f + e);
  const float den = positive ? std::fma(2.0f * e, e, std::fma(2.0f, e, 1.0f)) : std::fma(e, e, std::fma(2.0f, e, 2.0f));
  return num / den;
}

// erf in float, on |x| with the sign restored last. Below 1: x P(x^2), P of
// degree 7; from 1 to 4: erf itself by a polynomial of degree 12 in u =
// (|x| - 2.5) / 1.5 (fitted in double on Chebyshev nodes: 4.8e-8 absolute,
// 7.7e-8 evaluated in float, under 1.3 ulp of erf there). Both branches
// run for every lane, so the second is a polynomial rather than 1 - e^g
// with g = ln erfc: 12 multiply-adds instead of 11 and an exponential
// (GELU's erf kernels took about 4 cycles per element, compute-bound).
// erf is 1 in float beyond 4 (erfc(4) = 1.5e-8).
inline float erf(float x) {
  const float a = std::fabs(x);
  const float t = a * a;
  float p = -9.809208677324932e-06f;
  p = std::fma(p, t, 0.00011313097638776526f);
  p = std::fma(p, t, -0.0008490192703902721f);
  p = std::fma(p, t, 0.005221422761678696f);
  p = std::fma(p, t, -0.026865558698773384f);
  p = std::fma(p, t, 0.11283784359693527f);
  p = std::fma(p, t, -0.37612637877464294f);
  p = std::fma(p, t, 1.128379225730896f);
  const float small = a * p;
  const float u = (clamp(a, 1.0f, 4.0f) - 2.5f) * (2.0f / 3.0f);  // a multiply, not a division
  float large = -0.0011300180340185761f;
  large = std::fma(large, u, 0.001851567649282515f);
  large = std::fma(large, u, 0.0034260996617376804f);
  large = std::fma(large, u, -0.010797660797834396f);
  large = std::fma(large, u, 0.0074836257845163345f);
  large = std::fma(large, u, 0.009810791350901127f);
  large = std::fma(large, u, -0.032164327800273895f);
  large = std::fma(large, u, 0.04632207006216049f);
  large = std::fma(large, u, -0.043602194637060165f);
  large = std::fma(large, u, 0.02819584496319294f);
  large = std::fma(large, u, -0.012255907990038395f);
  large = std::fma(large, u, 0.003266968997195363f);
  large = std::fma(large, u, 0.9995930790901184f);
  const float magnitude = a < 1.0f ? small : (a < 4.0f ? large : 1.0f);
  return x != x ? x : std::copysign(magnitude, x);
}

}  // namespace orchid::runtime::cpu::fast_math
