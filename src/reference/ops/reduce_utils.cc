#include "reference/ops/reduce_utils.h"

#include "support/error.h"

namespace orchid::reference {

namespace {

// The flat offsets of every index over `dims` (others held at 0), row-major.
std::vector<int64_t> offsets_over(const Shape& shape, const std::vector<int64_t>& strides,
                                  const std::vector<bool>& dims, bool selected) {
  std::vector<int64_t> offsets = {0};
  for (size_t d = 0; d < shape.size(); ++d) {
    if (dims[d] != selected) continue;
    std::vector<int64_t> next;
    next.reserve(offsets.size() * size_t(shape[d]));
    for (int64_t base : offsets) {
      for (int64_t i = 0; i < shape[d]; ++i) next.push_back(base + i * strides[d]);
    }
    offsets = std::move(next);
  }
  return offsets;
}

}  // namespace

ReduceIndex make_reduce_index(const Shape& shape, const std::vector<bool>& reduced) {
  ORCHID_CHECK(reduced.size() == shape.size()) << "reduce mask rank mismatch";
  std::vector<int64_t> strides = shape_strides(shape);
  ReduceIndex index;
  index.outer = offsets_over(shape, strides, reduced, false);
  index.inner = offsets_over(shape, strides, reduced, true);
  return index;
}

std::vector<bool> axis_range_mask(size_t rank, size_t first, size_t last) {
  std::vector<bool> mask(rank, false);
  for (size_t d = first; d < last && d < rank; ++d) mask[d] = true;
  return mask;
}

Shape reduced_shape(const Shape& shape, const std::vector<bool>& reduced, bool keepdims) {
  Shape out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!reduced[d]) {
      out.push_back(shape[d]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

void require_float_input(const TensorType& type, size_t index, const char* name) {
  if (!is_float(type.dtype)) {
    ORCHID_FAIL() << "expected a float tensor for input " << index << " (" << name << "), got "
                  << dtype_name(type.dtype);
  }
}

void require_numeric_input(const TensorType& type, size_t index, const char* name) {
  if (type.dtype == DType::Bool) {
    ORCHID_FAIL() << "expected a numeric tensor for input " << index << " (" << name << "), got "
                  << dtype_name(type.dtype);
  }
}

}  // namespace orchid::reference
