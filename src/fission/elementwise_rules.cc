// Fission rules for elementwise operators that are not primitives: Clip,
// the variadic Sum/Mean/Max/Min, activations and Shrink. Each becomes a chain
// of elementwise primitives with the reference's formula (activation.cc,
// elementwise.cc); selections use Where so that the unselected branch may be
// inf or NaN without harm, and nothing exponentiates a large positive value
// whose result is kept.
#include <cmath>

#include "fission/rules.h"

namespace orchid::fission {

namespace {

using Outputs = std::vector<ValueId>;

bool has_input(const Node& node, size_t i) { return i < node.inputs.size() && node.inputs[i] != kNoValue; }

// A constant of x's dtype.
ValueId like(FissionBuilder& b, ValueId x, double value) { return b.scalar(value, b.dtype(x)); }

ValueId where(FissionBuilder& b, ValueId condition, ValueId yes, ValueId no) {
  return b.add1("Where", {condition, yes, no});
}

// max(x, 0) + log(1 + exp(-|x|)): exp never sees a positive argument, so it
// cannot overflow; for very negative x the result underflows to 0 where the
// exact value is below float epsilon (an absolute error under 1e-7).
ValueId softplus(FissionBuilder& b, ValueId x) {
  ValueId decay = b.unary("Exp", b.unary("Neg", b.unary("Abs", x)));
  ValueId log_term = b.unary("Log", b.binary("Add", decay, like(b, x, 1)));
  return b.binary("Add", b.binary("Max", x, like(b, x, 0)), log_term);
}

// min(max(alpha * x + beta, 0), 1).
ValueId hard_sigmoid(FissionBuilder& b, ValueId x, double alpha, double beta) {
  ValueId y = b.binary("Add", b.binary("Mul", x, like(b, x, alpha)), like(b, x, beta));
  return b.binary("Min", b.binary("Max", y, like(b, x, 0)), like(b, x, 1));
}

// ---------------------------------------------------------------- Clip, variadic

// Max with the lower bound, then Min with the upper one (so min > max gives
// max everywhere, as ONNX says); NaN passes both. Omitted bounds are skipped.
Outputs clip_rule(const Node& node, FissionBuilder& b) {
  ValueId y = node.inputs[0];
  if (has_input(node, 1)) y = b.binary("Max", y, b.reshape(node.inputs[1], {}));
  if (has_input(node, 2)) y = b.binary("Min", y, b.reshape(node.inputs[2], {}));
  return {y};
}

// Folds the inputs left to right with a binary primitive (broadcasting as the
// variadic operator does); Mean divides the sum by the input count.
FissionRule variadic_rule(const std::string& binary_op, bool mean) {
  return [binary_op, mean](const Node& node, FissionBuilder& b) -> Outputs {
    ValueId acc = node.inputs[0];
    for (size_t i = 1; i < node.inputs.size(); ++i) acc = b.binary(binary_op, acc, node.inputs[i]);
    if (mean && node.inputs.size() > 1) acc = b.binary("Div", acc, like(b, acc, double(node.inputs.size())));
    return {acc};
  };
}

// ---------------------------------------------------------------- ReLU family

Outputs leaky_relu_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  double alpha = node.attrs.get_float("alpha", 0.01);
  return {where(b, b.binary("Less", x, like(b, x, 0)), b.binary("Mul", x, like(b, x, alpha)), x)};
}

Outputs prelu_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  return {where(b, b.binary("Less", x, like(b, x, 0)), b.binary("Mul", x, node.inputs[1]), x)};
}

Outputs thresholded_relu_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  double alpha = node.attrs.get_float("alpha", 1.0);
  return {where(b, b.binary("Greater", x, like(b, x, alpha)), x, like(b, x, 0))};
}

// x < 0: alpha * (exp(x) - 1); else x.
Outputs elu_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  double alpha = node.attrs.get_float("alpha", 1.0);
  ValueId negative = b.binary("Mul", b.binary("Sub", b.unary("Exp", x), like(b, x, 1)), like(b, x, alpha));
  return {where(b, b.binary("Less", x, like(b, x, 0)), negative, x)};
}

// x > 0: gamma * x; else gamma * (alpha * exp(x) - alpha).
Outputs selu_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  double alpha = node.attrs.get_float("alpha", 1.67326319217681884765625);
  double gamma = node.attrs.get_float("gamma", 1.05070102214813232421875);
  ValueId scaled_exp = b.binary("Mul", b.unary("Exp", x), like(b, x, alpha));
  ValueId negative = b.binary("Mul", b.binary("Sub", scaled_exp, like(b, x, alpha)), like(b, x, gamma));
  ValueId positive = b.binary("Mul", x, like(b, x, gamma));
  return {where(b, b.binary("Greater", x, like(b, x, 0)), positive, negative)};
}

// max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); an overflowing exp
// gives +inf, which the Min discards.
Outputs celu_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  double alpha = node.attrs.get_float("alpha", 1.0);
  ValueId e = b.unary("Exp", b.binary("Div", x, like(b, x, alpha)));
  ValueId negative = b.binary("Mul", b.binary("Sub", e, like(b, x, 1)), like(b, x, alpha));
  return {b.binary("Add", b.binary("Max", x, like(b, x, 0)), b.binary("Min", negative, like(b, x, 0)))};
}

// ---------------------------------------------------------------- smooth activations

Outputs hard_sigmoid_rule(const Node& node, FissionBuilder& b) {
  return {hard_sigmoid(b, node.inputs[0], node.attrs.get_float("alpha", 0.2), node.attrs.get_float("beta", 0.5))};
}

// x * HardSigmoid(x) with alpha = 1/6, beta = 1/2; x / 6 as the reference
// computes it.
Outputs hard_swish_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  ValueId gate = b.binary("Add", b.binary("Div", x, like(b, x, 6)), like(b, x, 0.5));
  gate = b.binary("Min", b.binary("Max", gate, like(b, x, 0)), like(b, x, 1));
  return {b.binary("Mul", x, gate)};
}

Outputs softplus_rule(const Node& node, FissionBuilder& b) { return {softplus(b, node.inputs[0])}; }

Outputs softsign_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  return {b.binary("Div", x, b.binary("Add", b.unary("Abs", x), like(b, x, 1)))};
}

Outputs mish_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  return {b.binary("Mul", x, b.unary("Tanh", softplus(b, x)))};
}

// none: 0.5 x (1 + erf(x / sqrt 2)); tanh: 0.5 x (1 + tanh(sqrt(2 / pi) (x +
// 0.044715 x^3))).
Outputs gelu_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  ValueId inner;
  if (node.attrs.get_string("approximate", "none") == "tanh") {
    ValueId cube = b.binary("Mul", b.binary("Mul", x, x), x);
    ValueId sum = b.binary("Add", x, b.binary("Mul", cube, like(b, x, 0.044715)));
    inner = b.unary("Tanh", b.binary("Mul", sum, like(b, x, 0.7978845608028654)));
  } else {
    inner = b.unary("Erf", b.binary("Mul", x, like(b, x, 0.7071067811865476)));
  }
  ValueId half_x = b.binary("Mul", x, like(b, x, 0.5));
  return {b.binary("Mul", half_x, b.binary("Add", inner, like(b, x, 1)))};
}

// x < -lambd: x + bias; x > lambd: x - bias; else 0. Integers compute in
// float64 and convert back, as the reference does (a bias or threshold of
// 0.5 must not truncate to 0 first).
Outputs shrink_rule(const Node& node, FissionBuilder& b) {
  ValueId input = node.inputs[0];
  DType dtype = b.dtype(input);
  ValueId x = is_float(dtype) ? input : b.cast(input, DType::Float64);
  double bias = node.attrs.get_float("bias", 0.0);
  double lambd = node.attrs.get_float("lambd", 0.5);
  ValueId above = where(b, b.binary("Greater", x, like(b, x, lambd)), b.binary("Sub", x, like(b, x, bias)),
                        like(b, x, 0));
  ValueId y = where(b, b.binary("Less", x, like(b, x, -lambd)), b.binary("Add", x, like(b, x, bias)), above);
  return {b.cast(y, dtype)};
}

}  // namespace

void add_elementwise_rules(FissionRuleTable& table) {
  table.add("Clip", clip_rule);
  table.add("Sum", variadic_rule("Add", false));
  table.add("Mean", variadic_rule("Add", true));
  // Max and Min with two inputs are primitives; these rules fold 1 or 3+.
  table.add("Max", variadic_rule("Max", false));
  table.add("Min", variadic_rule("Min", false));
  table.add("LeakyRelu", leaky_relu_rule);
  table.add("PRelu", prelu_rule);
  table.add("ThresholdedRelu", thresholded_relu_rule);
  table.add("Elu", elu_rule);
  table.add("Selu", selu_rule);
  table.add("Celu", celu_rule);
  table.add("HardSigmoid", hard_sigmoid_rule);
  table.add("HardSwish", hard_swish_rule);
  table.add("Softplus", softplus_rule);
  table.add("Softsign", softsign_rule);
  table.add("Mish", mish_rule);
  table.add("Gelu", gelu_rule);
  table.add("Shrink", shrink_rule);
}

}  // namespace orchid::fission
