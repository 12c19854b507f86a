// Element types of tensors, shared by Orchid's public API (orchid.h) and its
// internals (src/ir/dtype.h adds conversions and dispatch). The set follows
// ONNX's TensorProto.DataType; strings and complex numbers are not supported.
#pragma once

#include <cstddef>
#include <cstdint>

namespace orchid {

enum class DType : uint8_t {
  Float32,
  Float64,
  Float16,
  BFloat16,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Bool,
};

size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);  // "float32", "int64", ...

}  // namespace orchid
