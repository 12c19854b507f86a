// Unary elementwise kernels: math on floats (float32's Exp, Sigmoid, Tanh and
// Erf through the vectorizable elementwise_math.h), Abs/Neg/Sign/Relu on
// numbers, IsNaN/IsInf, Not, BitwiseNot. float16/bfloat16 are left to the
// reference kernel.
//
// GCC only if-converts (and so vectorizes) a select on a widened float, as in
// fast_math's clamps, when floating-point exceptions need not be preserved.
// That changes no result value, and nothing in Orchid reads the FP exception
// flags. (Sqrt stays scalar: GCC keeps its errno branch.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

#include <cmath>
#include <limits>

#include "runtime/kernels/cpu/elementwise_kernel.h"
#include "runtime/kernels/cpu/elementwise_math.h"
#include "runtime/kernels/cpu/elementwise_ops.h"

namespace orchid::runtime::cpu {

namespace {

using reference::kIsInteger;
using reference::kIsNumeric;

// Math that float32 evaluates through fast_math and float64 through <cmath>.
struct Exp {
  float operator()(float x) const { return fast_math::exp(x); }
  double operator()(double x) const { return std::exp(x); }
};
struct Sigmoid {
  float operator()(float x) const { return fast_math::sigmoid(x); }
  // The reference's formulation, which cannot overflow.
  double operator()(double x) const {
    if (x >= 0) return 1 / (1 + std::exp(-x));
    const double e = std::exp(x);
    return e / (1 + e);
  }
};
struct Tanh {
  float operator()(float x) const { return fast_math::tanh(x); }
  double operator()(double x) const { return std::tanh(x); }
};
struct Erf {
  float operator()(float x) const { return fast_math::erf(x); }
  double operator()(double x) const { return std::erf(x); }
};
struct Log {
  float operator()(float x) const { return fast_math::log(x); }
  double operator()(double x) const { return std::log(x); }
};

template <typename T, typename F>
std::unique_ptr<Kernel> same_type(const ElementwiseNode& node, F f) {
  return make_map_kernel<T, T>(node, f);
}

// Operators defined on float inputs only.
template <typename T>
std::unique_ptr<Kernel> float_kernel(const ElementwiseNode& node) {
  const std::string& op = node.node.op;
  if (op == "Exp") return same_type<T>(node, Exp{});
  if (op == "Sigmoid") return same_type<T>(node, Sigmoid{});
  if (op == "Tanh") return same_type<T>(node, Tanh{});
  if (op == "Erf") return same_type<T>(node, Erf{});
  if (op == "Floor") return same_type<T>(node, [](T x) { return std::floor(x); });
  if (op == "Ceil") return same_type<T>(node, [](T x) { return std::ceil(x); });
  // Halfway cases round to even.
  if (op == "Round") return same_type<T>(node, [](T x) { return std::nearbyint(x); });
  if (op == "Sqrt") return same_type<T>(node, [](T x) { return std::sqrt(x); });
  if (op == "Reciprocal") return same_type<T>(node, [](T x) { return T(1) / x; });
  if (op == "Log") return same_type<T>(node, Log{});
  if (op == "Sin") return same_type<T>(node, [](T x) { return std::sin(x); });
  if (op == "Cos") return same_type<T>(node, [](T x) { return std::cos(x); });
  if (op == "Tan") return same_type<T>(node, [](T x) { return std::tan(x); });
  if (op == "Asin") return same_type<T>(node, [](T x) { return std::asin(x); });
  if (op == "Acos") return same_type<T>(node, [](T x) { return std::acos(x); });
  if (op == "Atan") return same_type<T>(node, [](T x) { return std::atan(x); });
  if (op == "Sinh") return same_type<T>(node, [](T x) { return std::sinh(x); });
  if (op == "Cosh") return same_type<T>(node, [](T x) { return std::cosh(x); });
  if (op == "Asinh") return same_type<T>(node, [](T x) { return std::asinh(x); });
  if (op == "Acosh") return same_type<T>(node, [](T x) { return std::acosh(x); });
  if (op == "Atanh") return same_type<T>(node, [](T x) { return std::atanh(x); });
  if (op == "IsNaN") return make_map_kernel<bool, T>(node, [](T x) { return x != x; });
  if (op == "IsInf") {
    const bool negative = node.node.attrs.get_int("detect_negative", 1) != 0;
    const bool positive = node.node.attrs.get_int("detect_positive", 1) != 0;
    const T inf = std::numeric_limits<T>::infinity();
    return make_map_kernel<bool, T>(node, [=](T x) { return (x == inf && positive) || (x == -inf && negative); });
  }
  return nullptr;
}

// Operators defined on numbers (and bool for Not).
template <typename T>
std::unique_ptr<Kernel> numeric_kernel(const ElementwiseNode& node) {
  const std::string& op = node.node.op;
  if constexpr (kIsNumeric<T>) {
    if (op == "Abs") return same_type<T>(node, [](T x) { return reference::abs_value(x); });
    if (op == "Sign") return same_type<T>(node, [](T x) { return ops::sign(x); });
  }
  if constexpr (kIsNumeric<T> && std::is_signed_v<T>) {
    if (op == "Neg") return same_type<T>(node, [](T x) { return ops::neg(x); });
    if (op == "Relu") return same_type<T>(node, [](T x) { return ops::relu(x); });
  }
  if constexpr (kIsInteger<T>) {
    if (op == "BitwiseNot") return same_type<T>(node, [](T x) { return T(~x); });
  }
  if constexpr (std::is_same_v<T, bool>) {
    if (op == "Not") return same_type<T>(node, [](bool x) { return !x; });
  }
  if constexpr (std::is_floating_point_v<T>) return float_kernel<T>(node);
  return nullptr;
}

}  // namespace

std::unique_ptr<Kernel> make_unary_kernel(const ElementwiseNode& node) {
  if (node.input_types.size() != 1) return nullptr;
  std::unique_ptr<Kernel> kernel;
  visit_dtype(node.input_types[0].dtype, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, Half> && !std::is_same_v<T, BFloat16>) kernel = numeric_kernel<T>(node);
  });
  return kernel;
}

}  // namespace orchid::runtime::cpu
