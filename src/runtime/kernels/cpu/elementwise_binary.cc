// Binary elementwise kernels with numpy broadcasting: arithmetic, Max/Min,
// comparisons, logic, bitwise operators and Pow. Both inputs share a dtype
// (Pow's exponent excepted); float16/bfloat16 are left to the reference
// kernel.
//
// GCC only if-converts (and so vectorizes) Max/Min's NaN-propagating select
// when floating-point exceptions need not be preserved; that changes no
// result value, and nothing in Orchid reads the FP exception flags.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

#include "runtime/kernels/cpu/elementwise_kernel.h"
#include "runtime/kernels/cpu/elementwise_ops.h"

namespace orchid::runtime::cpu {

namespace {

using reference::kIsInteger;
using reference::kIsNumeric;

template <typename T, typename F>
std::unique_ptr<Kernel> same_type(const ElementwiseNode& node, F f) {
  return make_map_kernel<T, T, T>(node, f);
}
template <typename T, typename F>
std::unique_ptr<Kernel> to_bool(const ElementwiseNode& node, F f) {
  return make_map_kernel<bool, T, T>(node, f);
}

template <typename T>
std::unique_ptr<Kernel> numeric_kernel(const ElementwiseNode& node) {
  const std::string& op = node.node.op;
  if (op == "Add") return same_type<T>(node, [](T a, T b) { return reference::add_values(a, b); });
  if (op == "Sub") return same_type<T>(node, [](T a, T b) { return reference::sub_values(a, b); });
  if (op == "Mul") return same_type<T>(node, [](T a, T b) { return reference::mul_values(a, b); });
  if (op == "Div") return same_type<T>(node, [](T a, T b) { return reference::div_values(a, b); });
  if (op == "Mod") {
    const bool fmod = node.node.attrs.get_int("fmod", 0) != 0;
    return same_type<T>(node, [fmod](T a, T b) { return reference::mod_values(a, b, fmod); });
  }
  if (op == "Max") return same_type<T>(node, [](T a, T b) { return reference::max_values(a, b); });
  if (op == "Min") return same_type<T>(node, [](T a, T b) { return reference::min_values(a, b); });
  if (op == "Less") return to_bool<T>(node, [](T a, T b) { return a < b; });
  if (op == "LessOrEqual") return to_bool<T>(node, [](T a, T b) { return a <= b; });
  if (op == "Greater") return to_bool<T>(node, [](T a, T b) { return a > b; });
  if (op == "GreaterOrEqual") return to_bool<T>(node, [](T a, T b) { return a >= b; });
  return nullptr;
}

template <typename T>
std::unique_ptr<Kernel> integer_kernel(const ElementwiseNode& node) {
  const std::string& op = node.node.op;
  if (op == "BitwiseAnd") return same_type<T>(node, [](T a, T b) { return T(a & b); });
  if (op == "BitwiseOr") return same_type<T>(node, [](T a, T b) { return T(a | b); });
  if (op == "BitwiseXor") return same_type<T>(node, [](T a, T b) { return T(a ^ b); });
  if constexpr (std::is_unsigned_v<T>) {
    if (op == "BitShift") {
      const bool left = node.node.attrs.get_string("direction", "") == "LEFT";
      return same_type<T>(node, [left](T a, T b) { return ops::shift(a, b, left); });
    }
  }
  return nullptr;
}

std::unique_ptr<Kernel> bool_kernel(const ElementwiseNode& node) {
  const std::string& op = node.node.op;
  if (op == "And") return to_bool<bool>(node, [](bool a, bool b) { return a && b; });
  if (op == "Or") return to_bool<bool>(node, [](bool a, bool b) { return a || b; });
  if (op == "Xor") return to_bool<bool>(node, [](bool a, bool b) { return a != b; });
  return nullptr;
}

template <typename T>
std::unique_ptr<Kernel> typed_kernel(const ElementwiseNode& node) {
  if (node.node.op == "Equal") return to_bool<T>(node, [](T a, T b) { return a == b; });
  if constexpr (std::is_same_v<T, bool>) {
    return bool_kernel(node);
  } else {
    if (std::unique_ptr<Kernel> kernel = numeric_kernel<T>(node)) return kernel;
    if constexpr (kIsInteger<T>) return integer_kernel<T>(node);
    return nullptr;
  }
}

// Pow's base and exponent each in {float32, float64, int32, int64}.
template <typename F>
void visit_pow_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Float32: f.template operator()<float>(); break;
    case DType::Float64: f.template operator()<double>(); break;
    case DType::Int32: f.template operator()<int32_t>(); break;
    case DType::Int64: f.template operator()<int64_t>(); break;
    default: break;
  }
}

// Whether Pow's exponent is the constant 2, which a float base computes as
// x * x: for float32 the same value as the reference's pow in double rounded
// to float, since the square of a float is exact in double.
bool exponent_is_two(const ElementwiseNode& node) {
  const Tensor* exponent = node.constant(1);
  return exponent && exponent->numel() == 1 && exponent->at_f64(0) == 2.0;
}

}  // namespace

std::unique_ptr<Kernel> make_binary_kernel(const ElementwiseNode& node) {
  if (node.input_types.size() != 2 || node.input_types[0].dtype != node.input_types[1].dtype) return nullptr;
  std::unique_ptr<Kernel> kernel;
  visit_dtype(node.input_types[0].dtype, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, Half> && !std::is_same_v<T, BFloat16>) kernel = typed_kernel<T>(node);
  });
  return kernel;
}

std::unique_ptr<Kernel> make_pow_kernel(const ElementwiseNode& node) {
  if (node.input_types.size() != 2) return nullptr;
  const bool square = exponent_is_two(node);
  std::unique_ptr<Kernel> kernel;
  visit_pow_dtype(node.input_types[0].dtype, [&]<typename T>() {
    visit_pow_dtype(node.input_types[1].dtype, [&]<typename E>() {
      if (std::is_floating_point_v<T> && square) {
        kernel = make_map_kernel<T, T, E>(node, [](T base, E) { return T(base * base); });
      } else {
        kernel = make_map_kernel<T, T, E>(node, [](T base, E exponent) { return ops::pow(base, exponent); });
      }
    });
  });
  return kernel;
}

}  // namespace orchid::runtime::cpu
