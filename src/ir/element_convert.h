// Conversion of one element value between the C++ types of the dtypes, with
// no undefined behaviour: float to integer truncates towards zero, NaN gives
// 0 and out-of-range values (including infinities) saturate; Half and
// BFloat16 convert through float; anything non-zero becomes true.
#pragma once

#include <limits>
#include <type_traits>

#include "ir/dtype.h"

namespace orchid {

template <typename To, typename From>
inline To convert_element(From value) {
  if constexpr (std::is_same_v<To, bool>) {
    if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>) {
      return float(value) != 0.0f;
    } else {
      return value != From(0);
    }
  } else if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>) {
    return convert_element<To>(float(value));
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    return To(float(value));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (value != value) return To(0);
    // Compare in long double: every integer limit up to 64 bits is exact there
    // or rounds to the next power of two, which is out of range itself.
    const long double v = value;
    if (v <= static_cast<long double>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
    if (v >= static_cast<long double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(value);
  } else {
    return static_cast<To>(value);
  }
}

}  // namespace orchid
