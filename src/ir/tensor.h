// A dense, row-major tensor value with shared, immutable-by-convention
// storage. Copies share the buffer; use clone() for a deep copy.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace orchid {

using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape& shape);
std::string shape_to_string(const Shape& shape);  // "1x3x224x224"; "scalar" for rank 0
// Row-major strides in elements.
std::vector<int64_t> shape_strides(const Shape& shape);
// The Transpose perms between an image channels-first [N, C, spatial...]
// and channels-last [N, spatial..., C] of rank `rank`: to channels-first
// [0, r-1, 1, ..., r-2], to channels-last [0, 2, ..., r-1, 1].
std::vector<int64_t> channels_first_perm(int64_t rank);
std::vector<int64_t> channels_last_perm(int64_t rank);
// A channels-first shape [N, C, spatial...] as [N, spatial..., C].
Shape channels_last_shape(const Shape& shape);

struct TensorType {
  DType dtype = DType::Float32;
  Shape shape;

  int64_t numel() const { return shape_numel(shape); }
  size_t rank() const { return shape.size(); }
  size_t nbytes() const { return size_t(numel()) * dtype_size(dtype); }
  bool operator==(const TensorType&) const = default;
  std::string to_string() const;  // "float32[1x3x224x224]"
};

class Tensor {
 public:
  Tensor() = default;
  // Zero-initialized tensor.
  Tensor(DType dtype, Shape shape);
  explicit Tensor(const TensorType& type) : Tensor(type.dtype, type.shape) {}
  // A tensor whose contents are unspecified until written: for buffers that
  // are about to be overwritten whole (a program's outputs, a copy), where
  // zeroing would cost a pass over the memory (2.4 ms of a 21 ms conv with a
  // 22 MB output).
  static Tensor uninitialized(const TensorType& type);

  template <typename T>
  static Tensor from_vector(DType dtype, Shape shape, const std::vector<T>& values);
  static Tensor scalar_i64(int64_t value);
  static Tensor vector_i64(const std::vector<int64_t>& values);
  static Tensor scalar_f32(float value);
  // A tensor over memory it does not own: the caller keeps `data` alive (and
  // of type.nbytes() at least) for as long as the tensor and its copies live.
  static Tensor borrow(const TensorType& type, void* data);
  // A tensor over memory that `owner` keeps alive (a mapped file, a bigger
  // buffer); copies of the tensor share the owner.
  static Tensor borrow(const TensorType& type, void* data, std::shared_ptr<void> owner);

  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  const TensorType& type() const { return type_; }
  size_t rank() const { return type_.shape.size(); }
  int64_t dim(size_t axis) const { return type_.shape[axis]; }
  int64_t numel() const { return type_.numel(); }
  size_t nbytes() const { return type_.nbytes(); }
  bool defined() const { return storage_ != nullptr; }

  void* raw() { return storage_.get(); }
  const void* raw() const { return storage_.get(); }
  template <typename T>
  T* data() { return static_cast<T*>(raw()); }
  template <typename T>
  const T* data() const { return static_cast<const T*>(raw()); }
  template <typename T>
  std::span<const T> values() const { return {data<T>(), size_t(numel())}; }

  Tensor clone() const;
  // Same data, new shape with equal element count.
  Tensor reshaped(Shape shape) const;

  // Element i converted to double / int64 (any dtype). For generic code that
  // values clarity over speed: shape arithmetic, attribute-like inputs.
  double at_f64(int64_t i) const;
  int64_t at_i64(int64_t i) const;
  void set_f64(int64_t i, double value);
  std::vector<int64_t> to_i64_vector() const;
  std::vector<double> to_f64_vector() const;
  // Converts to another dtype with C++ (ONNX Cast) semantics.
  Tensor cast(DType dtype) const;

 private:
  TensorType type_;
  std::shared_ptr<std::byte[]> storage_;
};

template <typename T>
Tensor Tensor::from_vector(DType dtype, Shape shape, const std::vector<T>& values) {
  Tensor tensor(dtype, std::move(shape));
  for (size_t i = 0; i < values.size() && int64_t(i) < tensor.numel(); ++i) {
    tensor.set_f64(int64_t(i), double(values[i]));
  }
  return tensor;
}

}  // namespace orchid
