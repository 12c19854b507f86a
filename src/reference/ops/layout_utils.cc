#include "reference/ops/layout_utils.h"

#include <algorithm>
#include <type_traits>

#include "support/error.h"

namespace orchid::reference {

void require_integer_input(const TensorType& type, size_t input, const char* name) {
  if (!is_integer(type.dtype)) {
    ORCHID_FAIL() << "expected an integer tensor for input " << input << " (" << name << "), got "
                  << dtype_name(type.dtype);
  }
}

void require_index_input(const TensorType& type, size_t input, const char* name) {
  if (type.dtype != DType::Int32 && type.dtype != DType::Int64) {
    ORCHID_FAIL() << "expected an int32 or int64 tensor for input " << input << " (" << name << "), got "
                  << dtype_name(type.dtype);
  }
}

void require_same_dtype(const TensorType& a, size_t input_a, const TensorType& b, size_t input_b) {
  if (a.dtype != b.dtype) {
    ORCHID_FAIL() << "inputs " << input_a << " and " << input_b << " must have the same dtype, got "
                  << dtype_name(a.dtype) << " and " << dtype_name(b.dtype);
  }
}

int64_t normalize_index(int64_t index, int64_t dim, const char* what) {
  if (index < -dim || index >= dim) {
    ORCHID_FAIL() << what << " " << index << " is out of range for a dimension of size " << dim;
  }
  return index < 0 ? index + dim : index;
}

const Tensor& require_data_value(const InferContext& ctx, size_t input, const char* what) {
  if (const Tensor* value = ctx.value(input)) return *value;
  try {
    return ctx.require_value(input, what);  // a value offered for specialization
  } catch (const Error&) {
    ORCHID_FAIL() << ctx.node().op << "'s output shape depends on the values of input " << input << " ("
                  << what << "), which are not known when the model is loaded; Orchid "
                  << "compiles static shapes only and cannot compile this node";
  }
}

ScatterReduction parse_scatter_reduction(const std::string& name) {
  if (name == "none") return ScatterReduction::None;
  if (name == "add") return ScatterReduction::Add;
  if (name == "mul") return ScatterReduction::Mul;
  if (name == "max") return ScatterReduction::Max;
  if (name == "min") return ScatterReduction::Min;
  ORCHID_FAIL() << "unknown reduction '" << name << "' (expected none, add, mul, max or min)";
}

namespace {

template <typename T>
T reduce_pair(T a, T b, ScatterReduction reduction) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(reduce_pair<float>(float(a), float(b), reduction));
  } else if constexpr (std::is_same_v<T, bool>) {
    switch (reduction) {
      case ScatterReduction::None:
        return b;
      case ScatterReduction::Add:
      case ScatterReduction::Max:
        return a || b;
      case ScatterReduction::Mul:
      case ScatterReduction::Min:
        return a && b;
    }
    return b;
  } else {
    switch (reduction) {
      case ScatterReduction::None:
        return b;
      case ScatterReduction::Add:
        // Integers wrap around (through uint64, well defined) instead of overflowing.
        if constexpr (std::is_integral_v<T>)
          return T(uint64_t(a) + uint64_t(b));
        else
          return a + b;
      case ScatterReduction::Mul:
        if constexpr (std::is_integral_v<T>)
          return T(uint64_t(a) * uint64_t(b));
        else
          return a * b;
      case ScatterReduction::Max:
        return std::max(a, b);
      case ScatterReduction::Min:
        return std::min(a, b);
    }
    return b;
  }
}

}  // namespace

void scatter_element(Tensor& dst, int64_t dst_offset, const Tensor& src, int64_t src_offset,
                     ScatterReduction reduction) {
  if (reduction == ScatterReduction::None) {
    copy_element(dst, dst_offset, src, src_offset);
    return;
  }
  ORCHID_DISPATCH(dst.dtype(), T, {
    T* d = dst.data<T>();
    d[dst_offset] = reduce_pair<T>(d[dst_offset], src.data<T>()[src_offset], reduction);
  });
}

}  // namespace orchid::reference
