// Elementwise operators: unary math, binary arithmetic/logic/comparison with
// numpy broadcasting, the variadic Sum/Mean/Max/Min, Where, Clip, Cast and
// CastLike. Newest-opset semantics (Clip's min/max are inputs 1 and 2).
//
// Integer arithmetic wraps around instead of being undefined, and the cases
// ONNX leaves undefined get a fixed answer so the oracle never crashes:
// integer division or modulo by zero gives 0, shifts by the bit width or more
// give 0.
#include <cmath>
#include <limits>

#include "reference/ops/elementwise_utils.h"
#include "reference/ops/op_utils.h"
#include "reference/ops/ops.h"
#include "support/error.h"

namespace orchid::reference {
namespace {

// ---- Unary ---------------------------------------------------------------

// A unary operator on inputs of class Cls; the output is bool when BoolOut,
// else the input's type. f takes and returns compute values.
template <TypeClass Cls, bool BoolOut, typename F>
OpSchema unary_schema(std::string op, F f) {
  OpSchema schema;
  schema.op = std::move(op);
  schema.min_inputs = 1;
  schema.max_inputs = 1;
  schema.infer = [](const InferContext& ctx) {
    const TensorType& x = ctx.input(0);
    require_dtype(x.dtype, Cls, 0, "X");
    return one(BoolOut ? DType::Bool : x.dtype, x.shape);
  };
  schema.eval = [f](const EvalContext& ctx) {
    const Tensor& x = ctx.input(0);
    Tensor out(ctx.output_types[0]);
    visit_dtype(x.dtype(), [&]<typename T>() {
      if constexpr (type_in_class<T>(Cls)) {
        unary_map<T, std::conditional_t<BoolOut, bool, T>>(x, out, f);
      }
    });
    return std::vector<Tensor>{out};
  };
  return schema;
}


void register_unary(OpRegistry& r) {
  auto add_math = [&r](const char* op, auto fn) { r.add(float_unary_schema_fn(op, fn)); };
  add_math("Floor", [](auto x) { return std::floor(x); });
  add_math("Ceil", [](auto x) { return std::ceil(x); });
  // Halfway cases round to even: nearbyint in the default rounding mode.
  add_math("Round", [](auto x) { return std::nearbyint(x); });
  add_math("Sqrt", [](auto x) { return std::sqrt(x); });
  add_math("Reciprocal", [](auto x) { return decltype(x)(1) / x; });
  add_math("Exp", [](auto x) { return std::exp(x); });
  add_math("Log", [](auto x) { return std::log(x); });
  add_math("Sin", [](auto x) { return std::sin(x); });
  add_math("Cos", [](auto x) { return std::cos(x); });
  add_math("Tan", [](auto x) { return std::tan(x); });
  add_math("Asin", [](auto x) { return std::asin(x); });
  add_math("Acos", [](auto x) { return std::acos(x); });
  add_math("Atan", [](auto x) { return std::atan(x); });
  add_math("Sinh", [](auto x) { return std::sinh(x); });
  add_math("Cosh", [](auto x) { return std::cosh(x); });
  add_math("Asinh", [](auto x) { return std::asinh(x); });
  add_math("Acosh", [](auto x) { return std::acosh(x); });
  add_math("Atanh", [](auto x) { return std::atanh(x); });
  add_math("Erf", [](auto x) { return std::erf(x); });

  r.add(unary_schema<TypeClass::Numeric, false>("Abs", [](auto x) { return abs_value(x); }));
  r.add(unary_schema<TypeClass::Signed, false>("Neg", [](auto x) {
    if constexpr (std::is_integral_v<decltype(x)>) {
      return wrapping_sub(decltype(x)(0), x);
    } else {
      return -x;
    }
  }));
  // Sign(NaN) is NaN, like numpy.
  r.add(unary_schema<TypeClass::Numeric, false>("Sign", [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_unsigned_v<C>) {
      return x > C(0) ? C(1) : C(0);
    } else {
      return x > C(0) ? C(1) : (x < C(0) ? C(-1) : x);
    }
  }));
  r.add(unary_schema<TypeClass::Float, true>("IsNaN", [](auto x) { return x != x; }));
  r.add(unary_schema<TypeClass::Bool, false>("Not", [](auto x) { return !x; }));
  r.add(unary_schema<TypeClass::Integer, false>("BitwiseNot", [](auto x) { return decltype(x)(~x); }));

  // IsInf has attributes, so it builds its function per evaluation.
  OpSchema is_inf = unary_schema<TypeClass::Float, true>("IsInf", [](auto) { return false; });
  is_inf.eval = [](const EvalContext& ctx) {
    const Tensor& x = ctx.input(0);
    bool negative = ctx.attrs().get_int("detect_negative", 1) != 0;
    bool positive = ctx.attrs().get_int("detect_positive", 1) != 0;
    Tensor out(ctx.output_types[0]);
    visit_dtype(x.dtype(), [&]<typename T>() {
      if constexpr (kIsFloat<T>) {
        unary_map<T, bool>(x, out, [&](auto v) {
          return std::isinf(v) && ((v > 0 && positive) || (v < 0 && negative));
        });
      }
    });
    return std::vector<Tensor>{out};
  };
  r.add(std::move(is_inf));
}

// ---- Binary --------------------------------------------------------------

// A binary operator with numpy broadcasting on two inputs of one dtype in
// class Cls; the output is bool when BoolOut, else that dtype. make(attrs)
// returns the scalar function on compute values.
template <TypeClass Cls, bool BoolOut, typename Make>
OpSchema binary_schema(std::string op, Make make) {
  OpSchema schema;
  schema.op = std::move(op);
  schema.min_inputs = 2;
  schema.max_inputs = 2;
  schema.infer = [make](const InferContext& ctx) {
    require_dtype(ctx.input(0).dtype, Cls, 0, "A");
    require_dtype(ctx.input(1).dtype, Cls, 1, "B");
    require_same_dtype(ctx, 0, 1);
    (void)make(ctx.attrs());
    return one(BoolOut ? DType::Bool : ctx.input(0).dtype,
               broadcast_shapes(ctx.input(0).shape, ctx.input(1).shape));
  };
  schema.eval = [make](const EvalContext& ctx) {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Tensor out(ctx.output_types[0]);
    auto f = make(ctx.attrs());
    visit_dtype(a.dtype(), [&]<typename T>() {
      if constexpr (type_in_class<T>(Cls)) {
        binary_map<T, T, std::conditional_t<BoolOut, bool, T>>(a, b, out, f);
      }
    });
    return std::vector<Tensor>{out};
  };
  return schema;
}

template <TypeClass Cls, bool BoolOut, typename F>
OpSchema binary_schema_fn(std::string op, F f) {
  return binary_schema<Cls, BoolOut>(std::move(op), [f](const Attributes&) { return f; });
}

void register_arithmetic(OpRegistry& r) {
  using enum TypeClass;
  r.add(binary_schema_fn<Numeric, false>("Add", [](auto a, auto b) { return add_values(a, b); }));
  r.add(binary_schema_fn<Numeric, false>("Sub", [](auto a, auto b) { return sub_values(a, b); }));
  r.add(binary_schema_fn<Numeric, false>("Mul", [](auto a, auto b) { return mul_values(a, b); }));
  r.add(binary_schema_fn<Numeric, false>("Div", [](auto a, auto b) { return div_values(a, b); }));

  OpSchema mod = binary_schema<Numeric, false>("Mod", [](const Attributes& attrs) {
    bool fmod = attrs.get_int("fmod", 0) != 0;
    return [fmod](auto a, auto b) { return mod_values(a, b, fmod); };
  });
  mod.infer = [base = mod.infer](const InferContext& ctx) {
    if (is_float(ctx.input(0).dtype) && ctx.attrs().get_int("fmod", 0) == 0) {
      ORCHID_FAIL() << "Mod on floating-point inputs (" << dtype_name(ctx.input(0).dtype)
                    << ") requires attribute fmod=1";
    }
    return base(ctx);
  };
  r.add(std::move(mod));

  r.add(binary_schema<Unsigned, false>("BitShift", [](const Attributes& attrs) {
    std::string direction = attrs.get_string("direction", "");
    if (direction != "LEFT" && direction != "RIGHT") {
      ORCHID_FAIL() << "attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"" << direction << "\"";
    }
    bool left = direction == "LEFT";
    return [left](auto a, auto b) {
      using C = decltype(a);
      if (b >= C(sizeof(C) * 8)) return C(0);
      return left ? C(WrapUnsigned<C>(a) << b) : C(a >> b);
    };
  }));
  r.add(binary_schema_fn<Integer, false>("BitwiseAnd", [](auto a, auto b) { return decltype(a)(a & b); }));
  r.add(binary_schema_fn<Integer, false>("BitwiseOr", [](auto a, auto b) { return decltype(a)(a | b); }));
  r.add(binary_schema_fn<Integer, false>("BitwiseXor", [](auto a, auto b) { return decltype(a)(a ^ b); }));
  r.add(binary_schema_fn<Bool, true>("And", [](bool a, bool b) { return a && b; }));
  r.add(binary_schema_fn<Bool, true>("Or", [](bool a, bool b) { return a || b; }));
  r.add(binary_schema_fn<Bool, true>("Xor", [](bool a, bool b) { return a != b; }));
  r.add(binary_schema_fn<NumericOrBool, true>("Equal", [](auto a, auto b) { return a == b; }));
  r.add(binary_schema_fn<Numeric, true>("Less", [](auto a, auto b) { return a < b; }));
  r.add(binary_schema_fn<Numeric, true>("LessOrEqual", [](auto a, auto b) { return a <= b; }));
  r.add(binary_schema_fn<Numeric, true>("Greater", [](auto a, auto b) { return a > b; }));
  r.add(binary_schema_fn<Numeric, true>("GreaterOrEqual", [](auto a, auto b) { return a >= b; }));
}

// ---- Pow (base and exponent may have different dtypes) ---------------------

template <typename T, typename E>
void pow_kernel(const Tensor& base, const Tensor& exponent, Tensor& out) {
  binary_map<T, E, T>(base, exponent, out, [](Compute<T> b, Compute<E> e) {
    if constexpr (kIsInteger<T> && kIsInteger<E>) {
      return integer_pow(b, e);
    } else {
      // Computed in double, then converted to the base's type (truncated for
      // an integer base, like numpy's astype).
      double value = std::pow(double(b), double(e));
      if constexpr (kIsInteger<T>) {
        return saturating_from_double<T>(value);
      } else {
        return Compute<T>(value);
      }
    }
  });
}

OpSchema pow_schema() {
  OpSchema schema;
  schema.op = "Pow";
  schema.min_inputs = 2;
  schema.max_inputs = 2;
  schema.infer = [](const InferContext& ctx) {
    require_dtype(ctx.input(0).dtype, TypeClass::Numeric, 0, "X");
    require_dtype(ctx.input(1).dtype, TypeClass::Numeric, 1, "Y");
    return one(ctx.input(0).dtype, broadcast_shapes(ctx.input(0).shape, ctx.input(1).shape));
  };
  schema.eval = [](const EvalContext& ctx) {
    const Tensor& base = ctx.input(0);
    const Tensor& exponent = ctx.input(1);
    Tensor out(ctx.output_types[0]);
    visit_dtype(base.dtype(), [&]<typename Base>() {
      if constexpr (kIsNumeric<Base>) {
        visit_dtype(exponent.dtype(), [&]<typename T>() {
          if constexpr (kIsNumeric<T>) pow_kernel<Base, T>(base, exponent, out);
        });
      }
    });
    return std::vector<Tensor>{out};
  };
  return schema;
}

// ---- Variadic: Sum, Mean, Max, Min -------------------------------------------

// Folds the inputs pairwise with broadcasting; Mean divides the sum by the
// input count at the end.
template <TypeClass Cls, typename F>
OpSchema variadic_schema(std::string op, F f, bool mean = false) {
  OpSchema schema;
  schema.op = std::move(op);
  schema.min_inputs = 1;
  schema.infer = [](const InferContext& ctx) {
    std::vector<Shape> shapes;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      require_dtype(ctx.input(i).dtype, Cls, i, "data");
      require_same_dtype(ctx, 0, i);
      shapes.push_back(ctx.input(i).shape);
    }
    return one(ctx.input(0).dtype, broadcast_shapes(shapes));
  };
  schema.eval = [f, mean](const EvalContext& ctx) {
    Tensor acc = ctx.input(0);
    visit_dtype(acc.dtype(), [&]<typename T>() {
      if constexpr (type_in_class<T>(Cls)) {
        for (size_t i = 1; i < ctx.inputs.size(); ++i) {
          const Tensor& next = ctx.input(i);
          Tensor folded(acc.dtype(), broadcast_shapes(acc.shape(), next.shape()));
          binary_map<T, T, T>(acc, next, folded, f);
          acc = folded;
        }
        if (ctx.inputs.size() == 1) acc = acc.clone();
        if (mean) {
          Compute<T> count = Compute<T>(ctx.inputs.size());
          unary_map<T, T>(acc, acc, [count](auto v) { return v / count; });
        }
      }
    });
    return std::vector<Tensor>{acc};
  };
  return schema;
}

void register_variadic(OpRegistry& r) {
  using enum TypeClass;
  r.add(variadic_schema<Numeric>("Sum", [](auto a, auto b) { return add_values(a, b); }));
  r.add(variadic_schema<Float>("Mean", [](auto a, auto b) { return a + b; }, /*mean=*/true));
  r.add(variadic_schema<Numeric>("Max", [](auto a, auto b) { return max_values(a, b); }));
  r.add(variadic_schema<Numeric>("Min", [](auto a, auto b) { return min_values(a, b); }));
}

// ---- Where, Clip ---------------------------------------------------------

OpSchema where_schema() {
  OpSchema schema;
  schema.op = "Where";
  schema.min_inputs = 3;
  schema.max_inputs = 3;
  schema.infer = [](const InferContext& ctx) {
    require_dtype(ctx.input(0).dtype, TypeClass::Bool, 0, "condition");
    require_same_dtype(ctx, 1, 2);
    return one(ctx.input(1).dtype,
               broadcast_shapes({ctx.input(0).shape, ctx.input(1).shape, ctx.input(2).shape}));
  };
  schema.eval = [](const EvalContext& ctx) {
    Tensor out(ctx.output_types[0]);
    visit_dtype(out.dtype(), [&]<typename T>() {
      // Selects storage values directly: no rounding through float.
      const bool* c = ctx.input(0).data<bool>();
      const T* x = ctx.input(1).data<T>();
      const T* y = ctx.input(2).data<T>();
      T* o = out.data<T>();
      for_each_broadcast_row<3>(
          out.shape(), {&ctx.input(0).shape(), &ctx.input(1).shape(), &ctx.input(2).shape()},
          [&](int64_t base, const std::array<int64_t, 3>& off, const std::array<int64_t, 3>& st,
              int64_t n) {
            for (int64_t k = 0; k < n; ++k) {
              o[base + k] = c[off[0] + k * st[0]] ? x[off[1] + k * st[1]] : y[off[2] + k * st[2]];
            }
          });
    });
    return std::vector<Tensor>{out};
  };
  return schema;
}

// Clip(input, min?, max?): min and max are scalars of the input's dtype. When
// min > max every element becomes max (min is applied first, as in ONNX).
// NaN passes through.
OpSchema clip_schema() {
  OpSchema schema;
  schema.op = "Clip";
  schema.min_inputs = 1;
  schema.max_inputs = 3;
  schema.infer = [](const InferContext& ctx) {
    const TensorType& x = ctx.input(0);
    require_dtype(x.dtype, TypeClass::Numeric, 0, "input");
    for (size_t i = 1; i < 3; ++i) {
      if (!ctx.has_input(i)) continue;
      require_same_dtype(ctx, 0, i);
      if (ctx.input(i).numel() != 1) {
        ORCHID_FAIL() << "input " << i << " (" << (i == 1 ? "min" : "max")
                      << ") must be a scalar, got shape " << shape_to_string(ctx.input(i).shape);
      }
    }
    return std::vector<TensorType>{x};
  };
  schema.eval = [](const EvalContext& ctx) {
    const Tensor& x = ctx.input(0);
    Tensor out(x.type());
    visit_dtype(x.dtype(), [&]<typename T>() {
      if constexpr (kIsNumeric<T>) {
        using C = Compute<T>;
        C lo = std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                    : std::numeric_limits<C>::lowest();
        C hi = std::numeric_limits<C>::has_infinity ? std::numeric_limits<C>::infinity()
                                                    : std::numeric_limits<C>::max();
        if (ctx.has_input(1)) lo = C(ctx.input(1).data<T>()[0]);
        if (ctx.has_input(2)) hi = C(ctx.input(2).data<T>()[0]);
        unary_map<T, T>(x, out, [lo, hi](C v) {
          v = v < lo ? lo : v;
          return v > hi ? hi : v;
        });
      }
    });
    return std::vector<Tensor>{out};
  };
  return schema;
}

// ---- Cast, CastLike ----------------------------------------------------------

// `to` is an ONNX TensorProto.DataType code. `saturate` (opset 19) only
// affects float8 targets, which Orchid does not support, so it is ignored.
DType cast_target(const Attributes& attrs) {
  int64_t code = attrs.require_int("to");
  DType dtype;
  if (!dtype_from_onnx(int(code), &dtype)) {
    ORCHID_FAIL() << "Cast to " << onnx_dtype_name(int(code)) << " is not supported";
  }
  return dtype;
}

void register_cast(OpRegistry& r) {
  OpSchema cast;
  cast.op = "Cast";
  cast.min_inputs = 1;
  cast.max_inputs = 1;
  cast.infer = [](const InferContext& ctx) { return one(cast_target(ctx.attrs()), ctx.input(0).shape); };
  cast.eval = [](const EvalContext& ctx) {
    return std::vector<Tensor>{ctx.input(0).cast(ctx.output_types[0].dtype)};
  };
  r.add(std::move(cast));

  OpSchema cast_like;
  cast_like.op = "CastLike";
  cast_like.min_inputs = 2;
  cast_like.max_inputs = 2;
  cast_like.infer = [](const InferContext& ctx) {
    return one(ctx.input(1).dtype, ctx.input(0).shape);
  };
  cast_like.eval = [](const EvalContext& ctx) {
    return std::vector<Tensor>{ctx.input(0).cast(ctx.output_types[0].dtype)};
  };
  r.add(std::move(cast_like));
}

}  // namespace

void register_elementwise_ops(OpRegistry& registry) {
  register_unary(registry);
  register_arithmetic(registry);
  registry.add(pow_schema());
  register_variadic(registry);
  registry.add(where_schema());
  registry.add(clip_schema());
  register_cast(registry);
}

}  // namespace orchid::reference
