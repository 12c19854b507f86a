// Parser of the expr text form (the printer is expr_printer.h).
//
// Grammar (whitespace and `# comments` to end of line are ignored):
//   program   := decl* expr
//   decl      := 'tensor' NAME '[' ints? ']' ( 'pad' '[' ints? ']' )?
//   scope     := 'L' '<' ranges? '>' ( 'Sum' '<' ranges '>' )? sum
//   ranges    := range ( ',' range )*
//   range     := NAME ':' sint ':' sint ( 'pad' INT )?      half-open [lo, hi)
//   expr      := scope | sum
//   sum       := product ( ( '+' | '-' ) product )*
//   product   := unary ( ( '*' | '/' | '%' ) unary )*
//   unary     := '-' unary | primary
//   primary   := INT | FLOAT | 'inf' | 'nan'
//              | NAME                       an iterator of the enclosing scope
//              | FUNC '(' sum ')'           relu, exp, tanh, sigmoid, sqrt, neg, abs, log, erf
//              | NAME '[' indices? ']'      access to a declared tensor
//              | '{' scope '}' '[' indices? ']'   access to a nested scope
//              | '(' sum ')'
//   indices   := sum ( ',' sum )*
//   ints      := INT ( ',' INT )*         sint := '-'? INT
// An INT literal is an index constant and a FLOAT literal (with '.' or an
// exponent) a float constant. Operators dispatch on operand types as the
// factories in expr.h do: between index expressions + - * build affine
// indices, `/` and `%` by a positive constant are floor division and floor
// modulo; anything involving a float value is float arithmetic.
// Scopes are closed: a body sees only its own scope's iterators.
//
// Errors are orchid::Error with "line L, column C: reason".
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "ir/expr.h"

namespace orchid::expr {

// Tensors known to the parser by name (TensorNodes). Inline declarations add
// to it; redeclaring a name with a different shape or padding is an error.
using TensorTable = std::map<std::string, Expr, std::less<>>;

// Parses a program; its expression is usually a scope. Identifiers at top
// level (outside every scope) must be tensors or functions.
Expr parse(std::string_view text, const TensorTable& tensors = {});

// Like parse, but names outside every scope are free iterators: for open
// body expressions in tests and rules, e.g. "A[h + r - 1] * 2.0".
Expr parse_open(std::string_view text, const TensorTable& tensors = {});

}  // namespace orchid::expr
