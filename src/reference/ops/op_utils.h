// Shared helpers for operator shape inference and reference kernels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor.h"
#include "reference/op_registry.h"

namespace orchid::reference {

// Numpy-style multidirectional broadcast; orchid::Error when incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b);
Shape broadcast_shapes(const std::vector<Shape>& shapes);

// Maps a possibly negative axis into [0, rank); orchid::Error when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank);
std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank);

// For an output index (as a flat offset into out_shape), the flat offset of the
// element of a broadcast input with in_shape. Precompute with BroadcastIndexer
// when iterating.
class BroadcastIndexer {
 public:
  BroadcastIndexer(const Shape& in_shape, const Shape& out_shape);
  int64_t operator()(int64_t out_flat) const;

 private:
  std::vector<int64_t> out_strides_;
  std::vector<int64_t> in_strides_;  // 0 on broadcast dimensions
  std::vector<int64_t> out_dims_;
};

// Single-output inference helpers.
inline std::vector<TensorType> one(DType dtype, Shape shape) { return {TensorType{dtype, std::move(shape)}}; }

// Walks every multi-index of a shape in row-major order.
// for_each_index(shape, [&](const std::vector<int64_t>& idx) { ... });
template <typename F>
void for_each_index(const Shape& shape, F&& f) {
  int64_t n = shape_numel(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    f(idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace orchid::reference
