#include "ir/op_traits.h"

#include <map>

#include "support/error.h"

namespace orchid {

namespace {

using K = PrimitiveKind;
using E = ElementClass;
using F = expr::Func;

constexpr size_t kShapeInput[] = {1};               // Reshape's shape, Expand's shape, a reduction's axes
constexpr size_t kSliceInputs[] = {1, 2, 3, 4};     // starts, ends, axes, steps
constexpr size_t kPadInputs[] = {1, 2, 3};          // pads, value, axes
constexpr std::span<const size_t> kNone;

constexpr OpTraits unary(std::string_view op, E element, bool transcendental = false,
                         std::optional<F> func = std::nullopt) {
  return {op, K::Elementwise, 1, element, transcendental, func, kNone};
}
constexpr OpTraits binary(std::string_view op, E element, bool transcendental = false) {
  return {op, K::Elementwise, 2, element, transcendental, std::nullopt, kNone};
}
constexpr OpTraits other(std::string_view op, K kind, std::span<const size_t> constant_inputs = kNone) {
  return {op, kind, 0, E::None, false, std::nullopt, constant_inputs};
}

const OpTraits kTable[] = {
    // Elementwise, one operand.
    unary("Abs", E::Arithmetic, false, F::Abs),
    unary("Neg", E::Arithmetic, false, F::Neg),
    unary("Floor", E::Arithmetic),
    unary("Ceil", E::Arithmetic),
    unary("Round", E::Arithmetic),
    unary("Sqrt", E::Arithmetic, false, F::Sqrt),
    unary("Reciprocal", E::Arithmetic),
    unary("Exp", E::Arithmetic, true, F::Exp),
    unary("Log", E::Arithmetic, true, F::Log),
    unary("Sin", E::Arithmetic, true),
    unary("Cos", E::Arithmetic, true),
    unary("Tan", E::Arithmetic, true),
    unary("Asin", E::Arithmetic, true),
    unary("Acos", E::Arithmetic, true),
    unary("Atan", E::Arithmetic, true),
    unary("Sinh", E::Arithmetic, true),
    unary("Cosh", E::Arithmetic, true),
    unary("Asinh", E::Arithmetic, true),
    unary("Acosh", E::Arithmetic, true),
    unary("Atanh", E::Arithmetic, true),
    unary("Erf", E::Arithmetic, true, F::Erf),
    unary("Sign", E::Arithmetic),
    unary("Tanh", E::Arithmetic, true, F::Tanh),
    unary("Sigmoid", E::Arithmetic, true, F::Sigmoid),
    unary("Relu", E::Arithmetic, false, F::Relu),
    unary("Not", E::Logic),
    unary("IsNaN", E::Predicate),
    unary("IsInf", E::Predicate),
    unary("BitwiseNot", E::Bitwise),
    unary("Cast", E::Convert),
    // Elementwise, two operands (broadcasting).
    binary("Add", E::Arithmetic),
    binary("Sub", E::Arithmetic),
    binary("Mul", E::Arithmetic),
    binary("Div", E::Arithmetic),
    binary("Pow", E::Arithmetic, true),
    binary("Max", E::Arithmetic),
    binary("Min", E::Arithmetic),
    binary("Mod", E::Remainder),
    binary("And", E::Logic),
    binary("Or", E::Logic),
    binary("Xor", E::Logic),
    binary("Equal", E::Compare),
    binary("Less", E::Compare),
    binary("LessOrEqual", E::Compare),
    binary("Greater", E::Compare),
    binary("GreaterOrEqual", E::Compare),
    binary("BitShift", E::Bitwise),
    binary("BitwiseAnd", E::Bitwise),
    binary("BitwiseOr", E::Bitwise),
    binary("BitwiseXor", E::Bitwise),
    {"Where", K::Elementwise, 3, E::Select, false, std::nullopt, kNone},
    // Reductions and scans.
    other("ReduceSum", K::Reduce, kShapeInput),
    other("ReduceMax", K::Reduce, kShapeInput),
    other("ReduceMin", K::Reduce, kShapeInput),
    other("ReduceProd", K::Reduce, kShapeInput),
    other("ArgMax", K::Reduce),
    other("ArgMin", K::Reduce),
    other("CumSum", K::Reduce, kShapeInput),
    // Data movement.
    other("Transpose", K::Layout),
    other("Reshape", K::Layout, kShapeInput),
    other("Slice", K::Layout, kSliceInputs),
    other("Concat", K::Layout),
    other("Pad", K::Layout, kPadInputs),
    other("Expand", K::Layout, kShapeInput),
    other("Gather", K::Layout),
    // Linear.
    other("MatMul", K::Linear),
    other("Conv", K::Linear),
    other("ConvTranspose", K::Linear),
    // Opaque: data-dependent sizes or control, or no exact cheap primitive chain.
    other("NonMaxSuppression", K::Opaque),
    other("TopK", K::Opaque),
    other("NonZero", K::Opaque),
    other("Unique", K::Opaque),
    other("Compress", K::Opaque),
    other("RoiAlign", K::Opaque),
    other("GridSample", K::Opaque),
    other("ScatterElements", K::Opaque),
    other("ScatterND", K::Opaque),
    other("Scatter", K::Opaque),
    other("GatherElements", K::Opaque),
    other("GatherND", K::Opaque),
    other("Det", K::Opaque),
    other("MaxUnpool", K::Opaque),
    other("QuantizeLinear", K::Opaque),
    other("DequantizeLinear", K::Opaque),
    other("DynamicQuantizeLinear", K::Opaque),
    other("QLinearMatMul", K::Opaque),
    other("QLinearConv", K::Opaque),
    other("MatMulInteger", K::Opaque),
    other("ConvInteger", K::Opaque),
    other("MaxRoiPool", K::Opaque),
    other("ReverseSequence", K::Opaque),
};

const std::map<std::string_view, const OpTraits*>& index() {
  static const std::map<std::string_view, const OpTraits*> by_op = [] {
    std::map<std::string_view, const OpTraits*> m;
    for (const OpTraits& t : kTable) m[t.op] = &t;
    return m;
  }();
  return by_op;
}

}  // namespace

const OpTraits* op_traits(std::string_view op) {
  auto it = index().find(op);
  return it == index().end() ? nullptr : it->second;
}

std::string_view op_of_func(expr::Func func) {
  for (const OpTraits& t : kTable) {
    if (t.func == func) return t.op;
  }
  ORCHID_CHECK(false) << "no primitive computes the Expr function " << expr::func_info(func).name;
  return {};
}

std::span<const OpTraits> all_op_traits() { return kTable; }

}  // namespace orchid
