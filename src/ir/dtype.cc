#include "ir/dtype.h"

#include <bit>
#include <cmath>

namespace orchid {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::Float64: case DType::Int64: case DType::UInt64: return 8;
    case DType::Float32: case DType::Int32: case DType::UInt32: return 4;
    case DType::Float16: case DType::BFloat16: case DType::Int16: case DType::UInt16: return 2;
    case DType::Int8: case DType::UInt8: case DType::Bool: return 1;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Int8: return "int8";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::UInt8: return "uint8";
    case DType::UInt16: return "uint16";
    case DType::UInt32: return "uint32";
    case DType::UInt64: return "uint64";
    case DType::Bool: return "bool";
  }
  return "?";
}

bool is_float(DType dtype) {
  return dtype == DType::Float32 || dtype == DType::Float64 || dtype == DType::Float16 ||
         dtype == DType::BFloat16;
}

bool is_integer(DType dtype) { return !is_float(dtype) && dtype != DType::Bool; }

bool is_signed(DType dtype) {
  return is_float(dtype) || dtype == DType::Int8 || dtype == DType::Int16 ||
         dtype == DType::Int32 || dtype == DType::Int64;
}

namespace {
// (onnx code, dtype) pairs; codes from onnx.proto TensorProto.DataType.
constexpr struct {
  int code;
  DType dtype;
} kOnnxCodes[] = {
    {1, DType::Float32}, {2, DType::UInt8},   {3, DType::Int8},     {4, DType::UInt16},
    {5, DType::Int16},   {6, DType::Int32},   {7, DType::Int64},    {9, DType::Bool},
    {10, DType::Float16}, {11, DType::Float64}, {12, DType::UInt32}, {13, DType::UInt64},
    {16, DType::BFloat16},
};
}  // namespace

bool dtype_from_onnx(int onnx_code, DType* dtype) {
  for (const auto& entry : kOnnxCodes) {
    if (entry.code == onnx_code) {
      *dtype = entry.dtype;
      return true;
    }
  }
  return false;
}

int dtype_to_onnx(DType dtype) {
  for (const auto& entry : kOnnxCodes) {
    if (entry.dtype == dtype) return entry.code;
  }
  return 0;
}

std::string onnx_dtype_name(int onnx_code) {
  DType dtype;
  if (dtype_from_onnx(onnx_code, &dtype)) return dtype_name(dtype);
  switch (onnx_code) {
    case 0: return "undefined";
    case 8: return "string";
    case 14: return "complex64";
    case 15: return "complex128";
    case 17: case 18: case 19: case 20: return "float8";
    case 21: return "uint4";
    case 22: return "int4";
    default: return "dtype code " + std::to_string(onnx_code);
  }
}

// IEEE 754 binary16 conversions with round-to-nearest-even.
float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal half: renormalize
      int shift = 0;
      while ((mantissa & 0x400) == 0) {
        mantissa <<= 1;
        ++shift;
      }
      mantissa &= 0x3ff;
      bits = sign | (uint32_t(127 - 15 - shift + 1) << 23) | (mantissa << 13);
    }
  } else if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(bits);
}

uint16_t float_to_half(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits >= 0x7f800000u) {  // inf or nan
    return sign | 0x7c00u | (abs_bits > 0x7f800000u ? 0x200u : 0u);
  }
  if (abs_bits >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: inf
  if (abs_bits < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    float magnitude = std::bit_cast<float>(abs_bits);
    // Scale so the subnormal step (2^-24) becomes 1, then round to nearest even.
    float scaled = magnitude * 16777216.0f;
    return sign | uint16_t(std::nearbyint(scaled));
  }
  uint32_t exponent = (abs_bits >> 23) - 127 + 15;
  uint32_t mantissa = abs_bits & 0x7fffffu;
  uint32_t half = (exponent << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return sign | uint16_t(half);
}

Half::Half(float value) : bits(float_to_half(value)) {}
Half::operator float() const { return half_to_float(bits); }

BFloat16::BFloat16(float value) {
  uint32_t b = std::bit_cast<uint32_t>(value);
  if ((b & 0x7fffffffu) > 0x7f800000u) {
    bits = uint16_t((b >> 16) | 0x40u);  // quiet nan
  } else {
    b += 0x7fffu + ((b >> 16) & 1u);  // round to nearest even
    bits = uint16_t(b >> 16);
  }
}
BFloat16::operator float() const { return std::bit_cast<float>(uint32_t(bits) << 16); }

}  // namespace orchid
