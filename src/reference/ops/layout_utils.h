// Helpers shared by the data-movement operator families (layout.cc, index.cc,
// resize.cc). Data movement is dtype-agnostic: elements are copied as bytes,
// so one implementation serves every dtype.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "ir/tensor.h"
#include "reference/op_registry.h"
#include "reference/ops/op_utils.h"

namespace orchid::reference {

// Copies element `src_offset` of `src` to element `dst_offset` of `dst`; both
// have the same dtype.
inline void copy_element(Tensor& dst, int64_t dst_offset, const Tensor& src, int64_t src_offset) {
  size_t size = dtype_size(dst.dtype());
  std::memcpy(static_cast<std::byte*>(dst.raw()) + size_t(dst_offset) * size,
              static_cast<const std::byte*>(src.raw()) + size_t(src_offset) * size, size);
}

inline int64_t flat_offset(const std::vector<int64_t>& index, const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (size_t d = 0; d < index.size(); ++d) offset += index[d] * strides[d];
  return offset;
}

// A tensor of `type` (same dtype as src) whose element at each output
// multi-index is src's element at flat offset `source(index)`. A negative
// offset leaves the element as element 0 of `fill` when given, else zero.
template <typename F>
Tensor gather_from(const Tensor& src, const TensorType& type, F&& source, const Tensor* fill = nullptr) {
  Tensor out(type);
  int64_t flat = 0;
  for_each_index(type.shape, [&](const std::vector<int64_t>& index) {
    int64_t offset = source(index);
    if (offset >= 0) {
      copy_element(out, flat, src, offset);
    } else if (fill) {
      copy_element(out, flat, *fill, 0);
    }
    ++flat;
  });
  return out;
}

// Integer list held by an optional input (e.g. Squeeze's axes); nullopt when
// the input is omitted.
inline std::optional<std::vector<int64_t>> optional_ints(const Tensor* tensor) {
  if (!tensor) return std::nullopt;
  return tensor->to_i64_vector();
}

// orchid::Error unless the input has an integer dtype (indices, shapes, axes).
void require_integer_input(const TensorType& type, size_t input, const char* name);
// orchid::Error unless the input's dtype is one of int32/int64 (ONNX Tind).
void require_index_input(const TensorType& type, size_t input, const char* name);
// orchid::Error unless two inputs share a dtype.
void require_same_dtype(const TensorType& a, size_t input_a, const TensorType& b, size_t input_b);

// Maps an index in [-dim, dim) to [0, dim); orchid::Error naming `what` otherwise.
int64_t normalize_index(int64_t index, int64_t dim, const char* what);

// An input's value needed for the output shape when that shape depends on
// the data itself (NonZero, Compress, Unique): like require_value, but the
// error says the operator cannot be compiled statically.
const Tensor& require_data_value(const InferContext& ctx, size_t input, const char* what);

// Reduction of ScatterElements / ScatterND.
enum class ScatterReduction { None, Add, Mul, Max, Min };
ScatterReduction parse_scatter_reduction(const std::string& name);
// dst[dst_offset] = reduce(dst[dst_offset], src[src_offset]); same dtype.
void scatter_element(Tensor& dst, int64_t dst_offset, const Tensor& src, int64_t src_offset,
                     ScatterReduction reduction);

}  // namespace orchid::reference
