// primitive_expr: the dispatch, shared helpers, and the elementwise and reduce
// forms. Layout forms are in primitive_expr_layout.cc, linear ones in
// primitive_expr_linear.cc.
#include "fission/primitive_expr.h"

#include <algorithm>
#include <map>
#include <set>

#include "fission/primitive.h"
#include "ir/expr_utils.h"
#include "reference/ops/op_utils.h"
#include "support/error.h"

namespace orchid::fission {

namespace primitive_expr_detail {

using expr::Expr;
using expr::IterRange;

bool ExprContext::has_input(size_t i) const { return i < node.inputs.size() && node.inputs[i] != kNoValue; }

const TensorType& ExprContext::input_type(size_t i) const {
  if (!has_input(i)) ORCHID_FAIL() << node.describe() << ": input " << i << " is missing";
  return graph.type(node.inputs[i]);
}

const Tensor* ExprContext::input_constant(size_t i) const {
  if (!has_input(i)) return nullptr;
  const Value& v = graph.value(node.inputs[i]);
  return v.is_constant() ? &*v.constant : nullptr;
}

const TensorType& ExprContext::output_type() const {
  ORCHID_CHECK(!node.outputs.empty() && node.outputs[0] != kNoValue) << node.describe() << " has no output 0";
  return graph.type(node.outputs[0]);
}

Expr ExprContext::input_tensor(size_t i, std::vector<int64_t> pads) const {
  return expr::tensor(primitive_expr_input_name(i), input_type(i).shape, std::move(pads));
}

Expr ExprContext::fail(const std::string& reason) const {
  if (why_not) *why_not = node.op + ": " + reason;
  return nullptr;
}

bool ExprContext::require_float(const std::vector<size_t>& inputs) const {
  auto bad = [&](DType dtype, const std::string& what) {
    fail(what + " is " + dtype_name(dtype) + ": the Expr IR computes in real (floating-point) arithmetic");
    return false;
  };
  for (size_t i : inputs) {
    if (has_input(i) && !is_float(input_type(i).dtype)) return bad(input_type(i).dtype, "input " + std::to_string(i));
  }
  if (!is_float(output_type().dtype)) return bad(output_type().dtype, "the output");
  return true;
}

std::vector<IterRange> loop_ranges(const Shape& shape) {
  std::vector<IterRange> loops;
  for (size_t d = 0; d < shape.size(); ++d) loops.push_back({expr::iter("i" + std::to_string(d)), 0, shape[d]});
  return loops;
}

std::vector<Expr> range_iters(const std::vector<IterRange>& ranges) {
  std::vector<Expr> iters;
  for (const IterRange& r : ranges) iters.push_back(r.iter);
  return iters;
}

IterRange sum_range(size_t index, int64_t extent) { return {expr::iter("r" + std::to_string(index)), 0, extent}; }

Expr broadcast_access(Expr source, const Shape& out_shape, const std::vector<Expr>& out_index) {
  const Shape& shape = source->as<expr::TensorNode>().shape();
  ORCHID_CHECK(shape.size() <= out_shape.size()) << "broadcast to a lower rank";
  const size_t lead = out_shape.size() - shape.size();
  std::vector<Expr> index;
  for (size_t d = 0; d < shape.size(); ++d) {
    const bool broadcast = shape[d] == 1 && out_shape[lead + d] != 1;
    index.push_back(broadcast ? expr::integer(0) : out_index[lead + d]);
  }
  return expr::access(source, index);
}

namespace {

// ---- Elementwise ------------------------------------------------------------

// Unary operators as a function of the operand: the Expr function the
// operator is (ir/op_traits.h), or a composition of them.
Expr apply_unary(const std::string& op, Expr x) {
  if (std::optional<expr::Func> f = op_traits(op)->func) return expr::call(*f, x);
  using expr::Func;
  if (op == "Reciprocal") return expr::div(expr::constant(1.0), x);
  const Expr e = expr::call(Func::Exp, x), e_neg = expr::call(Func::Exp, expr::neg(x));
  ORCHID_CHECK(op == "Sinh" || op == "Cosh") << "no Expr form for " << op;
  return expr::mul(op == "Sinh" ? expr::sub(e, e_neg) : expr::add(e, e_neg), expr::constant(0.5));
}

Expr unary_form(const ExprContext& ctx) {
  if (!ctx.require_float({0})) return nullptr;
  Expr x = ctx.input_tensor(0);
  return elementwise_scope(ctx.output_type().shape, [&](const std::vector<Expr>& i) {
    return apply_unary(ctx.node.op, expr::access(x, i));
  });
}

// Cast between equal dtypes is the identity; any other cast changes values
// (rounding, truncation) in a way real arithmetic does not express.
Expr cast_form(const ExprContext& ctx) {
  if (ctx.input_type(0).dtype != ctx.output_type().dtype) {
    return ctx.fail(std::string("a cast from ") + dtype_name(ctx.input_type(0).dtype) + " to " +
                    dtype_name(ctx.output_type().dtype) + " rounds, which the Expr IR does not express");
  }
  Expr x = ctx.input_tensor(0);
  return elementwise_scope(ctx.output_type().shape, [&](const std::vector<Expr>& i) { return expr::access(x, i); });
}

Expr binary_op(const std::string& op, Expr a, Expr b) {
  if (op == "Add") return expr::add(a, b);
  if (op == "Sub") return expr::sub(a, b);
  if (op == "Mul") return expr::mul(a, b);
  if (op == "Div") return expr::div(a, b);
  if (op == "Max") return expr::add(b, expr::call(expr::Func::Relu, expr::sub(a, b)));
  ORCHID_CHECK(op == "Min") << "not a binary form: " << op;
  return expr::sub(a, expr::call(expr::Func::Relu, expr::sub(a, b)));
}

Expr binary_form(const ExprContext& ctx) {
  if (!ctx.require_float({0, 1})) return nullptr;
  if (ctx.node.inputs.size() != 2) return ctx.fail("expected 2 inputs");
  const Shape& out = ctx.output_type().shape;
  Expr a = ctx.input_tensor(0), b = ctx.input_tensor(1);
  return elementwise_scope(out, [&](const std::vector<Expr>& i) {
    return binary_op(ctx.node.op, broadcast_access(a, out, i), broadcast_access(b, out, i));
  });
}

// x^e for one constant exponent e shared by every element, as products,
// sqrt and reciprocals; nullptr for other exponents (so power_of on a
// constant tells whether e is supported).
Expr power_of(Expr x, double e) {
  using expr::Func;
  if (e == 0) return expr::constant(1.0);
  if (e == 0.5) return expr::call(Func::Sqrt, x);
  if (e == -0.5) return expr::div(expr::constant(1.0), expr::call(Func::Sqrt, x));
  if (e == 1) return x;
  if (e == 2) return expr::mul(x, x);
  if (e == 3) return expr::mul(expr::mul(x, x), x);
  if (e == -1) return expr::div(expr::constant(1.0), x);
  if (e == -2) return expr::div(expr::constant(1.0), expr::mul(x, x));
  return nullptr;
}

Expr pow_form(const ExprContext& ctx) {
  if (!ctx.require_float({0, 1})) return nullptr;
  const char* general = "the Func set has no pow (exp(y * log(x)) is wrong for x <= 0)";
  const Tensor* exponent = ctx.input_constant(1);
  if (!exponent || exponent->numel() == 0) return ctx.fail(std::string("runtime exponent: ") + general);
  std::vector<double> values = exponent->to_f64_vector();
  if (std::any_of(values.begin(), values.end(), [&](double v) { return v != values[0]; })) {
    return ctx.fail(std::string("the constant exponent is not uniform: ") + general);
  }
  Expr x = ctx.input_tensor(0);
  const Shape& out = ctx.output_type().shape;
  if (!power_of(expr::constant(2.0), values[0])) {
    return ctx.fail("exponent " + std::to_string(values[0]) + " is not one of 0, +-0.5, 1, 2, 3, -1, -2: " + general);
  }
  return elementwise_scope(out, [&](const std::vector<Expr>& i) {
    return power_of(broadcast_access(x, out, i), values[0]);
  });
}

// ---- Reduce -----------------------------------------------------------------

// The reduced axes of a ReduceX node: input 1, all axes when it is absent or
// empty (noop_with_empty_axes = 0), none when noop_with_empty_axes is set.
std::vector<int64_t> reduce_axes(const ExprContext& ctx, int64_t rank) {
  std::vector<int64_t> axes;
  if (ctx.has_input(1)) {
    const Tensor* t = ctx.input_constant(1);
    if (!t) ORCHID_FAIL() << ctx.node.describe() << ": axes must be a constant";
    axes = reference::normalize_axes(t->to_i64_vector(), rank);
  }
  if (axes.empty() && ctx.node.attrs.get_int("noop_with_empty_axes", 0) == 0) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  return axes;
}

Expr reduce_sum_form(const ExprContext& ctx) {
  if (!ctx.require_float({0})) return nullptr;
  Expr x = ctx.input_tensor(0);
  const Shape& in = ctx.input_type(0).shape;
  const std::set<int64_t> axes = [&] {
    std::vector<int64_t> v = reduce_axes(ctx, int64_t(in.size()));
    return std::set<int64_t>(v.begin(), v.end());
  }();
  const bool keepdims = ctx.node.attrs.get_int("keepdims", 1) != 0;
  std::vector<IterRange> loops, sums;
  std::vector<Expr> index;
  for (size_t d = 0; d < in.size(); ++d) {
    if (axes.contains(int64_t(d))) {
      sums.push_back(sum_range(sums.size(), in[d]));
      index.push_back(sums.back().iter);
      if (keepdims) loops.push_back({expr::iter("i" + std::to_string(loops.size())), 0, 1});
    } else {
      loops.push_back({expr::iter("i" + std::to_string(loops.size())), 0, in[d]});
      index.push_back(loops.back().iter);
    }
  }
  return expr::scope(loops, sums, expr::access(x, index));
}

Expr reduce_unsupported(const ExprContext& ctx) {
  return ctx.fail("the Expr IR has only summation (Sum<>); it has no max, min or product reduction");
}

Expr arg_reduce_unsupported(const ExprContext& ctx) {
  return ctx.fail("an index of an extreme element is data dependent; the Expr IR has no comparison");
}

// y[.., i, ..] = Sum<r:0:n> x[.., i - r, ..]: reads before the start are 0,
// so the sum covers exactly x[0..i]. exclusive shifts by one, reverse flips
// the direction.
Expr cumsum_form(const ExprContext& ctx) {
  if (!ctx.require_float({0})) return nullptr;
  const Tensor* axis_value = ctx.input_constant(1);
  if (!axis_value || axis_value->numel() != 1) ORCHID_FAIL() << ctx.node.describe() << ": axis must be a constant scalar";
  const Shape& shape = ctx.input_type(0).shape;
  const size_t axis = size_t(reference::normalize_axis(axis_value->at_i64(0), int64_t(shape.size())));
  const bool exclusive = ctx.node.attrs.get_int("exclusive", 0) != 0;
  const bool reverse = ctx.node.attrs.get_int("reverse", 0) != 0;
  std::vector<IterRange> loops = loop_ranges(shape);
  IterRange r = sum_range(0, shape[axis]);
  std::vector<Expr> index = range_iters(loops);
  Expr offset = exclusive ? expr::add(r.iter, expr::integer(1)) : r.iter;
  index[axis] = reverse ? expr::add(index[axis], offset) : expr::sub(index[axis], offset);
  return expr::scope(loops, {r}, expr::access(ctx.input_tensor(0), index));
}

// ---- Dispatch -----------------------------------------------------------------

Expr no_select(const ExprContext& ctx) {
  return ctx.fail("the Expr IR has no comparison or select, so conditions cannot be expressed");
}

const std::map<std::string, FormBuilder>& form_table() {
  static const std::map<std::string, FormBuilder> table = [] {
    std::map<std::string, FormBuilder> t;
    for (const OpTraits& op : all_op_traits()) {
      const std::string name(op.op);
      if (op.func) t[name] = unary_form;
      if (op.element == ElementClass::Arithmetic && op.arity == 2) t[name] = binary_form;
      const ElementClass e = op.element;
      if (e == ElementClass::Compare || e == ElementClass::Logic || e == ElementClass::Select ||
          e == ElementClass::Predicate) {
        t[name] = no_select;
      }
    }
    for (const char* op : {"Reciprocal", "Sinh", "Cosh"}) t[op] = unary_form;
    t["Sign"] = no_select;
    t["Cast"] = cast_form;
    t["Pow"] = pow_form;
    t["ReduceSum"] = reduce_sum_form;
    for (const char* op : {"ReduceMax", "ReduceMin", "ReduceProd"}) t[op] = reduce_unsupported;
    for (const char* op : {"ArgMax", "ArgMin"}) t[op] = arg_reduce_unsupported;
    t["CumSum"] = cumsum_form;
    for (const auto& [op, form] : layout_forms()) t[op] = form;
    for (const auto& [op, form] : linear_forms()) t[op] = form;
    return t;
  }();
  return table;
}

}  // namespace
}  // namespace primitive_expr_detail

std::string primitive_expr_input_name(size_t input_index) { return "in" + std::to_string(input_index); }

std::optional<expr::Expr> primitive_expr(const Node& node, const Graph& graph, std::string* why_not) {
  using namespace primitive_expr_detail;
  const ExprContext ctx{node, graph, why_not};
  std::optional<PrimitiveKind> kind = primitive_kind(node, graph);
  if (!kind) {
    ctx.fail("not a primitive (fission rewrites it first)");
    return std::nullopt;
  }
  if (*kind == PrimitiveKind::Opaque) {
    ctx.fail("an opaque primitive (data-dependent output or control) has no expression form");
    return std::nullopt;
  }
  auto it = form_table().find(node.op);
  if (it == form_table().end()) {
    ctx.fail("no function of the Expr IR's Func set computes it");
    return std::nullopt;
  }
  Expr e = it->second(ctx);
  if (!e) return std::nullopt;
  return e;
}

std::vector<std::pair<std::string, ValueId>> primitive_expr_bindings(const Node& node, expr::Expr e) {
  std::vector<std::pair<std::string, ValueId>> bindings;
  for (expr::Expr t : expr::free_tensors(e)) {
    const std::string& name = t->as<expr::TensorNode>().name();
    ORCHID_CHECK(name.size() > 2 && name.starts_with("in")) << "unexpected tensor '" << name << "'";
    const size_t index = std::stoul(name.substr(2));
    ORCHID_CHECK(index < node.inputs.size() && node.inputs[index] != kNoValue) << "no input " << index;
    if (std::none_of(bindings.begin(), bindings.end(), [&](const auto& b) { return b.first == name; })) {
      bindings.emplace_back(name, node.inputs[index]);
    }
  }
  return bindings;
}

}  // namespace orchid::fission
