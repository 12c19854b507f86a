// Einsum, part of the linear operator family (registered by
// register_linear_ops in linear.cc).
#pragma once

#include <string>
#include <vector>

#include "reference/op_registry.h"

namespace orchid::reference {

void register_einsum_op(OpRegistry& registry);

// A "..." in a parsed einsum term; letters are their character codes.
inline constexpr int kEinsumEllipsis = -1;

// An einsum equation split into terms (whitespace ignored). Shared by the
// reference operator and the Einsum fission rule.
struct EinsumEquation {
  std::vector<std::vector<int>> inputs;  // one term per input
  bool has_output = false;               // false: implicit output (no "->")
  std::string output_text;               // the text after "->"
};

// Parses one term: letters as their character codes, "..." as kEinsumEllipsis.
std::vector<int> parse_einsum_term(const std::string& term);

// Splits `equation` at "->" and ',' and parses every input term.
EinsumEquation parse_einsum_equation(const std::string& equation);

}  // namespace orchid::reference
