// Scalar functions of the elementwise kernels beyond the per-element
// semantics they share with the interpreter (reference/ops/elementwise_utils.h:
// add_values, div_values, mod_values, max_values, abs_value, integer_pow...):
// shifts by the bit width or more give 0, Sign, Relu, Pow, Cast. They take and
// return storage values; the kernels never see float16/bfloat16 here.
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
using reference::wrapping_sub;

template <typename T>
T shift(T a, T b, bool left) {
  if (b >= T(sizeof(T) * 8)) return T(0);
  return left ? T(WrapUnsigned<T>(a) << b) : T(a >> b);
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

// Otherwise computed in double and converted to the base's type (truncated,
// saturating, for an integer base).
template <typename T, typename E>
T pow(T base, E exponent) {
  if constexpr (kIsInteger<T> && kIsInteger<E>) {
    return reference::integer_pow(base, exponent);
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
