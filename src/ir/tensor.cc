#include "ir/tensor.h"

#include "ir/element_convert.h"

#include <cstring>
#include <new>

#include "support/error.h"

namespace orchid {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_to_string(const Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += 'x';
    text += std::to_string(shape[i]);
  }
  return text;
}

std::vector<int64_t> shape_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

std::vector<int64_t> channels_first_perm(int64_t rank) {
  std::vector<int64_t> perm = {0, rank - 1};
  for (int64_t a = 1; a < rank - 1; ++a) perm.push_back(a);
  return perm;
}

std::vector<int64_t> channels_last_perm(int64_t rank) {
  std::vector<int64_t> perm = {0};
  for (int64_t a = 2; a < rank; ++a) perm.push_back(a);
  perm.push_back(1);
  return perm;
}

Shape channels_last_shape(const Shape& shape) {
  Shape out{shape[0]};
  out.insert(out.end(), shape.begin() + 2, shape.end());
  out.push_back(shape[1]);
  return out;
}

std::string TensorType::to_string() const {
  return std::string(dtype_name(dtype)) + "[" + shape_to_string(shape) + "]";
}

namespace {

// 64-byte aligned storage for `bytes`, at least one byte so empty tensors
// are defined; zeroed or not.
std::shared_ptr<std::byte[]> allocate_storage(size_t bytes, bool zeroed) {
  const size_t padded = ((bytes + 63) / 64) * 64 + 64;
  auto* memory = static_cast<std::byte*>(::operator new[](padded, std::align_val_t(64)));
  if (zeroed) std::memset(memory, 0, padded);
  return std::shared_ptr<std::byte[]>(memory, [](std::byte* p) { ::operator delete[](p, std::align_val_t(64)); });
}

void check_dimensions(const Shape& shape) {
  for (int64_t d : shape) {
    if (d < 0) ORCHID_FAIL() << "negative dimension in tensor shape " << shape_to_string(shape);
  }
}

}  // namespace

Tensor::Tensor(DType dtype, Shape shape) : type_{dtype, std::move(shape)} {
  check_dimensions(type_.shape);
  storage_ = allocate_storage(nbytes(), true);
}

Tensor Tensor::uninitialized(const TensorType& type) {
  check_dimensions(type.shape);
  Tensor tensor;
  tensor.type_ = type;
  tensor.storage_ = allocate_storage(type.nbytes(), false);
  return tensor;
}

Tensor Tensor::scalar_i64(int64_t value) {
  Tensor t(DType::Int64, {});
  t.data<int64_t>()[0] = value;
  return t;
}

Tensor Tensor::vector_i64(const std::vector<int64_t>& values) {
  Tensor t(DType::Int64, {int64_t(values.size())});
  if (!values.empty()) std::memcpy(t.raw(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

Tensor Tensor::scalar_f32(float value) {
  Tensor t(DType::Float32, {});
  t.data<float>()[0] = value;
  return t;
}

Tensor Tensor::borrow(const TensorType& type, void* data) {
  Tensor view;
  view.type_ = type;
  // Aliasing constructor with no owner: the view never frees `data`.
  view.storage_ = std::shared_ptr<std::byte[]>(std::shared_ptr<std::byte[]>(), static_cast<std::byte*>(data));
  return view;
}

Tensor Tensor::borrow(const TensorType& type, void* data, std::shared_ptr<void> owner) {
  Tensor view;
  view.type_ = type;
  view.storage_ = std::shared_ptr<std::byte[]>(std::move(owner), static_cast<std::byte*>(data));
  return view;
}

Tensor Tensor::clone() const {
  if (!defined()) return {};
  Tensor copy = uninitialized(type_);
  std::memcpy(copy.raw(), raw(), nbytes());
  return copy;
}

Tensor Tensor::reshaped(Shape shape) const {
  ORCHID_CHECK(shape_numel(shape) == numel())
      << "reshape " << shape_to_string(type_.shape) << " to " << shape_to_string(shape);
  Tensor view = *this;
  view.type_.shape = std::move(shape);
  return view;
}

double Tensor::at_f64(int64_t i) const {
  double result = 0;
  ORCHID_DISPATCH(dtype(), T, result = double(data<T>()[i]));
  return result;
}

int64_t Tensor::at_i64(int64_t i) const {
  int64_t result = 0;
  visit_dtype(dtype(), [&]<typename T>() { result = convert_element<int64_t>(data<T>()[i]); });
  return result;
}

void Tensor::set_f64(int64_t i, double value) {
  visit_dtype(dtype(), [&]<typename T>() { data<T>()[i] = convert_element<T>(value); });
}

std::vector<int64_t> Tensor::to_i64_vector() const {
  std::vector<int64_t> out(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) out[size_t(i)] = at_i64(i);
  return out;
}

std::vector<double> Tensor::to_f64_vector() const {
  std::vector<double> out(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) out[size_t(i)] = at_f64(i);
  return out;
}

Tensor Tensor::cast(DType to) const {
  Tensor out(to, shape());
  int64_t n = numel();
  visit_dtype(dtype(), [&]<typename From>() {
    const From* src = data<From>();
    visit_dtype(to, [&]<typename To>() {
      To* dst = out.data<To>();
      for (int64_t i = 0; i < n; ++i) dst[i] = convert_element<To, From>(src[i]);
    });
  });
  return out;
}

}  // namespace orchid
