// Scalar expressions of the lowering: a value at an index. Materialized
// values and group inputs are loads; every other value is inlined: an
// elementwise node applies its scalar function to its inputs at the
// (broadcast) index, a layout node maps the index to its input's index
// (lower_layout.cc).
#include <cmath>
#include <map>
#include <optional>

#include "codegen/cpu/lower_internal.h"
#include "ir/graph_utils.h"
#include "support/error.h"

namespace orchid::codegen::cpu::detail {

namespace {

using kir::Op;
using kir::Type;

// ONNX binary operators that are IR operations.
const std::map<std::string, Op>& binary_ops() {
  static const std::map<std::string, Op> table = {
      {"Add", Op::Add}, {"Sub", Op::Sub}, {"Mul", Op::Mul}, {"Div", Op::Div}, {"Max", Op::Max},
      {"Min", Op::Min}, {"Equal", Op::Eq}, {"Less", Op::Lt}, {"LessOrEqual", Op::Le}, {"Greater", Op::Gt},
      {"GreaterOrEqual", Op::Ge}, {"And", Op::And}, {"Or", Op::Or}, {"Xor", Op::Ne},
  };
  return table;
}

}  // namespace

kir::Type data_type(DType dtype) {
  switch (dtype) {
    case DType::Float32: return Type::F32;
    case DType::Bool: return Type::Bool;
    default: break;
  }
  ORCHID_CHECK(false) << "codegen: no kernel IR type for dtype " << dtype_name(dtype);
  return Type::F32;
}

std::string Lowering::fresh(const std::string& prefix) { return prefix + std::to_string(counter_++); }

Expr Lowering::let(kir::Type type, const Expr& expr) {
  if (kir::is_const(expr) || kir::is_var(expr)) return expr;
  const std::string key = std::string(kir::type_name(type)) + " " + kir::to_string(expr);
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    auto it = scope->find(key);
    if (it != scope->end()) return it->second;
  }
  const std::string local = fresh("t");
  add(kir::let_stmt(local, type, expr));
  Expr name = kir::var(local, type);
  scopes_.back()[key] = name;
  return name;
}

const Expr& Lowering::linear_of(const Shape& shape, Index& index) {
  if (index.linear) return index.linear;
  const std::vector<int64_t> strides = shape_strides(shape);
  Expr sum = kir::int_const(0);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    sum = kir::add(sum, kir::mul(index.dims[d], strides[d]));
  }
  index.linear = let(Type::I64, sum);
  return index.linear;
}

const Expr& Lowering::dim_of(const Shape& shape, Index& index, size_t d) {
  if (index.has_dims && index.dims[d]) return index.dims[d];
  if (!index.has_dims || !index.lazy_from) return dims_of(shape, index)[d];
  int64_t stride = 1;
  for (size_t k = d + 1; k < shape.size(); ++k) stride *= shape[k];
  Expr e = index.lazy_from;
  if (shape[d] == 1) {
    e = kir::int_const(0);
  } else {
    e = kir::div(e, stride);
    if (d != index.lazy_split) e = kir::mod(e, shape[d]);
    inner_divmod_ = inner_divmod_ || e != index.lazy_from;
  }
  index.dims[d] = let(Type::I64, e);
  return index.dims[d];
}

const std::vector<Expr>& Lowering::dims_of(const Shape& shape, Index& index) {
  if (index.has_dims && index.lazy_from) {
    for (size_t d = index.lazy_split; d < shape.size(); ++d) dim_of(shape, index, d);
    index.lazy_from = nullptr;
  }
  if (index.has_dims) return index.dims;
  ORCHID_CHECK(index.linear != nullptr) << "codegen: an index with neither form";
  const std::vector<int64_t> strides = shape_strides(shape);
  index.dims.clear();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) {
      index.dims.push_back(kir::int_const(0));
      continue;
    }
    Expr e = kir::div(index.linear, strides[d]);
    if (d > 0) e = kir::mod(e, shape[d]);
    index.dims.push_back(let(Type::I64, e));
  }
  index.has_dims = true;
  return index.dims;
}

Index Lowering::broadcast_index(ValueId input, const Shape& out, Index& index) {
  const Shape& in = graph_.type(input).shape;
  if (in == out) return index;
  Index result;
  result.has_dims = true;
  if (shape_numel(in) == 1) {
    result.linear = kir::int_const(0);
    result.dims.assign(in.size(), kir::int_const(0));
    return result;
  }
  // Only the dimensions the input has: a stage's merged inner index is
  // divided only if a broadcast input really varies along them.
  const size_t offset = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    result.dims.push_back(in[d] == 1 ? kir::int_const(0) : dim_of(out, index, d + offset));
  }
  return result;
}

Expr Lowering::value_at(ValueId value, Index index) {
  const Value& v = graph_.value(value);
  const Type type = data_type(v.type.dtype);
  // Scalar constants become literals: no load, no aliasing question.
  if (v.is_constant() && v.type.numel() == 1 && v.constant->defined()) {
    const double x = v.constant->at_f64(0);
    return type == Type::Bool ? kir::bool_const(x != 0) : kir::float_const(x);
  }
  if (buffer_.count(value)) return let(type, load_buffer(value, index));
  return compute(value, std::move(index));
}

Expr Lowering::load_buffer(ValueId value, Index& index) {
  stage_reads_.insert(value);
  if (row_nest_.open && row_nest_.members.count(value) && !in_row(value, index)) reads_in_row_ = false;
  const TensorType& t = graph_.type(value);
  return kir::load(buffer_.at(value), data_type(t.dtype), linear_of(t.shape, index));
}

Expr Lowering::compute(ValueId value, Index index) {
  auto producer = producer_.find(value);
  ORCHID_CHECK(producer != producer_.end()) << "codegen: value '" << graph_.value(value).name << "' has no source";
  const Node& node = graph_.nodes()[producer->second];
  const bool own_element = index.linear && stage_linear_ && kir::to_string(index.linear) == kir::to_string(stage_linear_);
  const Type type = data_type(graph_.type(value).dtype);
  if (auto chunk = chunk_buffers_.find(value); chunk != chunk_buffers_.end() && own_element) {
    return let(type, kir::load(chunk->second, type, kir::binary(Op::Sub, kir::var("i"), kir::var("ib"))));
  }
  if (is_layout(node.op)) return compute_layout(node, value, index);
  Expr result = compute_elementwise(node, value, index);
  if (is_expensive(node.op)) expensive_reads_.push_back({value, own_element});
  return result;
}

namespace {

// A one-element constant's value, when it is one.
std::optional<double> scalar_constant(const Graph& graph, ValueId id) {
  const Value& v = graph.value(id);
  if (!v.is_constant() || !v.constant->defined() || v.type.numel() != 1) return std::nullopt;
  return v.constant->at_f64(0);
}

bool is_scalar_constant(const Graph& graph, ValueId id, double value) { return scalar_constant(graph, id) == value; }

}  // namespace

const Node* Lowering::producer_in_group(ValueId value, const std::string& op) const {
  auto it = producer_.find(value);
  if (it == producer_.end() || buffer_.count(value)) return nullptr;
  const Node& node = graph_.nodes()[it->second];
  return node.op == op ? &node : nullptr;
}

// Fission's stable softplus: max(x, 0) + ln(e^-|x| + 1), every value of x's
// shape and inlined (not loaded).
std::optional<ValueId> Lowering::softplus_argument(ValueId value) const {
  const Node* add = producer_in_group(value, "Add");
  if (!add) return std::nullopt;
  for (size_t k = 0; k < 2; ++k) {
    const Node* max = producer_in_group(add->inputs[k], "Max");
    const Node* log = producer_in_group(add->inputs[1 - k], "Log");
    if (!max || !log || !is_scalar_constant(graph_, max->inputs[1], 0)) continue;
    const ValueId x = max->inputs[0];
    const Node* plus_one = producer_in_group(log->inputs[0], "Add");
    if (!plus_one || !is_scalar_constant(graph_, plus_one->inputs[1], 1)) continue;
    const Node* exp = producer_in_group(plus_one->inputs[0], "Exp");
    const Node* neg = exp ? producer_in_group(exp->inputs[0], "Neg") : nullptr;
    const Node* abs = neg ? producer_in_group(neg->inputs[0], "Abs") : nullptr;
    if (!abs || abs->inputs[0] != x || graph_.type(x).shape != graph_.type(value).shape) continue;
    return x;
  }
  return std::nullopt;
}

const Node* Lowering::graph_producer(ValueId value) const {
  if (graph_producers_.empty()) graph_producers_ = producer_nodes(graph_);  // on the first question only
  const size_t node = graph_producers_.at(size_t(value));
  return node == kNoNode ? nullptr : &graph_.nodes()[node];
}

// x - ReduceMax(x) with kept dimensions: each element less its own row's
// maximum, <= 0 exactly in float (or NaN), wherever the two are computed.
bool Lowering::is_less_row_max(ValueId value) const {
  const Node* sub = graph_producer(value);
  if (!sub || sub->op != "Sub" || graph_.type(sub->inputs[0]).shape != graph_.type(value).shape) return false;
  const Node* max = graph_producer(sub->inputs[1]);
  return max && max->op == "ReduceMax" && max->inputs[0] == sub->inputs[0] && max->attrs.get_int("keepdims", 1) != 0;
}

Expr Lowering::compute_elementwise(const Node& node, ValueId value, Index& index) {
  const Shape& out = graph_.type(value).shape;
  const Type type = data_type(graph_.type(value).dtype);
  std::vector<Expr> args;
  if (node.op == "Tanh") {
    if (std::optional<ValueId> x = softplus_argument(node.inputs[0])) {
      return let(type, kir::call("TanhSoftplus", type, {value_at(*x, index)}));
    }
  }
  for (ValueId input : node.inputs) args.push_back(value_at(input, broadcast_index(input, out, index)));
  if (node.op == "Exp" && is_less_row_max(node.inputs[0])) {
    return let(type, kir::call("ExpNonPositive", type, {args[0]}));
  }
  if (node.op == "Where") return let(type, kir::select(args[0], args[1], args[2]));
  if (node.op == "IsInf") {
    const bool pos = node.attrs.get_int("detect_positive", 1) != 0;
    const bool neg = node.attrs.get_int("detect_negative", 1) != 0;
    if (!pos && !neg) return kir::bool_const(false);
    return let(type, kir::call(pos && neg ? "IsInf" : pos ? "IsPosInf" : "IsNegInf", Type::Bool, {args[0]}));
  }
  if (node.op == "Cast") return let(type, kir::cast(type, args[0]));
  if (node.op == "Neg") return let(type, kir::unary(Op::Neg, args[0]));
  if (node.op == "Not") return let(type, kir::unary(Op::Not, args[0]));
  if (node.inputs.size() == 1) return let(type, kir::call(node.op, type, {args[0]}));
  // x^2 in float equals the double pow rounded once: the product of two
  // floats is exact in double.
  if (node.op == "Pow" && is_scalar_constant(graph_, node.inputs[1], 2.0)) {
    return let(type, kir::binary(Op::Mul, args[0], args[0]));
  }
  if (node.op == "Pow") return let(type, kir::call("Pow", type, {args[0], args[1]}));
  // x / c as x * (1 / c) for a float constant c: a vector division issues
  // once per 8-10 cycles on one port (GELU's x / sqrt(2): a third of its
  // kernel's time); within an ulp of the quotient.
  if (node.op == "Div" && type == Type::F32) {
    if (std::optional<double> c = scalar_constant(graph_, node.inputs[1])) {
      const float reciprocal = 1.0f / float(*c);
      if (std::isnormal(reciprocal)) return let(type, kir::binary(Op::Mul, args[0], kir::float_const(reciprocal)));
    }
  }
  return let(type, kir::binary(binary_ops().at(node.op), args[0], args[1]));
}

}  // namespace orchid::codegen::cpu::detail
