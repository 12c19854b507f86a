// Kernel IR constructors (literal folding) and expressions as text.
#include "codegen/kernel_ir/kernel_ir.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "support/error.h"

namespace orchid::codegen::kir {

const char* type_name(Type type) {
  switch (type) {
    case Type::I64: return "i64";
    case Type::F32: return "f32";
    case Type::F64: return "f64";
    case Type::Bool: return "bool";
  }
  return "?";
}

const char* reduce_name(Reduce reduce) {
  switch (reduce) {
    case Reduce::Sum: return "sum";
    case Reduce::Max: return "max";
    case Reduce::Min: return "min";
  }
  return "?";
}

namespace {

Expr make(Op op, Type type, std::vector<Expr> args = {}) {
  auto node = std::make_shared<ExprNode>();
  node->op = op;
  node->type = type;
  node->args = std::move(args);
  return node;
}

bool is_float_type(Type type) { return type == Type::F32 || type == Type::F64; }

bool is_comparison_or_logic(Op op) {
  switch (op) {
    case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: case Op::Eq: case Op::Ne: case Op::And: case Op::Or:
      return true;
    default: return false;
  }
}

}  // namespace

Expr int_const(int64_t value) {
  auto node = std::make_shared<ExprNode>();
  node->op = Op::Const;
  node->type = Type::I64;
  node->i = value;
  return node;
}

Expr float_const(double value, Type type) {
  ORCHID_CHECK(is_float_type(type)) << "kir: float constant of type " << type_name(type);
  auto node = std::make_shared<ExprNode>();
  node->op = Op::Const;
  node->type = type;
  node->f = value;
  return node;
}

Expr bool_const(bool value) {
  auto node = std::make_shared<ExprNode>();
  node->op = Op::Const;
  node->type = Type::Bool;
  node->i = value ? 1 : 0;
  return node;
}

Expr var(const std::string& name, Type type) {
  auto node = std::make_shared<ExprNode>();
  node->op = Op::Var;
  node->type = type;
  node->name = name;
  return node;
}

Expr load(const std::string& buffer, Type type, Expr index) {
  auto node = std::make_shared<ExprNode>();
  node->op = Op::Load;
  node->type = type;
  node->name = buffer;
  node->args = {std::move(index)};
  return node;
}

Expr call(const std::string& function, Type type, std::vector<Expr> args) {
  auto node = std::make_shared<ExprNode>();
  node->op = Op::Call;
  node->type = type;
  node->name = function;
  node->args = std::move(args);
  return node;
}

Expr select(Expr condition, Expr if_true, Expr if_false) {
  const Type type = if_true->type;
  return make(Op::Select, type, {std::move(condition), std::move(if_true), std::move(if_false)});
}

Expr cast(Type type, Expr value) {
  if (value->type == type) return value;
  return make(Op::Cast, type, {std::move(value)});
}

Expr binary(Op op, Expr a, Expr b) {
  if (a->type == Type::I64 && b->type == Type::I64) {
    switch (op) {
      case Op::Add: return add(std::move(a), std::move(b));
      case Op::Sub:
        if (to_string(a) == to_string(b)) return int_const(0);
        break;
      case Op::Min: return min(std::move(a), std::move(b));
      case Op::Max: return max(std::move(a), std::move(b));
      default: break;
    }
  }
  const Type type = is_comparison_or_logic(op) ? Type::Bool : a->type;
  return make(op, type, {std::move(a), std::move(b)});
}

Expr unary(Op op, Expr a) {
  const Type type = op == Op::Not ? Type::Bool : a->type;
  return make(op, type, {std::move(a)});
}

bool is_int_const(const Expr& e, int64_t* value) {
  if (e->op != Op::Const || e->type != Type::I64) return false;
  if (value) *value = e->i;
  return true;
}

bool is_const(const Expr& e) { return e->op == Op::Const; }

bool is_var(const Expr& e, const std::string& name) {
  return e->op == Op::Var && (name.empty() || e->name == name);
}

Expr add(Expr a, int64_t c) {
  int64_t v = 0;
  if (c == 0) return a;
  if (is_int_const(a, &v)) return int_const(v + c);
  // (x + k) + c is x + (k + c): a Pad after a Slice, shifted windows.
  if (a->op == Op::Add && is_int_const(a->args[1], &v)) return add(a->args[0], v + c);
  return make(Op::Add, Type::I64, {std::move(a), int_const(c)});
}

Expr add(Expr a, Expr b) {
  int64_t v = 0;
  if (is_int_const(b, &v)) return add(std::move(a), v);
  if (is_int_const(a, &v)) return add(std::move(b), v);
  return make(Op::Add, Type::I64, {std::move(a), std::move(b)});
}

Expr mul(Expr a, int64_t c) {
  int64_t v = 0;
  if (c == 0) return int_const(0);
  if (c == 1) return a;
  if (is_int_const(a, &v)) return int_const(v * c);
  return make(Op::Mul, Type::I64, {std::move(a), int_const(c)});
}

Expr div(Expr a, int64_t c) {
  int64_t v = 0;
  ORCHID_CHECK(c > 0) << "kir: division by " << c;
  if (c == 1) return a;
  if (is_int_const(a, &v)) return int_const(v / c);
  return make(Op::Div, Type::I64, {std::move(a), int_const(c)});
}

Expr mod(Expr a, int64_t c) {
  int64_t v = 0;
  ORCHID_CHECK(c > 0) << "kir: remainder by " << c;
  if (c == 1) return int_const(0);
  if (is_int_const(a, &v)) return int_const(v % c);
  return make(Op::Mod, Type::I64, {std::move(a), int_const(c)});
}

Expr min(Expr a, Expr b) {
  int64_t x = 0, y = 0;
  if (is_int_const(a, &x) && is_int_const(b, &y)) return int_const(std::min(x, y));
  const Type type = a->type;
  return make(Op::Min, type, {std::move(a), std::move(b)});
}

Expr max(Expr a, Expr b) {
  int64_t x = 0, y = 0;
  if (is_int_const(a, &x) && is_int_const(b, &y)) return int_const(std::max(x, y));
  const Type type = a->type;
  return make(Op::Max, type, {std::move(a), std::move(b)});
}

Expr clamp(Expr a, int64_t low, int64_t high) { return min(max(std::move(a), int_const(low)), int_const(high)); }

namespace {

std::string float_text(double value, Type type) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, type == Type::F32 ? "%.9g" : "%.17g", value);
  std::string text = buffer;
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return type == Type::F32 ? text + "f" : text;
}

}  // namespace

const char* infix(Op op) {
  switch (op) {
    case Op::Add: return " + ";
    case Op::Sub: return " - ";
    case Op::Mul: return " * ";
    case Op::Div: return " / ";
    case Op::Mod: return " % ";
    case Op::Lt: return " < ";
    case Op::Le: return " <= ";
    case Op::Gt: return " > ";
    case Op::Ge: return " >= ";
    case Op::Eq: return " == ";
    case Op::Ne: return " != ";
    case Op::And: return " && ";
    case Op::Or: return " || ";
    default: return nullptr;
  }
}

std::string to_string(const Expr& e) {
  switch (e->op) {
    case Op::Const:
      if (e->type == Type::I64) return std::to_string(e->i);
      if (e->type == Type::Bool) return e->i ? "true" : "false";
      return float_text(e->f, e->type);
    case Op::Var: return e->name;
    case Op::Load: return e->name + "[" + to_string(e->args[0]) + "]";
    case Op::Neg: return "(-" + to_string(e->args[0]) + ")";
    case Op::Not: return "(!" + to_string(e->args[0]) + ")";
    case Op::Min: return "min(" + to_string(e->args[0]) + ", " + to_string(e->args[1]) + ")";
    case Op::Max: return "max(" + to_string(e->args[0]) + ", " + to_string(e->args[1]) + ")";
    case Op::Select:
      return "(" + to_string(e->args[0]) + " ? " + to_string(e->args[1]) + " : " + to_string(e->args[2]) + ")";
    case Op::Cast: return std::string(type_name(e->type)) + "(" + to_string(e->args[0]) + ")";
    case Op::Call: {
      std::string text = e->name + "(";
      for (size_t k = 0; k < e->args.size(); ++k) text += (k ? ", " : "") + to_string(e->args[k]);
      return text + ")";
    }
    default: break;
  }
  int64_t c = 0;
  if (e->op == Op::Add && is_int_const(e->args[1], &c) && c < 0) {
    return "(" + to_string(e->args[0]) + " - " + std::to_string(-c) + ")";
  }
  const char* op = infix(e->op);
  ORCHID_CHECK(op != nullptr) << "kir: an expression of unknown operation";
  return "(" + to_string(e->args[0]) + op + to_string(e->args[1]) + ")";
}

Stmt let_stmt(const std::string& name, Type type, Expr value, bool is_mutable) {
  Stmt s;
  s.kind = StmtKind::Let;
  s.name = name;
  s.type = type;
  s.value = std::move(value);
  s.is_mutable = is_mutable;
  return s;
}

Stmt assign_stmt(const std::string& name, Expr value) {
  Stmt s;
  s.kind = StmtKind::Assign;
  s.name = name;
  s.value = std::move(value);
  return s;
}

Stmt store_stmt(const std::string& buffer, Expr index, Expr value) {
  Stmt s;
  s.kind = StmtKind::Store;
  s.name = buffer;
  s.index = std::move(index);
  s.value = std::move(value);
  return s;
}

Stmt loop_stmt(const std::string& var, Expr begin, Expr end, int64_t step, LoopRole role) {
  Stmt s;
  s.kind = StmtKind::Loop;
  s.name = var;
  s.begin = std::move(begin);
  s.end = std::move(end);
  s.step = step;
  s.role = role;
  return s;
}

Stmt array_stmt(const std::string& name, Type type, int64_t size) {
  Stmt s;
  s.kind = StmtKind::Array;
  s.name = name;
  s.type = type;
  s.size = size;
  return s;
}

Stmt fold_stmt(const std::string& acc, Reduce reduce, const std::string& array, Expr count, Expr first) {
  Stmt s;
  s.kind = StmtKind::Fold;
  s.name = acc;
  s.reduce = reduce;
  s.array = array;
  s.value = std::move(count);
  s.index = std::move(first);
  return s;
}

Stmt block_stmt(const std::string& label) {
  Stmt s;
  s.kind = StmtKind::Block;
  s.label = label;
  return s;
}

Stmt region_stmt(const std::string& label, bool parallel, int64_t work) {
  Stmt s;
  s.kind = StmtKind::Region;
  s.label = label;
  s.parallel = parallel;
  s.work = work;
  return s;
}

namespace {

Expr relocate(const Expr& e, const std::string& from, const std::string& to, const Expr& shift) {
  if (!e) return e;
  std::vector<Expr> args;
  bool changed = false;
  for (const Expr& arg : e->args) {
    args.push_back(relocate(arg, from, to, shift));
    changed = changed || args.back() != arg;
  }
  if (e->op == Op::Load && e->name == from) return load(to, e->type, binary(Op::Sub, args[0], shift));
  if (!changed) return e;
  auto node = std::make_shared<ExprNode>(*e);
  node->args = std::move(args);
  return node;
}

}  // namespace

void relocate_buffer(Block& block, const std::string& from, const std::string& to, const Expr& shift) {
  for (Stmt& s : block) {
    for (Expr* e : {&s.value, &s.index, &s.begin, &s.end}) *e = relocate(*e, from, to, shift);
    if (s.kind == StmtKind::Store && s.name == from) {
      s.name = to;
      s.index = binary(Op::Sub, s.index, shift);
    }
    if (s.kind == StmtKind::Fold && s.array == from) {
      s.array = to;
      s.index = binary(Op::Sub, s.index, shift);
    }
    relocate_buffer(s.body, from, to, shift);
  }
}

namespace {

void collect_reads(const Expr& e, std::set<std::string>& reads) {
  if (!e) return;
  if (e->op == Op::Load) reads.insert(e->name);
  for (const Expr& arg : e->args) collect_reads(arg, reads);
}

void collect_access(const Block& block, MemoryAccess& access) {
  for (const Stmt& s : block) {
    for (const Expr* e : {&s.value, &s.index, &s.begin, &s.end}) collect_reads(*e, access.reads);
    if (s.kind == StmtKind::Store) access.writes.insert(s.name);
    if (s.kind == StmtKind::Fold) access.reads.insert(s.array);
    collect_access(s.body, access);
  }
}

}  // namespace

MemoryAccess memory_access(const Block& block) {
  MemoryAccess access;
  collect_access(block, access);
  return access;
}

bool contains_loop(const Block& block) {
  return std::any_of(block.begin(), block.end(),
                     [](const Stmt& s) { return s.kind == StmtKind::Loop || contains_loop(s.body); });
}

const Buffer* Kernel::buffer(const std::string& name) const {
  for (const Buffer& b : buffers) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

}  // namespace orchid::codegen::kir
