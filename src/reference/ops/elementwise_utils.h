// Kernels and type checks shared by the elementwise-family reference operators
// (elementwise.cc, activation.cc, misc.cc).
//
// Elementwise loops are written for reasonable speed because whole models
// (ResNet-sized) run through the interpreter: equal shapes take one flat loop;
// broadcasting walks the output in contiguous rows after merging dimensions
// that can be merged, so the innermost loop is a strided run rather than a
// per-element index computation.
//
// Arithmetic on float16/bfloat16 goes through float and rounds back once per
// element: a kernel's function receives `Compute<T>` values and its result is
// converted to the output's storage type.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "ir/tensor.h"
#include "reference/op_registry.h"

namespace orchid::reference {

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || std::is_same_v<T, Half> ||
                          std::is_same_v<T, BFloat16>;
template <typename T>
constexpr bool kIsInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <typename T>
constexpr bool kIsNumeric = kIsFloat<T> || kIsInteger<T>;

// The type arithmetic on T is done in: float for the 16-bit floats, T otherwise.
template <typename T>
using Compute = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// Converts a computed value to storage type T (Half/BFloat16 round once).
template <typename T, typename V>
inline T to_storage(V value) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(float(value));
  } else {
    return static_cast<T>(value);
  }
}

// Integer arithmetic that wraps around like two's-complement hardware instead
// of being undefined on signed overflow (types narrower than int are promoted
// to unsigned int first so the product cannot overflow an int).
template <typename T>
using WrapUnsigned = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
template <typename T>
inline T wrapping_add(T a, T b) { return T(WrapUnsigned<T>(a) + WrapUnsigned<T>(b)); }
template <typename T>
inline T wrapping_sub(T a, T b) { return T(WrapUnsigned<T>(a) - WrapUnsigned<T>(b)); }
template <typename T>
inline T wrapping_mul(T a, T b) { return T(WrapUnsigned<T>(a) * WrapUnsigned<T>(b)); }

// Converts a double to integer type T without undefined behaviour: NaN gives
// 0 and out-of-range values saturate.
template <typename T>
inline T saturating_from_double(double value) {
  if (value != value) return T(0);
  if (value <= double(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (value >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return T(value);
}

// ---- Per-element semantics -------------------------------------------------
// Shared by the interpreter's operators and the runtime's elementwise
// kernels: integer arithmetic wraps, integer division and modulo by zero
// give 0, Max/Min propagate NaN.

template <typename C>
C abs_value(C x) {
  if constexpr (std::is_unsigned_v<C>) {
    return x;
  } else if constexpr (std::is_integral_v<C>) {
    return x < 0 ? wrapping_sub(C(0), x) : x;
  } else {
    return std::abs(x);
  }
}
template <typename C>
C add_values(C a, C b) {
  if constexpr (kIsInteger<C>) return wrapping_add(a, b);
  else return a + b;
}
template <typename C>
C sub_values(C a, C b) {
  if constexpr (kIsInteger<C>) return wrapping_sub(a, b);
  else return a - b;
}
template <typename C>
C mul_values(C a, C b) {
  if constexpr (kIsInteger<C>) return wrapping_mul(a, b);
  else return a * b;
}
// Integer division truncates towards zero, like C.
template <typename C>
C div_values(C a, C b) {
  if constexpr (kIsInteger<C>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<C>) {
      if (b == -1) return wrapping_sub(C(0), a);  // avoids INT_MIN / -1
    }
    return C(a / b);
  } else {
    return a / b;
  }
}
// fmod = true: the remainder has the dividend's sign (C fmod / %); false: the
// divisor's sign (Python %), integers only.
template <typename C>
C mod_values(C a, C b, bool fmod) {
  if constexpr (kIsInteger<C>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<C>) {
      if (b == -1) return 0;
    }
    C r = C(a % b);
    if constexpr (std::is_signed_v<C>) {
      if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = C(r + b);
    }
    return r;
  } else {
    return std::fmod(a, b);
  }
}
// Max and Min propagate NaN like numpy.maximum/minimum: a NaN `a` is taken
// by the self-comparison (false for integers), a NaN `b` because every
// comparison with it fails.
template <typename C>
C max_values(C a, C b) {
  return (a > b || a != a) ? a : b;
}
template <typename C>
C min_values(C a, C b) {
  return (a < b || a != a) ? a : b;
}

// Integer base and exponent: exact (wrapping) repeated squaring; a negative
// exponent gives the truncated real result (0 unless |base| == 1).
template <typename C, typename E>
C integer_pow(C base, E exponent) {
  if constexpr (std::is_signed_v<E>) {
    if (exponent < 0) {
      if (base == C(1)) return C(1);
      if constexpr (std::is_signed_v<C>) {
        if (base == C(-1)) return (exponent % 2 == 0) ? C(1) : C(-1);
      }
      return C(0);
    }
  }
  C result = 1;
  uint64_t e = uint64_t(exponent);
  while (e) {
    if (e & 1) result = wrapping_mul(result, base);
    base = wrapping_mul(base, base);
    e >>= 1;
  }
  return result;
}

// ---- Type checks (at inference time; messages name the input) ------------

enum class TypeClass {
  Float,     // float32/64, float16, bfloat16
  Numeric,   // floats and integers
  Signed,    // floats and signed integers
  Integer,   // signed and unsigned integers
  Unsigned,  // unsigned integers
  Bool,
  NumericOrBool,
};

bool dtype_in_class(DType dtype, TypeClass cls);
// The same test on a storage type, for `if constexpr` in dispatched kernels.
template <typename T>
constexpr bool type_in_class(TypeClass cls) {
  switch (cls) {
    case TypeClass::Float: return kIsFloat<T>;
    case TypeClass::Numeric: return kIsNumeric<T>;
    case TypeClass::Signed: return kIsFloat<T> || (kIsInteger<T> && std::is_signed_v<T>);
    case TypeClass::Integer: return kIsInteger<T>;
    case TypeClass::Unsigned: return kIsInteger<T> && std::is_unsigned_v<T>;
    case TypeClass::Bool: return std::is_same_v<T, bool>;
    case TypeClass::NumericOrBool: return true;
  }
  return false;
}
// orchid::Error like "expected a float tensor for input 0 (X), got int64".
void require_dtype(DType dtype, TypeClass cls, size_t index, const char* name);
// orchid::Error unless inputs a and b share a dtype.
void require_same_dtype(const InferContext& ctx, size_t a, size_t b);

// ---- Broadcast iteration -------------------------------------------------

// The output shape split into rows. Inputs are aligned to the output rank
// (numpy rules), broadcast dimensions get stride 0, size-1 dimensions are
// dropped and adjacent dimensions that every input walks contiguously are
// merged, so the last dimension is as long as possible.
struct BroadcastPlan {
  std::vector<int64_t> dims;                  // merged output dimensions (at least one)
  std::vector<std::vector<int64_t>> strides;  // per input, per merged dimension
};
BroadcastPlan make_broadcast_plan(const Shape& out_shape, const std::vector<Shape>& in_shapes);

// Calls row(out_offset, in_offsets, in_strides, count) for every row of the
// output: elements out[out_offset + k] and, for input j, in_j[in_offsets[j] +
// k * in_strides[j]] for k in [0, count).
template <size_t N, typename RowFn>
void for_each_broadcast_row(const Shape& out_shape, const std::array<const Shape*, N>& in_shapes,
                            RowFn&& row) {
  if (shape_numel(out_shape) == 0) return;
  std::vector<Shape> shapes;
  for (const Shape* s : in_shapes) shapes.push_back(*s);
  BroadcastPlan plan = make_broadcast_plan(out_shape, shapes);
  size_t rank = plan.dims.size();
  int64_t count = plan.dims[rank - 1];
  std::array<int64_t, N> inner{};
  for (size_t j = 0; j < N; ++j) inner[j] = plan.strides[j][rank - 1];
  std::vector<int64_t> idx(rank, 0);
  std::array<int64_t, N> offsets{};
  int64_t rows = shape_numel(out_shape) / count;
  for (int64_t r = 0; r < rows; ++r) {
    row(r * count, offsets, inner, count);
    // Advance the odometer over the outer dimensions.
    for (size_t d = rank - 1; d-- > 0;) {
      if (++idx[d] < plan.dims[d]) {
        for (size_t j = 0; j < N; ++j) offsets[j] += plan.strides[j][d];
        break;
      }
      for (size_t j = 0; j < N; ++j) offsets[j] -= plan.strides[j][d] * (plan.dims[d] - 1);
      idx[d] = 0;
    }
  }
}

// ---- Elementwise maps ----------------------------------------------------

// out[i] = f(x[i]) with x of storage type In and out of storage type Out; f
// takes and returns compute values.
template <typename In, typename Out, typename F>
void unary_map(const Tensor& x, Tensor& out, F&& f) {
  const In* px = x.data<In>();
  Out* po = out.data<Out>();
  int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) po[i] = to_storage<Out>(f(Compute<In>(px[i])));
}

// out = f(a, b) with numpy broadcasting; out must have the broadcast shape.
template <typename A, typename B, typename Out, typename F>
void binary_map(const Tensor& a, const Tensor& b, Tensor& out, F&& f) {
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  Out* po = out.data<Out>();
  if (a.shape() == out.shape() && b.shape() == out.shape()) {
    int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) po[i] = to_storage<Out>(f(Compute<A>(pa[i]), Compute<B>(pb[i])));
    return;
  }
  for_each_broadcast_row<2>(
      out.shape(), {&a.shape(), &b.shape()},
      [&](int64_t o, const std::array<int64_t, 2>& off, const std::array<int64_t, 2>& st, int64_t n) {
        const A* ra = pa + off[0];
        const B* rb = pb + off[1];
        Out* ro = po + o;
        for (int64_t k = 0; k < n; ++k) {
          ro[k] = to_storage<Out>(f(Compute<A>(ra[k * st[0]]), Compute<B>(rb[k * st[1]])));
        }
      });
}

// out = f(a, b, c) with numpy broadcasting.
template <typename A, typename B, typename C, typename Out, typename F>
void ternary_map(const Tensor& a, const Tensor& b, const Tensor& c, Tensor& out, F&& f) {
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  const C* pc = c.data<C>();
  Out* po = out.data<Out>();
  for_each_broadcast_row<3>(
      out.shape(), {&a.shape(), &b.shape(), &c.shape()},
      [&](int64_t o, const std::array<int64_t, 3>& off, const std::array<int64_t, 3>& st, int64_t n) {
        for (int64_t k = 0; k < n; ++k) {
          po[o + k] = to_storage<Out>(f(Compute<A>(pa[off[0] + k * st[0]]),
                                        Compute<B>(pb[off[1] + k * st[1]]),
                                        Compute<C>(pc[off[2] + k * st[2]])));
        }
      });
}

// ---- Schemas for float unary functions -------------------------------------

// A unary operator on float tensors whose output has the input's type. `make`
// builds the scalar function from the node's attributes (and validates them;
// it also runs at inference so bad attributes are reported at load time):
// make(const Attributes&) -> generic callable taking and returning float or
// double.
template <typename Make>
OpSchema float_unary_schema(std::string op, Make make) {
  OpSchema schema;
  schema.op = std::move(op);
  schema.min_inputs = 1;
  schema.max_inputs = 1;
  schema.infer = [make](const InferContext& ctx) {
    const TensorType& x = ctx.input(0);
    require_dtype(x.dtype, TypeClass::Float, 0, "X");
    (void)make(ctx.attrs());
    return std::vector<TensorType>{x};
  };
  schema.eval = [make](const EvalContext& ctx) {
    const Tensor& x = ctx.input(0);
    Tensor out(x.type());
    auto f = make(ctx.attrs());
    visit_dtype(x.dtype(), [&]<typename T>() {
      if constexpr (kIsFloat<T>) unary_map<T, T>(x, out, f);
    });
    return std::vector<Tensor>{out};
  };
  return schema;
}

// The same for a function without attributes.
template <typename F>
OpSchema float_unary_schema_fn(std::string op, F f) {
  return float_unary_schema(std::move(op), [f](const Attributes&) { return f; });
}

}  // namespace orchid::reference
