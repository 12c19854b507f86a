// Helpers shared by the reduction family (reduce.cc) and the normalization
// family (normalization.cc): iterating a tensor as groups of elements that
// reduce together, element conversions that go through double for floats, and
// the argmax tie/NaN rule.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "ir/tensor.h"
#include "reference/op_registry.h"

namespace orchid::reference {

// A tensor seen as groups: the elements that reduce into output o are at the
// flat offsets outer[o] + inner[r] for every r. `outer` runs over the kept
// dimensions and `inner` over the reduced ones, both in row-major order, so an
// output computed group by group is already in row-major (keepdims) order.
// Memory is O(#groups + group size); a full pass over the groups is O(numel).
struct ReduceIndex {
  std::vector<int64_t> outer;
  std::vector<int64_t> inner;
};
ReduceIndex make_reduce_index(const Shape& shape, const std::vector<bool>& reduced);

// Mask with `reduced[d]` true for d in [first, last).
std::vector<bool> axis_range_mask(size_t rank, size_t first, size_t last);

// The output shape of a reduction: reduced dimensions become 1 (keepdims) or
// disappear.
Shape reduced_shape(const Shape& shape, const std::vector<bool>& reduced, bool keepdims);

// orchid::Error unless the dtype is a floating-point type:
// "expected a float tensor for input 0 (X), got int64".
void require_float_input(const TensorType& type, size_t index, const char* name);
// orchid::Error for bool: "expected a numeric tensor for input 0 (X), got bool".
void require_numeric_input(const TensorType& type, size_t index, const char* name);

template <typename T>
inline constexpr bool kIsFloat =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// A float element as double (exact for every supported float type).
template <typename T>
double to_f64(T value) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return double(float(value));
  } else {
    return double(value);
  }
}

// A double result stored as T: rounded for floats; for integers truncated
// towards zero and saturated (NaN becomes 0), so no conversion is undefined.
template <typename T>
T from_f64(double value) {
  if constexpr (std::is_same_v<T, double>) {
    return value;
  } else if constexpr (kIsFloat<T>) {
    return T(float(value));
  } else if constexpr (std::is_same_v<T, bool>) {
    return value != 0;
  } else {
    if (std::isnan(value)) return T(0);
    if (value <= double(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (value >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return T(value);
  }
}

// The comparison key of an element: double for floats (exact), the integer
// itself otherwise (int64 does not fit a double exactly).
template <typename T>
auto compare_key(T value) {
  if constexpr (kIsFloat<T>) {
    return to_f64(value);
  } else {
    return value;
  }
}

// Whether `candidate` replaces `best` in an arg-max (want_max) or arg-min
// search that visits elements in increasing index order. Like numpy, NaN
// beats every number; among equal values (or NaNs) the first index wins, or
// the last one with select_last.
template <typename K>
bool arg_better(K candidate, K best, bool want_max, bool select_last) {
  if constexpr (std::is_floating_point_v<K>) {
    bool candidate_nan = std::isnan(candidate);
    if (std::isnan(best)) return candidate_nan && select_last;
    if (candidate_nan) return true;
  }
  if (candidate == best) return select_last;
  return want_max ? candidate > best : candidate < best;
}

}  // namespace orchid::reference
