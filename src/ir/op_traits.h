// Facts about the operators of the primitive graph, in one table that
// fission, the kernels, code generation, the cost model and derivation read:
// each primitive's class, its arity, which inputs must be constants, what an
// elementwise operator computes on, whether it is transcendental (costly per
// element), and the Expr IR function it is. What a target does with an
// operator (the C++ a renderer writes, the oneDNN algorithm it maps to)
// stays with that target.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "ir/expr.h"

namespace orchid {

// Korch's primitive classes (fission/primitive.h describes each).
enum class PrimitiveKind { Elementwise, Reduce, Layout, Linear, Opaque };

// What an elementwise operator computes: float arithmetic and math
// functions (Add, Exp, Relu, ...), the integer remainder, comparisons
// (numbers to bool), boolean logic, bit operations, float predicates (IsNaN),
// a selection (Where) or a conversion (Cast). None for other classes.
enum class ElementClass { None, Arithmetic, Remainder, Compare, Logic, Bitwise, Predicate, Select, Convert };

struct OpTraits {
  std::string_view op;
  PrimitiveKind kind;
  // Data inputs of an elementwise operator (1, 2, or 3 for Where); 0 for other classes.
  int arity;
  ElementClass element;
  // Costly per element (exponentials, logarithms, trigonometry, erf, pow):
  // worth computing once and storing rather than recomputing.
  bool transcendental;
  // The Expr IR function the operator is, where it is one.
  std::optional<expr::Func> func;
  // Inputs that must be constants for the node to be a primitive (they
  // decide output shapes or index maps), by position; at most 4.
  std::span<const size_t> constant_inputs;
};

// The operator's traits when it is one of the default domain's primitives,
// else nullptr.
const OpTraits* op_traits(std::string_view op);

// The primitive whose Expr function is `func` ("Exp" for Func::Exp).
std::string_view op_of_func(expr::Func func);

// Every primitive, in the table's order.
std::span<const OpTraits> all_op_traits();

}  // namespace orchid
