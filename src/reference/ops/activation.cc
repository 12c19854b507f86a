// Activation functions. All are elementwise; PRelu broadcasts its slope to X
// (unidirectionally). Float inputs compute in float (double for float64);
// float16/bfloat16 go through float and round back once per element.
#include <cmath>

#include "reference/ops/elementwise_utils.h"
#include "reference/ops/op_utils.h"
#include "reference/ops/ops.h"
#include "support/error.h"

namespace orchid::reference {
namespace {

// log(1 + exp(x)) without overflow for large x.
template <typename C>
C softplus(C x) {
  return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// 1 / (1 + exp(-x)) without overflow for very negative x.
template <typename C>
C sigmoid(C x) {
  if (x >= C(0)) return C(1) / (C(1) + std::exp(-x));
  C e = std::exp(x);
  return e / (C(1) + e);
}

void register_parameterless(OpRegistry& r) {
  auto add = [&r](const char* op, auto fn) { r.add(float_unary_schema_fn(op, fn)); };
  add("Sigmoid", [](auto x) { return sigmoid(x); });
  add("Tanh", [](auto x) { return std::tanh(x); });
  add("Softplus", [](auto x) { return softplus(x); });
  add("Softsign", [](auto x) { return x / (decltype(x)(1) + std::abs(x)); });
  add("Mish", [](auto x) { return x * std::tanh(softplus(x)); });
  // HardSwish(x) = x * HardSigmoid(x) with alpha = 1/6, beta = 0.5.
  add("HardSwish", [](auto x) {
    using C = decltype(x);
    C gate = x / C(6) + C(0.5);
    gate = gate < C(0) ? C(0) : (gate > C(1) ? C(1) : gate);
    return x * gate;
  });
}

void register_parameterized(OpRegistry& r) {
  r.add(float_unary_schema("LeakyRelu", [](const Attributes& attrs) {
    double alpha = attrs.get_float("alpha", 0.01);
    return [alpha](auto x) {
      using C = decltype(x);
      return x < C(0) ? C(alpha) * x : x;
    };
  }));
  r.add(float_unary_schema("Elu", [](const Attributes& attrs) {
    double alpha = attrs.get_float("alpha", 1.0);
    return [alpha](auto x) {
      using C = decltype(x);
      return x < C(0) ? C(alpha) * (std::exp(x) - C(1)) : x;
    };
  }));
  r.add(float_unary_schema("Selu", [](const Attributes& attrs) {
    double alpha = attrs.get_float("alpha", 1.67326319217681884765625);
    double gamma = attrs.get_float("gamma", 1.05070102214813232421875);
    return [alpha, gamma](auto x) {
      using C = decltype(x);
      return x > C(0) ? C(gamma) * x : C(gamma) * (C(alpha) * std::exp(x) - C(alpha));
    };
  }));
  // Celu(x) = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
  r.add(float_unary_schema("Celu", [](const Attributes& attrs) {
    double alpha = attrs.get_float("alpha", 1.0);
    if (alpha == 0) ORCHID_FAIL() << "attribute 'alpha' must not be 0";
    return [alpha](auto x) {
      using C = decltype(x);
      C negative = C(alpha) * (std::exp(x / C(alpha)) - C(1));
      return (x > C(0) ? x : C(0)) + (negative < C(0) ? negative : C(0));
    };
  }));
  r.add(float_unary_schema("ThresholdedRelu", [](const Attributes& attrs) {
    double alpha = attrs.get_float("alpha", 1.0);
    return [alpha](auto x) {
      using C = decltype(x);
      return x > C(alpha) ? x : C(0);
    };
  }));
  r.add(float_unary_schema("HardSigmoid", [](const Attributes& attrs) {
    double alpha = attrs.get_float("alpha", 0.2);
    double beta = attrs.get_float("beta", 0.5);
    return [alpha, beta](auto x) {
      using C = decltype(x);
      C y = C(alpha) * x + C(beta);
      return y < C(0) ? C(0) : (y > C(1) ? C(1) : y);
    };
  }));
  // Gelu (opset 20): approximate = "none" uses erf, "tanh" the tanh formula.
  r.add(float_unary_schema("Gelu", [](const Attributes& attrs) {
    std::string approximate = attrs.get_string("approximate", "none");
    if (approximate != "none" && approximate != "tanh") {
      ORCHID_FAIL() << "attribute 'approximate' must be \"none\" or \"tanh\", got \"" << approximate << "\"";
    }
    bool use_tanh = approximate == "tanh";
    return [use_tanh](auto x) {
      using C = decltype(x);
      if (use_tanh) {
        C inner = C(0.7978845608028654) * (x + C(0.044715) * x * x * x);  // sqrt(2/pi)
        return C(0.5) * x * (C(1) + std::tanh(inner));
      }
      return C(0.5) * x * (C(1) + std::erf(x * C(0.7071067811865476)));  // 1/sqrt(2)
    };
  }));
}

// Relu accepts floats and signed integers (opset 14). NaN passes through.
OpSchema relu_schema() {
  OpSchema schema;
  schema.op = "Relu";
  schema.min_inputs = 1;
  schema.max_inputs = 1;
  schema.infer = [](const InferContext& ctx) {
    require_dtype(ctx.input(0).dtype, TypeClass::Signed, 0, "X");
    return std::vector<TensorType>{ctx.input(0)};
  };
  schema.eval = [](const EvalContext& ctx) {
    const Tensor& x = ctx.input(0);
    Tensor out(x.type());
    visit_dtype(x.dtype(), [&]<typename T>() {
      if constexpr (type_in_class<T>(TypeClass::Signed)) {
        unary_map<T, T>(x, out, [](auto v) { return v < decltype(v)(0) ? decltype(v)(0) : v; });
      }
    });
    return std::vector<Tensor>{out};
  };
  return schema;
}

// Shrink: x < -lambd -> x + bias; x > lambd -> x - bias; else 0. Any numeric
// type; computed in double and converted back.
OpSchema shrink_schema() {
  OpSchema schema;
  schema.op = "Shrink";
  schema.min_inputs = 1;
  schema.max_inputs = 1;
  schema.infer = [](const InferContext& ctx) {
    require_dtype(ctx.input(0).dtype, TypeClass::Numeric, 0, "input");
    return std::vector<TensorType>{ctx.input(0)};
  };
  schema.eval = [](const EvalContext& ctx) {
    const Tensor& x = ctx.input(0);
    double bias = ctx.attrs().get_float("bias", 0.0);
    double lambd = ctx.attrs().get_float("lambd", 0.5);
    Tensor out(x.type());
    visit_dtype(x.dtype(), [&]<typename T>() {
      if constexpr (kIsNumeric<T>) {
        unary_map<T, T>(x, out, [bias, lambd](auto v) {
          double d = double(v);
          double y = d < -lambd ? d + bias : (d > lambd ? d - bias : 0.0);
          if constexpr (kIsInteger<T>) {
            return saturating_from_double<T>(y);
          } else {
            return Compute<T>(y);
          }
        });
      }
    });
    return std::vector<Tensor>{out};
  };
  return schema;
}

// PRelu(X, slope): slope broadcasts to X's shape (unidirectional), the output
// has X's type and shape. Floats and integers (opset 16).
OpSchema prelu_schema() {
  OpSchema schema;
  schema.op = "PRelu";
  schema.min_inputs = 2;
  schema.max_inputs = 2;
  schema.infer = [](const InferContext& ctx) {
    const TensorType& x = ctx.input(0);
    require_dtype(x.dtype, TypeClass::Numeric, 0, "X");
    require_same_dtype(ctx, 0, 1);
    const Shape& slope = ctx.input(1).shape;
    if (slope.size() > x.shape.size() || broadcast_shapes(x.shape, slope) != x.shape) {
      ORCHID_FAIL() << "slope of shape " << shape_to_string(slope)
                    << " does not broadcast to X's shape " << shape_to_string(x.shape);
    }
    return std::vector<TensorType>{x};
  };
  schema.eval = [](const EvalContext& ctx) {
    const Tensor& x = ctx.input(0);
    Tensor out(x.type());
    visit_dtype(x.dtype(), [&]<typename T>() {
      if constexpr (kIsNumeric<T>) {
        binary_map<T, T, T>(x, ctx.input(1), out, [](auto v, auto slope) {
          using C = decltype(v);
          if constexpr (kIsInteger<C>) {
            return v < C(0) ? wrapping_mul(v, slope) : v;
          } else {
            return v < C(0) ? slope * v : v;
          }
        });
      }
    });
    return std::vector<Tensor>{out};
  };
  return schema;
}

}  // namespace

void register_activation_ops(OpRegistry& registry) {
  registry.add(relu_schema());
  register_parameterless(registry);
  register_parameterized(registry);
  registry.add(shrink_schema());
  registry.add(prelu_schema());
}

}  // namespace orchid::reference
