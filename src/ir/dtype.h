// Element types of tensors: the enum and its names are public
// (include/orchid/dtype.h); here the conversions, ONNX codes and dispatch.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "orchid/dtype.h"

namespace orchid {

bool is_float(DType dtype);
bool is_integer(DType dtype);  // signed or unsigned integer, not bool
bool is_signed(DType dtype);   // floats and signed integers

// ONNX TensorProto.DataType codes. Returns false for unsupported codes.
bool dtype_from_onnx(int onnx_code, DType* dtype);
int dtype_to_onnx(DType dtype);
// Name of an ONNX element type code, also for the unsupported ones ("string").
std::string onnx_dtype_name(int onnx_code);

// IEEE half and bfloat16 storage types; arithmetic goes through float.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float value);  // NOLINT: implicit, like a numeric type
  operator float() const;
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float value);  // NOLINT
  operator float() const;
};

float half_to_float(uint16_t bits);
uint16_t float_to_half(float value);

// Calls f.template operator()<T>() with T the C++ type of dtype, e.g.
//   visit_dtype(dtype, [&]<typename T>() { ... if constexpr (...) ... });
// Unlike ORCHID_DISPATCH, the body is a template, so `if constexpr` discards
// branches that do not compile for some T.
template <typename F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Float32: return f.template operator()<float>();
    case DType::Float64: return f.template operator()<double>();
    case DType::Float16: return f.template operator()<Half>();
    case DType::BFloat16: return f.template operator()<BFloat16>();
    case DType::Int8: return f.template operator()<int8_t>();
    case DType::Int16: return f.template operator()<int16_t>();
    case DType::Int32: return f.template operator()<int32_t>();
    case DType::Int64: return f.template operator()<int64_t>();
    case DType::UInt8: return f.template operator()<uint8_t>();
    case DType::UInt16: return f.template operator()<uint16_t>();
    case DType::UInt32: return f.template operator()<uint32_t>();
    case DType::UInt64: return f.template operator()<uint64_t>();
    case DType::Bool: return f.template operator()<bool>();
  }
  return f.template operator()<float>();
}

}  // namespace orchid

// ORCHID_DISPATCH (body is NOT a template: `if constexpr` does not discard
// there; use visit_dtype for type-dependent branches)(dtype, T, { body using T }) runs body with T bound to the C++
// type of dtype (Half / BFloat16 for the 16-bit floats, bool for Bool).
#define ORCHID_DISPATCH_CASE(ENUM, TYPE, ...) \
  case ::orchid::DType::ENUM: {               \
    using T = TYPE;                           \
    __VA_ARGS__;                              \
    break;                                    \
  }
#define ORCHID_DISPATCH(dtype, T_UNUSED, ...)                         \
  switch (dtype) {                                                    \
    ORCHID_DISPATCH_CASE(Float32, float, __VA_ARGS__)                 \
    ORCHID_DISPATCH_CASE(Float64, double, __VA_ARGS__)                \
    ORCHID_DISPATCH_CASE(Float16, ::orchid::Half, __VA_ARGS__)        \
    ORCHID_DISPATCH_CASE(BFloat16, ::orchid::BFloat16, __VA_ARGS__)   \
    ORCHID_DISPATCH_CASE(Int8, int8_t, __VA_ARGS__)                   \
    ORCHID_DISPATCH_CASE(Int16, int16_t, __VA_ARGS__)                 \
    ORCHID_DISPATCH_CASE(Int32, int32_t, __VA_ARGS__)                 \
    ORCHID_DISPATCH_CASE(Int64, int64_t, __VA_ARGS__)                 \
    ORCHID_DISPATCH_CASE(UInt8, uint8_t, __VA_ARGS__)                 \
    ORCHID_DISPATCH_CASE(UInt16, uint16_t, __VA_ARGS__)               \
    ORCHID_DISPATCH_CASE(UInt32, uint32_t, __VA_ARGS__)               \
    ORCHID_DISPATCH_CASE(UInt64, uint64_t, __VA_ARGS__)               \
    ORCHID_DISPATCH_CASE(Bool, bool, __VA_ARGS__)                     \
  }
