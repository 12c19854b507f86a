// Scalar functions of the elementwise kernels, with the reference
// interpreter's semantics (src/reference/ops/elementwise.cc, activation.cc):
// integer arithmetic wraps, integer division and modulo by zero give 0,
// Max/Min propagate NaN, shifts by the bit width or more give 0. They take
// and return storage values; the kernels never see float16/bfloat16 here.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ir/element_convert.h"
#include "reference/ops/elementwise_utils.h"

namespace orchid::runtime::cpu::ops {

using reference::kIsInteger;
using reference::WrapUnsigned;
using reference::wrapping_add;
using reference::wrapping_mul;
using reference::wrapping_sub;

template <typename T>
T add(T a, T b) {
  if constexpr (kIsInteger<T>) return wrapping_add(a, b);
  else return a + b;
}
template <typename T>
T sub(T a, T b) {
  if constexpr (kIsInteger<T>) return wrapping_sub(a, b);
  else return a - b;
}
template <typename T>
T mul(T a, T b) {
  if constexpr (kIsInteger<T>) return wrapping_mul(a, b);
  else return a * b;
}
// Integer division truncates towards zero; INT_MIN / -1 wraps.
template <typename T>
T div(T a, T b) {
  if constexpr (kIsInteger<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return wrapping_sub(T(0), a);
    }
    return T(a / b);
  } else {
    return a / b;
  }
}
// fmod: the remainder has the dividend's sign (C's % and fmod); otherwise the
// divisor's (Python's %), integers only.
template <typename T>
T mod(T a, T b, bool fmod) {
  if constexpr (kIsInteger<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return 0;
    }
    T r = T(a % b);
    if constexpr (std::is_signed_v<T>) {
      if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = T(r + b);
    }
    return r;
  } else {
    return std::fmod(a, b);
  }
}
// NaN in either operand gives NaN (numpy.maximum / minimum): a NaN `a` is
// returned by the first test, a NaN `b` because every comparison fails.
template <typename T>
T max(T a, T b) {
  return (a > b || a != a) ? a : b;
}
template <typename T>
T min(T a, T b) {
  return (a < b || a != a) ? a : b;
}
template <typename T>
T shift(T a, T b, bool left) {
  if (b >= T(sizeof(T) * 8)) return T(0);
  return left ? T(WrapUnsigned<T>(a) << b) : T(a >> b);
}

template <typename T>
T abs(T x) {
  if constexpr (std::is_unsigned_v<T>) return x;
  else if constexpr (std::is_integral_v<T>) return x < 0 ? wrapping_sub(T(0), x) : x;
  else return std::abs(x);
}
template <typename T>
T neg(T x) {
  if constexpr (std::is_integral_v<T>) return wrapping_sub(T(0), x);
  else return -x;
}
// Sign(NaN) is NaN.
template <typename T>
T sign(T x) {
  if constexpr (std::is_unsigned_v<T>) return x > T(0) ? T(1) : T(0);
  else return x > T(0) ? T(1) : (x < T(0) ? T(-1) : x);
}
// NaN passes through.
template <typename T>
T relu(T x) {
  return x < T(0) ? T(0) : x;
}

// Pow with an integer base and exponent: exact wrapping repeated squaring; a
// negative exponent gives the truncated real result (0 unless |base| == 1).
template <typename T, typename E>
T integer_pow(T base, E exponent) {
  if constexpr (std::is_signed_v<E>) {
    if (exponent < 0) {
      if (base == T(1)) return T(1);
      if constexpr (std::is_signed_v<T>) {
        if (base == T(-1)) return (exponent % 2 == 0) ? T(1) : T(-1);
      }
      return T(0);
    }
  }
  T result = 1;
  uint64_t e = uint64_t(exponent);
  while (e) {
    if (e & 1) result = wrapping_mul(result, base);
    base = wrapping_mul(base, base);
    e >>= 1;
  }
  return result;
}
// Otherwise computed in double and converted to the base's type (truncated,
// saturating, for an integer base).
template <typename T, typename E>
T pow(T base, E exponent) {
  if constexpr (kIsInteger<T> && kIsInteger<E>) {
    return integer_pow(base, exponent);
  } else {
    const double value = std::pow(double(base), double(exponent));
    if constexpr (kIsInteger<T>) return reference::saturating_from_double<T>(value);
    else return T(value);
  }
}

// Cast: convert_element's semantics (NaN -> 0, saturation, non-zero -> true).
// Float-to-integer compares against the limits in the source type instead of
// long double, which vectorizes: a limit 2^k - 1 that the source type cannot
// hold rounds up to 2^k, and no source value lies between the two.
template <typename To, typename From>
To cast(From value) {
  if constexpr (std::is_floating_point_v<From> && kIsInteger<To>) {
    constexpr From lo = From(std::numeric_limits<To>::lowest());
    constexpr From hi = From(std::numeric_limits<To>::max());
    if (value != value) return To(0);
    if (value <= lo) return std::numeric_limits<To>::lowest();
    if (value >= hi) return std::numeric_limits<To>::max();
    return To(value);
  } else {
    return convert_element<To, From>(value);
  }
}

}  // namespace orchid::runtime::cpu::ops
