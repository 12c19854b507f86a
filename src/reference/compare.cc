#include "reference/compare.h"

#include <cmath>
#include <sstream>

namespace orchid::reference {

namespace {

std::string index_string(const Shape& shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::ostringstream text;
  text << "[";
  for (size_t d = 0; d < index.size(); ++d) text << (d ? "," : "") << index[d];
  text << "]";
  return text.str();
}

// Called only for unequal values that are not both NaN. A NaN or an infinity
// on either side is then a mismatch: with an infinite expected value the
// tolerance atol + rtol * |e| would be infinite and accept anything.
bool within_tolerance(double actual, double expected, double rtol, double atol) {
  if (!std::isfinite(actual) || !std::isfinite(expected)) return false;
  return std::fabs(actual - expected) <= atol + rtol * std::fabs(expected);
}

}  // namespace

Comparison compare_tensors(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  Comparison result;
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    result.ok = false;
    result.mismatch = "got " + actual.type().to_string() + ", expected " + expected.type().to_string();
    return result;
  }
  bool floating = is_float(actual.dtype());
  for (int64_t i = 0; i < actual.numel(); ++i) {
    double a = actual.at_f64(i);
    double e = expected.at_f64(i);
    if (!floating) {
      // Exact for integers; at_i64 avoids double rounding of large int64.
      if (actual.at_i64(i) == expected.at_i64(i)) continue;
    } else if ((std::isnan(a) && std::isnan(e)) || a == e) {
      continue;
    }
    double abs_error = std::fabs(a - e);
    if (std::isnan(abs_error)) abs_error = INFINITY;
    result.max_abs_error = std::max(result.max_abs_error, abs_error);
    if (e != 0) result.max_rel_error = std::max(result.max_rel_error, abs_error / std::fabs(e));
    if (!floating || !within_tolerance(a, e, rtol, atol)) {
      if (result.ok) {
        std::ostringstream text;
        text << "at " << index_string(actual.shape(), i) << ": got " << a << ", expected " << e;
        result.mismatch = text.str();
      }
      result.ok = false;
    }
  }
  return result;
}

}  // namespace orchid::reference
