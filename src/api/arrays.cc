// The public API's tensor descriptions (include/orchid/orchid.h).
#include "ir/tensor.h"
#include "orchid/orchid.h"

namespace orchid {

int64_t TensorInfo::numel() const { return shape_numel(shape); }
size_t TensorInfo::nbytes() const { return size_t(numel()) * dtype_size(dtype); }

size_t TensorView::nbytes() const { return size_t(shape_numel(shape)) * dtype_size(dtype); }

Array::Array(DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  auto tensor = std::make_shared<Tensor>(dtype_, shape_);  // 64-byte aligned, zeroed
  data_ = tensor->raw();
  owner_ = std::move(tensor);
}

Array::Array(DType dtype, std::vector<int64_t> shape, void* data, std::shared_ptr<void> owner)
    : dtype_(dtype), shape_(std::move(shape)), data_(data), owner_(std::move(owner)) {}

int64_t Array::numel() const { return shape_numel(shape_); }
size_t Array::nbytes() const { return size_t(numel()) * dtype_size(dtype_); }

}  // namespace orchid
