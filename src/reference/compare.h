// Element-wise comparison of an actual tensor against an expected one, as the
// ONNX backend tests do: |actual - expected| <= atol + rtol * |expected|.
#pragma once

#include <string>

#include "ir/tensor.h"

namespace orchid::reference {

struct Comparison {
  bool ok = true;
  double max_abs_error = 0;  // over all elements
  double max_rel_error = 0;  // |a - e| / |e| over elements with e != 0
  std::string mismatch;      // the first failure, for the report; empty when ok
};

// NaN matches only NaN and an infinity only the same infinity, whatever the
// tolerances; integers and booleans must be equal. Dtype and shape must agree.
Comparison compare_tensors(const Tensor& actual, const Tensor& expected, double rtol, double atol);

}  // namespace orchid::reference
