// Scalar expressions of the CPU emitter: a value at an index. Materialized
// values and group inputs are loads; every other value is inlined: an
// elementwise node applies its scalar function to its inputs at the
// (broadcast) index, a layout node maps the index to its input's index
// (emitter_layout.cc).
// Per-element semantics follow the reference interpreter
// (reference/ops/elementwise_utils.h: NaN-propagating Max/Min, Pow in double).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <regex>

#include "codegen/cpu/emitter_internal.h"
#include "support/error.h"

namespace orchid::codegen::cpu::detail {

bool is_int_literal(const std::string& s, int64_t* value) {
  if (s.empty()) return false;
  size_t i = (s[0] == '-') ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t k = i; k < s.size(); ++k) {
    if (s[k] < '0' || s[k] > '9') return false;
  }
  if (value) *value = std::stoll(s);
  return true;
}

namespace {

// Expressions of the float unary functions, `x` being the operand.
const std::map<std::string, std::string>& unary_functions() {
  static const std::map<std::string, std::string> table = {
      {"Abs", "std::fabs(x)"}, {"Neg", "(-x)"}, {"Floor", "std::floor(x)"}, {"Ceil", "std::ceil(x)"},
      {"Round", "std::nearbyint(x)"}, {"Sqrt", "std::sqrt(x)"}, {"Reciprocal", "(1.0f / x)"},
      {"Exp", "fm::exp(x)"}, {"Log", "fm::log(x)"}, {"Sin", "std::sin(x)"}, {"Cos", "std::cos(x)"},
      {"Tan", "std::tan(x)"}, {"Asin", "std::asin(x)"}, {"Acos", "std::acos(x)"}, {"Atan", "std::atan(x)"},
      {"Sinh", "std::sinh(x)"}, {"Cosh", "std::cosh(x)"}, {"Asinh", "std::asinh(x)"},
      {"Acosh", "std::acosh(x)"}, {"Atanh", "std::atanh(x)"}, {"Erf", "fm::erf(x)"},
      {"Sign", "(x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x))"}, {"Tanh", "fm::tanh(x)"},
      {"Sigmoid", "fm::sigmoid(x)"}, {"Relu", "(x < 0.0f ? 0.0f : x)"}, {"IsNaN", "(x != x)"},
      {"Not", "(!x)"}, {"Cast", "x"},
  };
  return table;
}

// Expressions of the binary functions of operands `a` and `b`.
const std::map<std::string, std::string>& binary_functions() {
  static const std::map<std::string, std::string> table = {
      {"Add", "(a + b)"}, {"Sub", "(a - b)"}, {"Mul", "(a * b)"}, {"Div", "(a / b)"},
      {"Pow", "float(std::pow(double(a), double(b)))"}, {"Max", "orchid_max(a, b)"},
      {"Min", "orchid_min(a, b)"}, {"Equal", "(a == b)"}, {"Less", "(a < b)"}, {"LessOrEqual", "(a <= b)"},
      {"Greater", "(a > b)"}, {"GreaterOrEqual", "(a >= b)"}, {"And", "(a && b)"}, {"Or", "(a || b)"},
      {"Xor", "(a != b)"},
  };
  return table;
}

// Replaces the operand names (single letters standing alone) in a template.
std::string substitute(const std::string& pattern, const std::map<char, std::string>& operands) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    auto part_of_name = [](char n) { return std::isalnum(static_cast<unsigned char>(n)) || n == '_'; };
    const bool alone = (i == 0 || (!part_of_name(pattern[i - 1]) && pattern[i - 1] != ':')) &&
                       (i + 1 == pattern.size() || !part_of_name(pattern[i + 1]));
    auto it = operands.find(c);
    if (alone && it != operands.end()) {
      out += it->second;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string index_add(const std::string& a, int64_t c) {
  int64_t v = 0;
  if (c == 0) return a;
  if (is_int_literal(a, &v)) return std::to_string(v + c);
  // "(E + k)" + c is "(E + (k + c))": Pad after Slice, shifted windows.
  static const std::regex offset(R"(^\((.*) ([+-]) (\d+)\)$)");
  std::smatch m;
  if (std::regex_match(a, m, offset)) {
    const int64_t k = (m[2] == "-" ? -1 : 1) * std::stoll(m[3]);
    return index_add(m[1], k + c);
  }
  return "(" + a + (c < 0 ? " - " + std::to_string(-c) : " + " + std::to_string(c)) + ")";
}

std::string index_mul(const std::string& a, int64_t c) {
  int64_t v = 0;
  if (c == 0) return "0";
  if (c == 1) return a;
  if (is_int_literal(a, &v)) return std::to_string(v * c);
  return "(" + a + " * " + std::to_string(c) + ")";
}

std::string index_sum(const std::string& a, const std::string& b) {
  if (a == "0") return b;
  if (b == "0") return a;
  int64_t x = 0, y = 0;
  if (is_int_literal(a, &x) && is_int_literal(b, &y)) return std::to_string(x + y);
  return "(" + a + " + " + b + ")";
}

std::string float_literal(double value) {
  if (std::isnan(value)) return "std::numeric_limits<float>::quiet_NaN()";
  if (std::isinf(value)) return value > 0 ? "std::numeric_limits<float>::infinity()"
                                          : "(-std::numeric_limits<float>::infinity())";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "float(%a)", value);
  return buffer;
}

const char* c_type(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "float";
    case DType::Bool: return "bool";
    default: break;
  }
  ORCHID_CHECK(false) << "codegen: no C type for dtype " << dtype_name(dtype);
  return "";
}

std::string KernelWriter::fresh(const std::string& prefix) { return prefix + std::to_string(counter_++); }

std::string KernelWriter::let(const std::string& type, const std::string& expr) {
  // Names and literals need no local.
  if (is_int_literal(expr)) return expr;
  bool name = !expr.empty();
  for (char c : expr) name = name && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (name) return expr;
  const std::string key = type + " " + expr;
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    auto it = scope->find(key);
    if (it != scope->end()) return it->second;
  }
  const std::string local = fresh("t");
  if (hoist_depth_ && hoist_depth_ < scopes_.size() && invariant(expr)) {
    lines_.insert(lines_.begin() + long(hoist_at_),
                  std::string(2 * hoist_depth_, ' ') + "const " + type + " " + local + " = " + expr + ";");
    ++hoist_at_;
    scopes_[hoist_depth_ - 1][key] = local;
    return local;
  }
  line("const " + type + " " + local + " = " + expr + ";");
  scopes_.back()[key] = local;
  return local;
}

bool KernelWriter::invariant(const std::string& expr) const {
  static const std::regex identifier(R"([A-Za-z_]\w*)");
  for (std::sregex_iterator it(expr.begin(), expr.end(), identifier), end; it != end; ++it) {
    if (variant_.count(it->str())) return false;
  }
  return true;
}

const std::string& KernelWriter::linear_of(const Shape& shape, Index& index) {
  if (!index.linear.empty()) return index.linear;
  const std::vector<int64_t> strides = shape_strides(shape);
  std::string sum = "0";
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    sum = index_sum(sum, index_mul(index.dims[d], strides[d]));
  }
  index.linear = let("int64_t", sum);
  return index.linear;
}

const std::string& KernelWriter::dim_of(const Shape& shape, Index& index, size_t d) {
  if (index.has_dims && !index.dims[d].empty()) return index.dims[d];
  if (!index.has_dims || index.lazy_from.empty()) return dims_of(shape, index)[d];
  int64_t stride = 1;
  for (size_t k = d + 1; k < shape.size(); ++k) stride *= shape[k];
  std::string e = index.lazy_from;
  if (shape[d] == 1) {
    e = "0";
  } else {
    if (stride != 1) e = "(" + e + " / " + std::to_string(stride) + ")";
    if (d != index.lazy_split) e = "(" + e + " % " + std::to_string(shape[d]) + ")";
    inner_divmod_ = inner_divmod_ || e != index.lazy_from;
  }
  index.dims[d] = let("int64_t", e);
  return index.dims[d];
}

const std::vector<std::string>& KernelWriter::dims_of(const Shape& shape, Index& index) {
  if (index.has_dims && !index.lazy_from.empty()) {
    for (size_t d = index.lazy_split; d < shape.size(); ++d) dim_of(shape, index, d);
    index.lazy_from.clear();
  }
  if (index.has_dims) return index.dims;
  ORCHID_CHECK(!index.linear.empty()) << "codegen: an index with neither form";
  const std::vector<int64_t> strides = shape_strides(shape);
  index.dims.clear();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) {
      index.dims.push_back("0");
      continue;
    }
    std::string e = index.linear;
    if (strides[d] != 1) e = "(" + e + " / " + std::to_string(strides[d]) + ")";
    if (d > 0) e = "(" + e + " % " + std::to_string(shape[d]) + ")";
    index.dims.push_back(let("int64_t", e));
  }
  index.has_dims = true;
  return index.dims;
}

Index KernelWriter::broadcast_index(ValueId input, const Shape& out, Index& index) {
  const Shape& in = graph_.type(input).shape;
  if (in == out) return index;
  Index result;
  if (shape_numel(in) == 1) {
    result.linear = "0";
    result.dims.assign(in.size(), "0");
    result.has_dims = true;
    return result;
  }
  // Only the dimensions the input has: a stage's merged inner index is
  // divided only if a broadcast input really varies along them.
  const size_t offset = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) result.dims.push_back(in[d] == 1 ? "0" : dim_of(out, index, d + offset));
  result.has_dims = true;
  return result;
}

std::string KernelWriter::value_at(ValueId value, Index index) {
  const Value& v = graph_.value(value);
  const char* type = c_type(v.type.dtype);
  // Scalar constants become literals: no load, no aliasing question.
  if (v.is_constant() && v.type.numel() == 1 && v.constant->defined()) {
    const double x = v.constant->at_f64(0);
    return v.type.dtype == DType::Bool ? (x != 0 ? "true" : "false") : float_literal(x);
  }
  auto buffer = buffer_.find(value);
  if (buffer != buffer_.end()) {
    return let(type, buffer->second + "[" + linear_of(v.type.shape, index) + "]");
  }
  return compute(value, std::move(index));
}

std::string KernelWriter::compute(ValueId value, Index index) {
  auto producer = producer_.find(value);
  ORCHID_CHECK(producer != producer_.end()) << "codegen: value '" << graph_.value(value).name << "' has no source";
  const Node& node = graph_.nodes()[producer->second];
  const bool own_element = !index.linear.empty() && index.linear == stage_linear_;
  if (auto chunk = chunk_buffers_.find(value); chunk != chunk_buffers_.end() && own_element) {
    return let(c_type(graph_.type(value).dtype), chunk->second + "[i - ib]");
  }
  if (unary_functions().count(node.op) || binary_functions().count(node.op) || node.op == "Where" ||
      node.op == "IsInf") {
    std::string result = compute_elementwise(node, value, index);
    if (is_expensive(node.op)) expensive_reads_.push_back({value, own_element});
    return result;
  }
  return compute_layout(node, value, index);
}

std::string KernelWriter::compute_elementwise(const Node& node, ValueId value, Index& index) {
  const Shape& out = graph_.type(value).shape;
  const char* type = c_type(graph_.type(value).dtype);
  std::vector<std::string> args;
  for (ValueId input : node.inputs) args.push_back(value_at(input, broadcast_index(input, out, index)));
  if (node.op == "Where") return let(type, "(" + args[0] + " ? " + args[1] + " : " + args[2] + ")");
  if (node.op == "IsInf") {
    const bool pos = node.attrs.get_int("detect_positive", 1) != 0;
    const bool neg = node.attrs.get_int("detect_negative", 1) != 0;
    const std::string& x = args[0];
    std::string e = pos && neg ? "std::isinf(" + x + ")"
                    : pos      ? "(" + x + " == std::numeric_limits<float>::infinity())"
                    : neg      ? "(" + x + " == -std::numeric_limits<float>::infinity())"
                               : "false";
    return let(type, e);
  }
  if (node.op == "Cast") {
    const DType from = graph_.type(node.inputs[0]).dtype;
    const DType to = graph_.type(value).dtype;
    if (from == to) return args[0];
    return let(type, to == DType::Bool ? "(" + args[0] + " != 0.0f)" : "(" + args[0] + " ? 1.0f : 0.0f)");
  }
  if (node.inputs.size() == 1) return let(type, substitute(unary_functions().at(node.op), {{'x', args[0]}}));
  // x^2 in float equals the double pow rounded once: the product of two
  // floats is exact in double.
  if (node.op == "Pow" && graph_.value(node.inputs[1]).is_constant() && graph_.type(node.inputs[1]).numel() == 1 &&
      graph_.value(node.inputs[1]).constant->at_f64(0) == 2.0) {
    return let(type, "(" + args[0] + " * " + args[0] + ")");
  }
  return let(type, substitute(binary_functions().at(node.op), {{'a', args[0]}, {'b', args[1]}}));
}

}  // namespace orchid::codegen::cpu::detail
