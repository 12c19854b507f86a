// Vectorizable float32 Exp, Log, Sigmoid, Tanh and Erf for the elementwise
// kernels. std::exp and friends are library calls the compiler cannot
// vectorize without -ffast-math; these are branch-free inline functions that
// it can (-O3 -march=native), 8 double lanes at a time.
//
// Accuracy: each function widens to double and evaluates an approximation
// whose relative error is ~1e-12, far below float's rounding step, so the one
// rounding back to float dominates: the result is within 0.5 ulp (+1e-12
// relative) of the true value, i.e. a relative error below 6e-8, over the
// whole float range. Overflow gives inf, underflow rounds to the correctly
// rounded denormal or zero, NaN propagates, +-inf give the limits
// (tests/unit/runtime/elementwise_kernel_test.cc sweeps the float range).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace orchid::runtime::cpu::fast_math {

// e^d for d in [-708, 709] (callers clamp), NaN in -> NaN out. d = n ln2 + r
// with |r| <= ln2/2, e^r by its degree-10 Taylor polynomial (truncation error
// below 2.2e-13 relative), 2^n built in the exponent bits.
inline double exp_core(double d) {
  constexpr double kLog2e = 1.4426950408889634;
  constexpr double kLn2 = 0.6931471805599453;
  // Adding 1.5 * 2^52 rounds to an integer n that then sits in the low
  // mantissa bits: no float->int conversion (undefined on NaN), and it
  // vectorizes.
  constexpr double kShifter = 6755399441055744.0;
  const double t = std::fma(d, kLog2e, kShifter);
  const double n = t - kShifter;
  const double r = std::fma(-n, kLn2, d);
  double p = 1.0 / 3628800;  // 1/10!
  p = std::fma(p, r, 1.0 / 362880);
  p = std::fma(p, r, 1.0 / 40320);
  p = std::fma(p, r, 1.0 / 5040);
  p = std::fma(p, r, 1.0 / 720);
  p = std::fma(p, r, 1.0 / 120);
  p = std::fma(p, r, 1.0 / 24);
  p = std::fma(p, r, 1.0 / 6);
  p = std::fma(p, r, 0.5);
  p = std::fma(p, r, 1.0);
  p = std::fma(p, r, 1.0);
  // n + 1023 in the exponent field; the shift drops the shifter's bits.
  const uint64_t scale_bits = (std::bit_cast<uint64_t>(t) + 1023u) << 52;
  return p * std::bit_cast<double>(scale_bits);
}

// Clamping keeps NaN (every comparison with it is false).
inline double clamp(double v, double lo, double hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

// e^x: below -104 the float result is 0, above 89 it is inf; both limits are
// reached by the rounding to float, not by special cases.
inline float exp(float x) { return float(exp_core(clamp(double(x), -104.0, 89.0))); }

// ln x. Every float is a normal double, so x = m 2^e with m in
// [sqrt(1/2), sqrt(2)) from the double's bits (float denormals included);
// ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716, by its odd series
// to s^17 (truncation below 1e-15 relative). Exact cases by selects, so the
// loop stays branch-free: ln 0 = -inf (either sign), ln of a negative = NaN,
// ln inf = inf, NaN propagates.
inline float log(float x) {
  constexpr double kLn2 = 0.6931471805599453;
  const uint64_t bits = std::bit_cast<uint64_t>(double(x));
  double e = double(int64_t((bits >> 52) & 0x7ff) - 1023);
  double m = std::bit_cast<double>((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  const bool high = m > 1.4142135623730951;
  m = high ? 0.5 * m : m;
  e = high ? e + 1.0 : e;
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  double p = 1.0 / 17;
  p = std::fma(p, s2, 1.0 / 15);
  p = std::fma(p, s2, 1.0 / 13);
  p = std::fma(p, s2, 1.0 / 11);
  p = std::fma(p, s2, 1.0 / 9);
  p = std::fma(p, s2, 1.0 / 7);
  p = std::fma(p, s2, 1.0 / 5);
  p = std::fma(p, s2, 1.0 / 3);
  p = std::fma(p, s2, 1.0);
  double r = std::fma(e, kLn2, 2.0 * s * p);
  r = x > 0.0f ? r : (x == 0.0f ? -HUGE_VAL : std::numeric_limits<double>::quiet_NaN());
  r = x == HUGE_VALF ? HUGE_VAL : r;
  return float(x != x ? double(x) : r);
}

// 1 / (1 + e^-x); in double neither the exponential nor the sum overflows
// over the clamped range, which is wide enough for the float result to be 0
// (x < -104) or 1 (x > 17).
inline float sigmoid(float x) {
  const double e = exp_core(clamp(-double(x), -110.0, 110.0));
  return float(1.0 / (1.0 + e));
}

// tanh on |x|, sign restored last (tanh(-0) = -0). Small |x|: the odd Taylor
// series to x^9 (next term below 1e-17 relative at 1/32). Elsewhere
// 1 - 2/(e^2|x| + 1), whose cancellation costs at most 5 bits of double at
// |x| = 1/32; tanh is 1 in float beyond |x| = 9.1, so |x| clamps to 20.
inline float tanh(float x) {
  const double a = clamp(std::fabs(double(x)), 0.0, 20.0);
  const double a2 = a * a;
  double series = 62.0 / 2835;
  series = std::fma(series, a2, -17.0 / 315);
  series = std::fma(series, a2, 2.0 / 15);
  series = std::fma(series, a2, -1.0 / 3);
  series = std::fma(series, a2, 1.0);
  series *= a;
  const double large = 1.0 - 2.0 / (exp_core(2.0 * a) + 1.0);
  const double magnitude = a < 0.03125 ? series : large;
  return float(std::copysign(magnitude, double(x)));
}

// erf(x) = x g(x^2) with g(t) = erf(sqrt t) / sqrt t, an entire function
// that a degree-22 Chebyshev series approximates on t in [0, 16] to 1e-13
// (relative error below 6e-13, as g >= 0.22 there); Clenshaw's recurrence
// evaluates it stably. Beyond |x| = 4, erf is 1 in float, so |x| clamps.
inline float erf(float x) {
  static constexpr double kCoeffs[] = {
      0.48591295690286307,     -0.3454078550049498,    0.16182910121364605,    -0.07648275610550889,
      0.03466993680050752,     -0.014811864147814756,  0.005922937956232048,   -0.0022118406588101133,
      0.000771415427840231,    -0.0002515965878094944, 7.688658221076946e-05,  -2.206549593884078e-05,
      5.961274041518158e-06,   -1.5197750712645664e-06, 3.6649304334520724e-07, -8.378998356801465e-08,
      1.820144886058123e-08,   -3.7644779416705625e-09, 7.427368551387369e-10, -1.400531848440494e-10,
      2.528290597579186e-11,   -4.376626212874705e-12, 7.275953483805452e-13,
  };
  constexpr int kDegree = int(sizeof(kCoeffs) / sizeof(kCoeffs[0])) - 1;
  const double a = clamp(std::fabs(double(x)), 0.0, 4.0);
  const double u = a * a * 0.125 - 1.0;  // t in [0, 16] -> u in [-1, 1]
  const double two_u = 2.0 * u;
  double b1 = 0.0;
  double b2 = 0.0;
#pragma GCC unroll 32
  for (int k = kDegree; k >= 1; --k) {
    const double b0 = std::fma(two_u, b1, kCoeffs[k] - b2);
    b2 = b1;
    b1 = b0;
  }
  const double g = std::fma(u, b1, kCoeffs[0] - b2);
  return float(std::copysign(a * g, double(x)));
}

}  // namespace orchid::runtime::cpu::fast_math
