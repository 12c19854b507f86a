// The text form of the expr IR (grammar in expr_parser.h). Printing is
// canonical: equal nodes print equal text, and parse(print_program(e)) == e.
#pragma once

#include <string>

#include "ir/expr.h"

namespace orchid::expr {

// The expression alone; tensors appear by name. Parse it back with a tensor
// table (expr_parser.h).
std::string to_string(Expr e);

// A self-contained program: one `tensor NAME[dims]` line per input tensor (in
// first-appearance order, with ` pad [..]` when padded), then the expression.
// Two different tensors with the same name cannot be printed this way.
std::string print_program(Expr e);

}  // namespace orchid::expr
