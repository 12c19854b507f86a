// The tensor-algebra expression IR (OLLIE's expressions): immutable,
// hash-consed nodes.
//
// A *scope*  L<i:a:b, j:c:d> Sum<k:e:f> body  is a tensor: for every point of
// its loop iterators (in order) it holds the sum of `body` over every point of
// its sum iterators. Ranges are half-open [lo, hi) and may start anywhere.
//
// Semantics chosen here (the evaluator and every rewrite rely on them):
//  - Scopes are closed: a body refers only to its own scope's iterators, so a
//    nested scope is a plain tensor value, independent of the outer point.
//  - A scope, viewed as a tensor, is indexed by its iterator values directly
//    (absolute coordinates): element (i, j) is the body sum at i, j. Every read
//    outside the loop box [lo, hi) of any dimension is 0.
//  - Every read of an input tensor outside [0, dim) is 0 (zero padding,
//    unbounded). So values never depend on declared padding.
//  - Declared padding (per dimension, on tensors and on scope outputs) is a
//    materialization promise, not a value: a buffer for the tensor is
//    allocated with `pad` zero elements on each side of every dimension, so
//    generated code may read that far out of bounds without a check. It is
//    part of the node's identity and fingerprint.
//  - Index expressions are integer valued: iterators, integer constants,
//    affine combinations, floor division and floor modulo by positive
//    constants. Value expressions are doubles. An index expression used as a
//    value is converted to double (so `L<i:0:4> i` is the vector 0,1,2,3).
//
// Hash-consing: nodes are created only through the factories below, which
// intern them in one global table (guarded by a mutex, safe to call from any
// thread). Structurally equal nodes are the same pointer, so `==` on Expr is
// structural equality. Nodes are immortal; an Expr never dangles.
//
// Canonical forms made by the factories, so that equal meanings meet:
//  - index arithmetic is kept as an AffineNode: sum of coef*atom plus a
//    constant, atoms (iterators, floor-div, mod) sorted by name/structure, so
//    h+r-1 and r+h-1 are one node; a lone atom is the atom itself;
//  - floor-div/mod pull whole multiples of the divisor out of their operand
//    and divide out common factors (see expr_affine.h);
//  - float operations on two constants are folded.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.h"

namespace orchid::expr {

class ExprNode;
using Expr = const ExprNode*;

enum class NodeKind : uint8_t {
  Const,     // double constant (a value)
  Iter,      // iterator reference (an index)
  Affine,    // sum of coef*atom + constant (an index)
  FloorDiv,  // floor(operand / divisor), divisor > 0 (an index)
  Mod,       // operand - divisor*floor(operand / divisor), in [0, divisor) (an index)
  Binary,    // float + - * / (a value)
  Call,      // elementwise function (a value)
  Tensor,    // named input tensor: only as the source of an Access
  Access,    // source[indices...] (a value)
  Scope,     // L<...> Sum<...> body: a tensor, top level or source of an Access
};

enum class BinaryOp : uint8_t { Add, Sub, Mul, Div };

// Elementwise functions. To add one: extend the enum and the table in expr.cc.
enum class Func : uint8_t { Relu, Exp, Tanh, Sigmoid, Sqrt, Neg, Abs, Log, Erf };

struct FuncInfo {
  Func func;
  std::string_view name;  // spelling in the text form
  double (*apply)(double);
};
const FuncInfo& func_info(Func func);
std::optional<Func> func_from_name(std::string_view name);
std::span<const FuncInfo> all_funcs();

std::string_view binary_op_symbol(BinaryOp op);

namespace detail {
// Lets only the factories construct nodes; a node built otherwise would not be
// interned and would break identity. Not for use outside src/ir/expr*.cc.
struct Passkey {
  explicit Passkey() = default;
};
}  // namespace detail

class ExprNode {
 public:
  ExprNode(const ExprNode&) = delete;
  ExprNode& operator=(const ExprNode&) = delete;
  virtual ~ExprNode() = default;

  NodeKind kind() const { return kind_; }
  // Integer-valued index expression (Iter, Affine, FloorDiv, Mod).
  bool is_index() const;
  // Usable as an operand or a scope body (everything but Tensor and Scope).
  bool is_value() const { return kind_ != NodeKind::Tensor && kind_ != NodeKind::Scope; }

  template <typename T>
  bool is() const {
    return T::classof(kind_);
  }
  template <typename T>
  const T& as() const {
    ORCHID_CHECK(is<T>()) << "expr node of kind " << static_cast<int>(kind_) << " cast to wrong type";
    return static_cast<const T&>(*this);
  }
  template <typename T>
  const T* try_as() const {
    return is<T>() ? static_cast<const T*>(this) : nullptr;
  }

  // Interning hooks: fields compared/hashed shallowly, children by identity.
  virtual bool same_fields(const ExprNode& other) const = 0;
  virtual uint64_t hash_fields() const = 0;

 protected:
  explicit ExprNode(NodeKind kind) : kind_(kind) {}

 private:
  NodeKind kind_;
};

class ConstNode final : public ExprNode {
 public:
  static bool classof(NodeKind k) { return k == NodeKind::Const; }
  ConstNode(detail::Passkey, double value) : ExprNode(NodeKind::Const), value_(value) {}
  double value() const { return value_; }
  bool same_fields(const ExprNode& other) const override;
  uint64_t hash_fields() const override;

 private:
  double value_;
};

class IterNode final : public ExprNode {
 public:
  static bool classof(NodeKind k) { return k == NodeKind::Iter; }
  IterNode(detail::Passkey, std::string name) : ExprNode(NodeKind::Iter), name_(std::move(name)) {}
  const std::string& name() const { return name_; }
  bool same_fields(const ExprNode& other) const override;
  uint64_t hash_fields() const override;

 private:
  std::string name_;
};

struct AffineTerm {
  int64_t coef;
  Expr atom;  // IterNode, FloorDiv or Mod node
  bool operator==(const AffineTerm&) const = default;
};

// Canonical: terms sorted by compare_index(atom), atoms distinct, coefs
// nonzero; never a single coef-1 term without constant (that is the atom).
// No terms at all is an integer constant.
class AffineNode final : public ExprNode {
 public:
  static bool classof(NodeKind k) { return k == NodeKind::Affine; }
  AffineNode(detail::Passkey, std::vector<AffineTerm> terms, int64_t constant)
      : ExprNode(NodeKind::Affine), terms_(std::move(terms)), constant_(constant) {}
  const std::vector<AffineTerm>& terms() const { return terms_; }
  int64_t constant() const { return constant_; }
  bool is_constant() const { return terms_.empty(); }
  bool same_fields(const ExprNode& other) const override;
  uint64_t hash_fields() const override;

 private:
  std::vector<AffineTerm> terms_;
  int64_t constant_;
};

// FloorDiv and Mod by a positive constant, floor semantics (Python's // and %).
class DivModNode final : public ExprNode {
 public:
  static bool classof(NodeKind k) { return k == NodeKind::FloorDiv || k == NodeKind::Mod; }
  DivModNode(detail::Passkey, NodeKind kind, Expr operand, int64_t divisor)
      : ExprNode(kind), operand_(operand), divisor_(divisor) {}
  Expr operand() const { return operand_; }
  int64_t divisor() const { return divisor_; }
  bool same_fields(const ExprNode& other) const override;
  uint64_t hash_fields() const override;

 private:
  Expr operand_;
  int64_t divisor_;
};

// Float arithmetic; at least one operand is a non-index value.
class BinaryNode final : public ExprNode {
 public:
  static bool classof(NodeKind k) { return k == NodeKind::Binary; }
  BinaryNode(detail::Passkey, BinaryOp op, Expr lhs, Expr rhs)
      : ExprNode(NodeKind::Binary), op_(op), lhs_(lhs), rhs_(rhs) {}
  BinaryOp op() const { return op_; }
  Expr lhs() const { return lhs_; }
  Expr rhs() const { return rhs_; }
  bool same_fields(const ExprNode& other) const override;
  uint64_t hash_fields() const override;

 private:
  BinaryOp op_;
  Expr lhs_, rhs_;
};

class CallNode final : public ExprNode {
 public:
  static bool classof(NodeKind k) { return k == NodeKind::Call; }
  CallNode(detail::Passkey, Func func, Expr arg) : ExprNode(NodeKind::Call), func_(func), arg_(arg) {}
  Func func() const { return func_; }
  Expr arg() const { return arg_; }
  bool same_fields(const ExprNode& other) const override;
  uint64_t hash_fields() const override;

 private:
  Func func_;
  Expr arg_;
};

// A named input tensor. Identity is (name, shape, pads).
class TensorNode final : public ExprNode {
 public:
  static bool classof(NodeKind k) { return k == NodeKind::Tensor; }
  TensorNode(detail::Passkey, std::string name, std::vector<int64_t> shape, std::vector<int64_t> pads)
      : ExprNode(NodeKind::Tensor), name_(std::move(name)), shape_(std::move(shape)), pads_(std::move(pads)) {}
  const std::string& name() const { return name_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  const std::vector<int64_t>& pads() const { return pads_; }  // one per dimension
  size_t rank() const { return shape_.size(); }
  bool same_fields(const ExprNode& other) const override;
  uint64_t hash_fields() const override;

 private:
  std::string name_;
  std::vector<int64_t> shape_, pads_;
};

// source[indices...]; source is a TensorNode or a ScopeNode.
class AccessNode final : public ExprNode {
 public:
  static bool classof(NodeKind k) { return k == NodeKind::Access; }
  AccessNode(detail::Passkey, Expr source, std::vector<Expr> indices)
      : ExprNode(NodeKind::Access), source_(source), indices_(std::move(indices)) {}
  Expr source() const { return source_; }
  const std::vector<Expr>& indices() const { return indices_; }
  bool same_fields(const ExprNode& other) const override;
  uint64_t hash_fields() const override;

 private:
  Expr source_;
  std::vector<Expr> indices_;
};

// An iterator bound by a scope with its half-open range [lo, hi).
struct IterRange {
  Expr iter = nullptr;  // an IterNode
  int64_t lo = 0;
  int64_t hi = 0;
  int64_t extent() const { return hi - lo; }
  const std::string& name() const { return iter->as<IterNode>().name(); }
  bool operator==(const IterRange&) const = default;
};

class ScopeNode final : public ExprNode {
 public:
  static bool classof(NodeKind k) { return k == NodeKind::Scope; }
  ScopeNode(detail::Passkey, std::vector<IterRange> loops, std::vector<IterRange> sums, Expr body,
            std::vector<int64_t> pads)
      : ExprNode(NodeKind::Scope),
        loops_(std::move(loops)),
        sums_(std::move(sums)),
        body_(body),
        pads_(std::move(pads)) {}
  const std::vector<IterRange>& loops() const { return loops_; }
  const std::vector<IterRange>& sums() const { return sums_; }
  Expr body() const { return body_; }
  const std::vector<int64_t>& pads() const { return pads_; }  // one per loop iterator
  size_t rank() const { return loops_.size(); }
  // Name-independent fingerprint (expr_fingerprint.h), computed once at creation.
  uint64_t fingerprint() const { return fingerprint_; }
  void set_fingerprint(detail::Passkey, uint64_t fp) { fingerprint_ = fp; }
  bool same_fields(const ExprNode& other) const override;
  uint64_t hash_fields() const override;

 private:
  std::vector<IterRange> loops_, sums_;
  Expr body_;
  std::vector<int64_t> pads_;
  uint64_t fingerprint_ = 0;
};

// ---- Factories: the only way to make nodes. Misuse is a bug (ORCHID_CHECK);
// the *_error validators let callers with user input (the parser) report it.

Expr constant(double value);  // a float constant
Expr integer(int64_t value);  // an index constant
Expr iter(std::string_view name);

// Arithmetic dispatches on operand types. Both index: affine canonical form
// (mul needs one constant side, div/mod a positive constant divisor, else a
// float op). Otherwise a float BinaryNode, with index constants turned into
// float constants. mod needs index operands.
Expr add(Expr a, Expr b);
Expr sub(Expr a, Expr b);
Expr mul(Expr a, Expr b);
Expr div(Expr a, Expr b);
Expr mod(Expr a, Expr b);
Expr neg(Expr a);  // index: -a; float: neg(a), folded on constants
Expr call(Func func, Expr arg);

Expr tensor(std::string_view name, std::vector<int64_t> shape, std::vector<int64_t> pads = {});
Expr access(Expr source, std::vector<Expr> indices);
Expr scope(std::vector<IterRange> loops, std::vector<IterRange> sums, Expr body, std::vector<int64_t> pads = {});

// Validators: empty string when the factory would accept the arguments.
std::string div_error(Expr a, Expr b);
std::string mod_error(Expr a, Expr b);
std::string tensor_error(std::string_view name, const std::vector<int64_t>& shape, const std::vector<int64_t>& pads);
std::string access_error(Expr source, const std::vector<Expr>& indices);
std::string scope_error(const std::vector<IterRange>& loops, const std::vector<IterRange>& sums, Expr body,
                        const std::vector<int64_t>& pads);

// Identifiers of the text form: [A-Za-z_][A-Za-z0-9_]*, not a reserved word.
bool is_valid_name(std::string_view name);

// Number of nodes interned so far (diagnostics and tests).
size_t interned_node_count();

}  // namespace orchid::expr
