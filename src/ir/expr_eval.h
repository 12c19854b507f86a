// Reference evaluator of the expr IR: slow, simple, obviously correct; the
// oracle for derivation rules. Semantics as documented in expr.h.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "ir/expr.h"

namespace orchid::expr {

// A dense row-major tensor of doubles over the box [origin, origin + shape).
// Reads outside the box are 0, matching the IR's zero-padding semantics.
struct DenseTensor {
  std::vector<int64_t> shape;
  std::vector<int64_t> origin;  // coordinates of the first element; empty means all zeros
  std::vector<double> data;

  static DenseTensor zeros(std::vector<int64_t> shape, std::vector<int64_t> origin = {});
  int64_t num_elements() const;
  // Row-major offset of absolute coordinates, or -1 outside the box.
  int64_t offset_of(std::span<const int64_t> coords) const;
  double at(std::span<const int64_t> coords) const;
};

// The same values over another box: copied where the boxes overlap, 0 elsewhere.
DenseTensor reframe(const DenseTensor& tensor, std::vector<int64_t> origin, std::vector<int64_t> shape);

// Input values by tensor name; each must have origin 0 and the declared shape.
using TensorValues = std::map<std::string, DenseTensor, std::less<>>;

// Evaluates a scope. The result covers the scope's loop box: shape = extents,
// origin = lower bounds. Nested scopes are evaluated once each. A missing or
// mis-shaped input is an orchid::Error.
DenseTensor evaluate(Expr scope, const TensorValues& inputs);

}  // namespace orchid::expr
