// Node identity, the intern table and the factories of the expr IR.
#include "ir/expr.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_set>

#include "ir/expr_affine.h"
#include "ir/expr_fingerprint.h"
#include "ir/expr_hash.h"
#include "ir/expr_utils.h"

namespace orchid::expr {

using detail::hash_combine;
using detail::Passkey;

// ---- Functions ------------------------------------------------------------

namespace {

double relu_fn(double x) { return x > 0 ? x : 0.0; }
double exp_fn(double x) { return std::exp(x); }
double tanh_fn(double x) { return std::tanh(x); }
double sigmoid_fn(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double sqrt_fn(double x) { return std::sqrt(x); }
double neg_fn(double x) { return -x; }
double abs_fn(double x) { return std::fabs(x); }
double log_fn(double x) { return std::log(x); }
double erf_fn(double x) { return std::erf(x); }

// Indexed by Func; keep in enum order.
constexpr std::array<FuncInfo, 9> kFuncs = {{
    {Func::Relu, "relu", relu_fn},
    {Func::Exp, "exp", exp_fn},
    {Func::Tanh, "tanh", tanh_fn},
    {Func::Sigmoid, "sigmoid", sigmoid_fn},
    {Func::Sqrt, "sqrt", sqrt_fn},
    {Func::Neg, "neg", neg_fn},
    {Func::Abs, "abs", abs_fn},
    {Func::Log, "log", log_fn},
    {Func::Erf, "erf", erf_fn},
}};

}  // namespace

const FuncInfo& func_info(Func func) {
  const auto index = static_cast<size_t>(func);
  ORCHID_CHECK(index < kFuncs.size() && kFuncs[index].func == func) << "bad Func " << index;
  return kFuncs[index];
}

std::optional<Func> func_from_name(std::string_view name) {
  for (const FuncInfo& info : kFuncs) {
    if (info.name == name) return info.func;
  }
  return std::nullopt;
}

std::span<const FuncInfo> all_funcs() { return kFuncs; }

std::string_view binary_op_symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
  }
  return "?";
}

// ---- Node identity ----------------------------------------------------------

bool ExprNode::is_index() const {
  return kind_ == NodeKind::Iter || kind_ == NodeKind::Affine || kind_ == NodeKind::FloorDiv || kind_ == NodeKind::Mod;
}

namespace {

uint64_t hash_ptr(const void* p) { return detail::mix64(reinterpret_cast<uintptr_t>(p)); }

uint64_t hash_ints(uint64_t seed, const std::vector<int64_t>& values) {
  seed = hash_combine(seed, values.size());
  for (int64_t v : values) seed = hash_combine(seed, static_cast<uint64_t>(v));
  return seed;
}

uint64_t hash_ranges(uint64_t seed, const std::vector<IterRange>& ranges) {
  seed = hash_combine(seed, ranges.size());
  for (const IterRange& r : ranges) {
    seed = hash_combine(hash_combine(hash_combine(seed, hash_ptr(r.iter)), r.lo), r.hi);
  }
  return seed;
}

}  // namespace

bool ConstNode::same_fields(const ExprNode& other) const {
  // Bitwise, so that -0.0 and NaN intern consistently.
  return std::bit_cast<uint64_t>(value_) == std::bit_cast<uint64_t>(other.as<ConstNode>().value_);
}
uint64_t ConstNode::hash_fields() const { return detail::hash_double(value_); }

bool IterNode::same_fields(const ExprNode& other) const { return name_ == other.as<IterNode>().name_; }
uint64_t IterNode::hash_fields() const { return detail::hash_string(name_); }

bool AffineNode::same_fields(const ExprNode& other) const {
  const auto& o = other.as<AffineNode>();
  return constant_ == o.constant_ && terms_ == o.terms_;
}
uint64_t AffineNode::hash_fields() const {
  uint64_t h = hash_combine(terms_.size(), static_cast<uint64_t>(constant_));
  for (const AffineTerm& t : terms_) h = hash_combine(hash_combine(h, t.coef), hash_ptr(t.atom));
  return h;
}

bool DivModNode::same_fields(const ExprNode& other) const {
  const auto& o = other.as<DivModNode>();
  return operand_ == o.operand_ && divisor_ == o.divisor_;
}
uint64_t DivModNode::hash_fields() const { return hash_combine(hash_ptr(operand_), divisor_); }

bool BinaryNode::same_fields(const ExprNode& other) const {
  const auto& o = other.as<BinaryNode>();
  return op_ == o.op_ && lhs_ == o.lhs_ && rhs_ == o.rhs_;
}
uint64_t BinaryNode::hash_fields() const {
  return hash_combine(hash_combine(static_cast<uint64_t>(op_), hash_ptr(lhs_)), hash_ptr(rhs_));
}

bool CallNode::same_fields(const ExprNode& other) const {
  const auto& o = other.as<CallNode>();
  return func_ == o.func_ && arg_ == o.arg_;
}
uint64_t CallNode::hash_fields() const { return hash_combine(static_cast<uint64_t>(func_), hash_ptr(arg_)); }

bool TensorNode::same_fields(const ExprNode& other) const {
  const auto& o = other.as<TensorNode>();
  return name_ == o.name_ && shape_ == o.shape_ && pads_ == o.pads_;
}
uint64_t TensorNode::hash_fields() const { return hash_ints(hash_ints(detail::hash_string(name_), shape_), pads_); }

bool AccessNode::same_fields(const ExprNode& other) const {
  const auto& o = other.as<AccessNode>();
  return source_ == o.source_ && indices_ == o.indices_;
}
uint64_t AccessNode::hash_fields() const {
  uint64_t h = hash_ptr(source_);
  for (Expr i : indices_) h = hash_combine(h, hash_ptr(i));
  return h;
}

bool ScopeNode::same_fields(const ExprNode& other) const {
  const auto& o = other.as<ScopeNode>();
  return body_ == o.body_ && loops_ == o.loops_ && sums_ == o.sums_ && pads_ == o.pads_;
}
uint64_t ScopeNode::hash_fields() const {
  return hash_ints(hash_ranges(hash_ranges(hash_ptr(body_), loops_), sums_), pads_);
}

// ---- Intern table -----------------------------------------------------------

namespace {

struct NodeHash {
  size_t operator()(Expr n) const { return hash_combine(static_cast<uint64_t>(n->kind()), n->hash_fields()); }
};
struct NodeEq {
  bool operator()(Expr a, Expr b) const { return a->kind() == b->kind() && a->same_fields(*b); }
};

struct InternTable {
  std::mutex mutex;
  std::unordered_set<Expr, NodeHash, NodeEq> nodes;
};

// Never destroyed: nodes are immortal and stay reachable until exit.
InternTable& table() {
  static InternTable* t = new InternTable;
  return *t;
}

Expr find_interned(const ExprNode& candidate) {
  InternTable& t = table();
  std::lock_guard lock(t.mutex);
  auto it = t.nodes.find(&candidate);
  return it == t.nodes.end() ? nullptr : *it;
}

Expr intern(std::unique_ptr<ExprNode> candidate) {
  InternTable& t = table();
  std::lock_guard lock(t.mutex);
  auto [it, inserted] = t.nodes.insert(candidate.get());
  if (inserted) candidate.release();
  return *it;
}

}  // namespace

size_t interned_node_count() {
  InternTable& t = table();
  std::lock_guard lock(t.mutex);
  return t.nodes.size();
}

// Affine nodes are built in expr_affine.cc through this hook.
namespace detail {
Expr intern_affine(std::vector<AffineTerm> terms, int64_t constant) {
  return intern(std::make_unique<AffineNode>(Passkey{}, std::move(terms), constant));
}
Expr intern_divmod(NodeKind kind, Expr operand, int64_t divisor) {
  return intern(std::make_unique<DivModNode>(Passkey{}, kind, operand, divisor));
}
}  // namespace detail

// ---- Leaf factories -----------------------------------------------------------

bool is_valid_name(std::string_view name) {
  static const std::set<std::string_view> kReserved = {"tensor", "pad", "inf", "nan"};
  if (name.empty() || kReserved.contains(name)) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!alpha(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return alpha(c) || digit(c); });
}

Expr constant(double value) { return intern(std::make_unique<ConstNode>(Passkey{}, value)); }

Expr integer(int64_t value) { return detail::intern_affine({}, value); }

Expr iter(std::string_view name) {
  ORCHID_CHECK(is_valid_name(name)) << "bad iterator name '" << name << "'";
  return intern(std::make_unique<IterNode>(Passkey{}, std::string(name)));
}

// ---- Arithmetic ---------------------------------------------------------------

namespace {

std::optional<int64_t> index_constant(Expr e) {
  if (const auto* a = e->try_as<AffineNode>(); a && a->is_constant()) return a->constant();
  return std::nullopt;
}

// Index constants enter float arithmetic as float constants.
Expr as_value(Expr e) {
  ORCHID_CHECK(e != nullptr && e->is_value()) << "operand is not a value expression";
  if (auto c = index_constant(e)) return constant(static_cast<double>(*c));
  return e;
}

double apply_binary(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
  }
  return 0.0;
}

Expr float_binary(BinaryOp op, Expr a, Expr b) {
  a = as_value(a);
  b = as_value(b);
  const auto* ca = a->try_as<ConstNode>();
  const auto* cb = b->try_as<ConstNode>();
  if (ca && cb) return constant(apply_binary(op, ca->value(), cb->value()));
  return intern(std::make_unique<BinaryNode>(Passkey{}, op, a, b));
}

AffineForm scaled(Expr index, int64_t factor) {
  AffineForm form = affine_form(index);
  for (AffineTerm& t : form.terms) t.coef *= factor;
  form.constant *= factor;
  return form;
}

Expr affine_sum(Expr a, Expr b, int64_t b_sign) {
  AffineForm form = affine_form(a);
  AffineForm rhs = scaled(b, b_sign);
  form.terms.insert(form.terms.end(), rhs.terms.begin(), rhs.terms.end());
  form.constant += rhs.constant;
  return make_affine(std::move(form));
}

}  // namespace

Expr add(Expr a, Expr b) {
  if (a->is_index() && b->is_index()) return affine_sum(a, b, 1);
  return float_binary(BinaryOp::Add, a, b);
}

Expr sub(Expr a, Expr b) {
  if (a->is_index() && b->is_index()) return affine_sum(a, b, -1);
  return float_binary(BinaryOp::Sub, a, b);
}

Expr mul(Expr a, Expr b) {
  if (a->is_index() && b->is_index()) {
    if (auto c = index_constant(a)) return make_affine(scaled(b, *c));
    if (auto c = index_constant(b)) return make_affine(scaled(a, *c));
  }
  return float_binary(BinaryOp::Mul, a, b);
}

std::string div_error(Expr a, Expr b) {
  if (!a->is_value() || !b->is_value()) return "operand of '/' is not a value";
  if (a->is_index() && b->is_index()) {
    auto c = index_constant(b);
    if (c && *c <= 0) return "index division by a non-positive constant";
  }
  return "";
}

Expr div(Expr a, Expr b) {
  const std::string error = div_error(a, b);
  ORCHID_CHECK(error.empty()) << error;
  if (a->is_index() && b->is_index()) {
    if (auto c = index_constant(b)) return floor_div_index(a, *c);
  }
  return float_binary(BinaryOp::Div, a, b);
}

std::string mod_error(Expr a, Expr b) {
  if (!a->is_index() || !b->is_index()) return "'%' needs integer index operands";
  auto c = index_constant(b);
  if (!c || *c <= 0) return "'%' needs a positive integer constant divisor";
  return "";
}

Expr mod(Expr a, Expr b) {
  const std::string error = mod_error(a, b);
  ORCHID_CHECK(error.empty()) << error;
  return mod_index(a, *index_constant(b));
}

Expr neg(Expr a) {
  if (a->is_index()) return make_affine(scaled(a, -1));
  return call(Func::Neg, a);
}

Expr call(Func func, Expr arg) {
  arg = as_value(arg);
  if (const auto* c = arg->try_as<ConstNode>()) return constant(func_info(func).apply(c->value()));
  return intern(std::make_unique<CallNode>(Passkey{}, func, arg));
}

// ---- Tensors, accesses, scopes ------------------------------------------------

std::string tensor_error(std::string_view name, const std::vector<int64_t>& shape, const std::vector<int64_t>& pads) {
  if (!is_valid_name(name)) return "bad tensor name '" + std::string(name) + "'";
  if (std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; })) return "negative dimension";
  if (!pads.empty() && pads.size() != shape.size()) return "padding rank differs from tensor rank";
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; })) return "negative padding";
  return "";
}

Expr tensor(std::string_view name, std::vector<int64_t> shape, std::vector<int64_t> pads) {
  const std::string error = tensor_error(name, shape, pads);
  ORCHID_CHECK(error.empty()) << error;
  if (pads.empty()) pads.assign(shape.size(), 0);
  return intern(std::make_unique<TensorNode>(Passkey{}, std::string(name), std::move(shape), std::move(pads)));
}

std::string access_error(Expr source, const std::vector<Expr>& indices) {
  size_t rank = 0;
  if (const auto* t = source->try_as<TensorNode>()) {
    rank = t->rank();
  } else if (const auto* s = source->try_as<ScopeNode>()) {
    rank = s->rank();
  } else {
    return "only a tensor or a scope can be subscripted";
  }
  if (indices.size() != rank) {
    return "access has " + std::to_string(indices.size()) + " indices, tensor rank is " + std::to_string(rank);
  }
  for (Expr i : indices) {
    if (i == nullptr || !i->is_index()) return "tensor index is not an integer affine expression";
  }
  return "";
}

Expr access(Expr source, std::vector<Expr> indices) {
  const std::string error = access_error(source, indices);
  ORCHID_CHECK(error.empty()) << error;
  return intern(std::make_unique<AccessNode>(Passkey{}, source, std::move(indices)));
}

std::string scope_error(const std::vector<IterRange>& loops, const std::vector<IterRange>& sums, Expr body,
                        const std::vector<int64_t>& pads) {
  std::set<Expr> bound;
  for (const auto* list : {&loops, &sums}) {
    for (const IterRange& r : *list) {
      if (r.iter == nullptr || !r.iter->is<IterNode>()) return "scope iterator is not an iterator";
      if (r.lo > r.hi) return "range of iterator '" + r.name() + "' has lo > hi";
      if (!bound.insert(r.iter).second) return "iterator '" + r.name() + "' bound twice";
    }
  }
  if (body == nullptr || !body->is_value()) return "scope body is not a value expression";
  if (!pads.empty() && pads.size() != loops.size()) return "padding rank differs from scope rank";
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; })) return "negative padding";
  for (Expr free : free_iterators(body)) {
    if (!bound.contains(free)) {
      return "iterator '" + free->as<IterNode>().name() + "' is not bound by the scope (scopes are closed)";
    }
  }
  return "";
}

Expr scope(std::vector<IterRange> loops, std::vector<IterRange> sums, Expr body, std::vector<int64_t> pads) {
  const std::string error = scope_error(loops, sums, body, pads);
  ORCHID_CHECK(error.empty()) << error;
  if (pads.empty()) pads.assign(loops.size(), 0);
  auto node = std::make_unique<ScopeNode>(Passkey{}, std::move(loops), std::move(sums), body, std::move(pads));
  if (Expr existing = find_interned(*node)) return existing;
  // Computed before publication, so readers never see a half-built node.
  node->set_fingerprint(Passkey{}, detail::compute_scope_fingerprint(*node));
  return intern(std::move(node));
}

}  // namespace orchid::expr
