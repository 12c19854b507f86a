// Small helpers shared by the loss, recurrent, quantize, signal and detection
// operator families. These operators compute in double for clarity (they are
// the oracle); tensors are read and written through these helpers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor.h"
#include "reference/ops/elementwise_utils.h"
#include "support/error.h"

namespace orchid::reference::extra {

// A tensor's elements as doubles.
inline std::vector<double> f64(const Tensor& t) { return t.to_f64_vector(); }

// A tensor of `type` holding `values` (converted with set_f64, which rounds to
// the storage type).
inline Tensor make_tensor(const TensorType& type, const std::vector<double>& values) {
  Tensor out(type);
  ORCHID_CHECK(int64_t(values.size()) == out.numel()) << "value count " << values.size() << " != " << out.numel();
  for (size_t i = 0; i < values.size(); ++i) out.set_f64(int64_t(i), values[i]);
  return out;
}

// Requires an attribute string value to be one of `allowed`.
inline std::string string_choice(const Attributes& attrs, const std::string& name, const std::string& fallback,
                                 const std::vector<std::string>& allowed) {
  std::string value = attrs.get_string(name, fallback);
  for (const auto& a : allowed) {
    if (a == value) return value;
  }
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  ORCHID_FAIL() << "attribute '" << name << "' must be one of " << list << ", got '" << value << "'";
}

// Requires a tensor's rank.
inline void require_rank(const TensorType& type, size_t rank, size_t index, const char* name) {
  if (type.rank() != rank) {
    ORCHID_FAIL() << "input " << index << " (" << name << ") must have rank " << rank << ", got shape "
                  << shape_to_string(type.shape);
  }
}

}  // namespace orchid::reference::extra
