// C++ for the kernel IR (render.h). Per-element semantics follow the
// reference interpreter (reference/ops/elementwise_utils.h: NaN-propagating
// Max/Min, Pow in double).
#include "codegen/cpu/render.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

#include "support/error.h"

namespace orchid::codegen::cpu {

using namespace kir;  // NOLINT: the IR's names throughout this file

std::string float_literal(double value) {
  if (std::isnan(value)) return "std::numeric_limits<float>::quiet_NaN()";
  if (std::isinf(value)) return value > 0 ? "std::numeric_limits<float>::infinity()"
                                          : "(-std::numeric_limits<float>::infinity())";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "float(%a)", value);
  return buffer;
}

namespace {

const char* c_type(Type type) {
  switch (type) {
    case Type::I64: return "int64_t";
    case Type::F32: return "float";
    case Type::F64: return "double";
    case Type::Bool: return "bool";
  }
  return "?";
}

// C++ of the scalar functions (Call), `x` (or `a`, `b`) being the operands.
const std::map<std::string, std::string>& function_templates() {
  static const std::map<std::string, std::string> table = {
      {"Abs", "std::fabs(x)"}, {"Floor", "std::floor(x)"}, {"Ceil", "std::ceil(x)"},
      {"Round", "std::nearbyint(x)"}, {"Sqrt", "std::sqrt(x)"}, {"Reciprocal", "(1.0f / x)"},
      {"Exp", "fm::exp(x)"}, {"ExpNonPositive", "fm::exp_nonpositive(x)"}, {"Log", "fm::log(x)"},
      {"Sin", "std::sin(x)"}, {"Cos", "std::cos(x)"},
      {"Tan", "std::tan(x)"}, {"Asin", "std::asin(x)"}, {"Acos", "std::acos(x)"}, {"Atan", "std::atan(x)"},
      {"Sinh", "std::sinh(x)"}, {"Cosh", "std::cosh(x)"}, {"Asinh", "std::asinh(x)"},
      {"Acosh", "std::acosh(x)"}, {"Atanh", "std::atanh(x)"}, {"Erf", "fm::erf(x)"},
      {"Sign", "(x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x))"}, {"Tanh", "fm::tanh(x)"},
      {"Sigmoid", "fm::sigmoid(x)"}, {"TanhSoftplus", "fm::tanh_softplus(x)"}, {"Relu", "(x < 0.0f ? 0.0f : x)"}, {"IsNaN", "(x != x)"},
      {"IsInf", "std::isinf(x)"}, {"IsPosInf", "(x == std::numeric_limits<float>::infinity())"},
      {"IsNegInf", "(x == -std::numeric_limits<float>::infinity())"},
      {"Pow", "float(std::pow(double(a), double(b)))"},
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
    out += alone && it != operands.end() ? it->second : std::string(1, c);
  }
  return out;
}

std::string expr(const Expr& e);

std::string constant(const Expr& e) {
  switch (e->type) {
    case Type::I64: return e->i < 0 ? "(" + std::to_string(e->i) + ")" : std::to_string(e->i);
    case Type::Bool: return e->i ? "true" : "false";
    case Type::F32: return float_literal(e->f);
    case Type::F64: {
      char buffer[64];
      std::snprintf(buffer, sizeof buffer, "double(%a)", e->f);
      return buffer;
    }
  }
  return "";
}

std::string min_max(const Expr& e) {
  const bool is_max = e->op == Op::Max;
  const std::string args = "(" + expr(e->args[0]) + ", " + expr(e->args[1]) + ")";
  if (e->type == Type::I64) return std::string(is_max ? "std::max" : "std::min") + "<int64_t>" + args;
  ORCHID_CHECK(e->type == Type::F32) << "render: min/max of " << type_name(e->type);
  return std::string(is_max ? "orchid_max" : "orchid_min") + args;
}

std::string conversion(const Expr& e) {
  const Type from = e->args[0]->type, to = e->type;
  const std::string x = expr(e->args[0]);
  if (from == Type::Bool && to == Type::F32) return "(" + x + " ? 1.0f : 0.0f)";
  if (from == Type::F32 && to == Type::Bool) return "(" + x + " != 0.0f)";
  return std::string(c_type(to)) + "(" + x + ")";
}

std::string function_call(const Expr& e) {
  auto it = function_templates().find(e->name);
  ORCHID_CHECK(it != function_templates().end()) << "render: no C++ for the function " << e->name;
  std::map<char, std::string> operands;
  if (e->args.size() == 1) operands['x'] = expr(e->args[0]);
  if (e->args.size() == 2) operands = {{'a', expr(e->args[0])}, {'b', expr(e->args[1])}};
  return substitute(it->second, operands);
}

std::string expr(const Expr& e) {
  switch (e->op) {
    case Op::Const: return constant(e);
    case Op::Var: return e->name;
    case Op::Load: return e->name + "[" + expr(e->args[0]) + "]";
    case Op::Neg: return "(-" + expr(e->args[0]) + ")";
    case Op::Not: return "(!" + expr(e->args[0]) + ")";
    case Op::Min: case Op::Max: return min_max(e);
    case Op::Select: return "(" + expr(e->args[0]) + " ? " + expr(e->args[1]) + " : " + expr(e->args[2]) + ")";
    case Op::Cast: return conversion(e);
    case Op::Call: return function_call(e);
    default: break;
  }
  int64_t c = 0;
  if (e->op == Op::Add && is_int_const(e->args[1], &c) && c < 0) {
    return "(" + expr(e->args[0]) + " - " + std::to_string(-c) + ")";
  }
  const char* op = infix(e->op);
  ORCHID_CHECK(op != nullptr) << "render: an expression of unknown operation";
  return "(" + expr(e->args[0]) + op + expr(e->args[1]) + ")";
}

class Renderer {
 public:
  explicit Renderer(const Kernel& kernel) : kernel_(kernel) {}

  std::string function(const std::string& symbol) {
    out_ = "extern \"C\" void " + symbol + "(const void* const* inputs, void* const* outputs) {\n";
    depth_ = 1;
    declare_buffers();
    body(kernel_.body);
    return out_ + "}\n";
  }

 private:
  void line(const std::string& text) { out_ += std::string(size_t(2 * depth_), ' ') + text + "\n"; }
  void open(const std::string& header) {
    line(header);
    ++depth_;
  }
  void close() {
    --depth_;
    line("}");
  }

  void declare_buffers() {
    int scratch_slots = 0;
    for (const Buffer& b : kernel_.buffers) {
      const std::string type = c_type(b.type), n = b.name, at = std::to_string(b.position);
      switch (b.kind) {
        case BufferKind::Input:
          line("const " + type + "* " + n + "_arg = static_cast<const " + type + "*>(inputs[" + at + "]);");
          break;
        case BufferKind::Output: line(type + "* " + n + "_arg = static_cast<" + type + "*>(outputs[" + at + "]);"); break;
        case BufferKind::Scratch:
          line(type + "* " + n + "_arg = static_cast<" + type + "*>(orchid_scratch(" + std::to_string(scratch_slots++) +
               ", " + std::to_string(b.size) + " * sizeof(" + type + ")));");
          break;
        case BufferKind::Table: {
          std::string text = "static const " + type + " " + n + "[] = {";
          for (size_t k = 0; k < b.values.size(); ++k) text += (k ? "," : "") + std::to_string(b.values[k]);
          line(text + "};");
          break;
        }
      }
    }
  }

  // The buffers as __restrict locals: inside an OpenMP region the outlined
  // function would otherwise read them from a shared struct that any store
  // might alias, which defeats vectorization.
  void restrict_views() {
    for (const Buffer& b : kernel_.buffers) {
      const std::string type = c_type(b.type);
      if (b.kind == BufferKind::Input) line("const " + type + "* __restrict " + b.name + " = " + b.name + "_arg;");
      if (b.kind == BufferKind::Output || b.kind == BufferKind::Scratch) {
        line(type + "* __restrict " + b.name + " = " + b.name + "_arg;");
      }
    }
  }

  void body(const Block& block) {
    for (const Stmt& s : block) statement(s);
  }

  void statement(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::Block:
        open(s.label.empty() ? "{" : "{  // " + s.label);
        body(s.body);
        close();
        return;
      case StmtKind::Region: return region(s);
      case StmtKind::Loop: return loop(s);
      case StmtKind::Let:
        line(std::string(s.is_mutable ? "" : "const ") + c_type(s.type) + " " + s.name + " = " + expr(s.value) + ";");
        return;
      case StmtKind::Assign: line(s.name + " = " + expr(s.value) + ";"); return;
      case StmtKind::Store: line(s.name + "[" + expr(s.index) + "] = " + expr(s.value) + ";"); return;
      case StmtKind::Array: line(std::string(c_type(s.type)) + " " + s.name + "[" + std::to_string(s.size) + "];"); return;
      case StmtKind::Fold: return fold(s);
    }
  }

  void region(const Stmt& s) {
    open("{  // " + s.label);
    if (s.parallel) {
      line("#pragma omp parallel");
      open("{");
    }
    const bool was_parallel = in_parallel_;
    in_parallel_ = s.parallel;
    restrict_views();
    body(s.body);
    in_parallel_ = was_parallel;
    if (s.parallel) close();
    close();
  }

  // An innermost serial loop that writes no buffer or array it reads is
  // marked free of dependences between iterations: the buffers of a kernel
  // never overlap (KernelArgs), and GCC, which takes the __restrict of the
  // views as no guarantee (compiler.cc), could otherwise only vectorize it
  // behind run-time overlap tests, and not at all where it gathers through
  // an index table (candy's InstanceNorm + upsample + pad ran scalar).
  void loop(const Stmt& s) {
    if (s.role == LoopRole::Shared && in_parallel_) {
      line("#pragma omp for");
    } else if (!contains_loop(s.body)) {
      const MemoryAccess access = memory_access(s.body);
      const bool disjoint = std::none_of(access.writes.begin(), access.writes.end(),
                                         [&](const std::string& w) { return access.reads.count(w) > 0; });
      if (disjoint && !access.writes.empty()) line("#pragma GCC ivdep");
    }
    const std::string& v = s.name;
    open("for (int64_t " + v + " = " + expr(s.begin) + "; " + v + " < " + expr(s.end) + "; " +
         (s.step == 1 ? "++" + v : v + " += " + std::to_string(s.step)) + ") {");
    body(s.body);
    close();
  }

  // The prelude's explicitly vectorized folds: orchid_fold (Max/Min,
  // NaN-propagating) and orchid_sum (float partial sums of the chunk,
  // returned in double: the accumulator across chunks is double).
  void fold(const Stmt& s) {
    int64_t first = 0;
    const bool at_start = is_int_const(s.index, &first) && first == 0;
    const std::string n = expr(s.value), acc = s.name,
                      from = at_start ? s.array : "(" + s.array + " + " + expr(s.index) + ")";
    if (s.reduce == Reduce::Sum) {
      line(acc + " += orchid_sum(" + from + ", " + n + ");");
      return;
    }
    line(acc + " = orchid_fold<" + (s.reduce == Reduce::Max ? "true" : "false") + ">(" + from + ", " + n + ", " + acc +
         ");");
  }

  const Kernel& kernel_;
  std::string out_;
  int depth_ = 0;
  bool in_parallel_ = false;
};

}  // namespace

std::string render(const Kernel& kernel, const std::string& symbol) { return Renderer(kernel).function(symbol); }

}  // namespace orchid::codegen::cpu
