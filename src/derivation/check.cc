// Exactness check of derivation rewrites by the reference evaluator (check.h).
#include "derivation/check.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "ir/expr_eval.h"
#include "ir/expr_utils.h"

namespace orchid::derivation {

using namespace expr;

namespace {

void add_random_inputs(Expr e, uint64_t seed, TensorValues& values) {
  for (Expr t : free_tensors(e)) {
    const auto& tensor = t->as<TensorNode>();
    if (values.count(tensor.name())) continue;
    std::seed_seq seq{seed, static_cast<uint64_t>(std::hash<std::string>{}(tensor.name()))};
    std::mt19937_64 rng(seq);
    std::uniform_real_distribution<double> dist(-1, 1);
    DenseTensor dense = DenseTensor::zeros(tensor.shape());
    for (double& v : dense.data) v = dist(rng);
    values.emplace(tensor.name(), std::move(dense));
  }
}

std::string format_point(const std::vector<int64_t>& point) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < point.size(); ++i) out << (i ? ", " : "") << point[i];
  out << "]";
  return out.str();
}

}  // namespace

std::string check_equivalent(Expr before, Expr after, uint64_t seed, double tolerance) {
  const auto& b = before->as<ScopeNode>();
  const auto& a = after->as<ScopeNode>();
  if (a.rank() != b.rank()) return "rank changed from " + std::to_string(b.rank()) + " to " + std::to_string(a.rank());
  TensorValues inputs;
  add_random_inputs(before, seed, inputs);
  add_random_inputs(after, seed, inputs);
  DenseTensor x = evaluate(before, inputs), y = evaluate(after, inputs);
  // Compare over the union of both boxes (each is 0 outside its own).
  std::vector<int64_t> origin, shape;
  for (size_t d = 0; d < b.rank(); ++d) {
    int64_t lo = std::min(b.loops()[d].lo, a.loops()[d].lo), hi = std::max(b.loops()[d].hi, a.loops()[d].hi);
    origin.push_back(lo);
    shape.push_back(hi - lo);
  }
  DenseTensor xu = reframe(x, origin, shape), yu = reframe(y, origin, shape);
  double scale = 1;
  for (double v : xu.data) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < xu.data.size(); ++i) {
    double diff = std::abs(xu.data[i] - yu.data[i]);
    if (diff <= tolerance * scale && !(std::isnan(xu.data[i]) != std::isnan(yu.data[i]))) continue;
    std::vector<int64_t> point(shape.size());
    size_t rest = i;
    for (size_t d = shape.size(); d-- > 0;) {
      point[d] = origin[d] + int64_t(rest % size_t(shape[d]));
      rest /= size_t(shape[d]);
    }
    std::ostringstream out;
    out << "differs at " << format_point(point) << ": " << xu.data[i] << " before, " << yu.data[i] << " after";
    return out.str();
  }
  return "";
}

bool same_loop_box(Expr before, Expr after) {
  const auto& b = before->as<ScopeNode>().loops();
  const auto& a = after->as<ScopeNode>().loops();
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].lo != b[i].lo || a[i].hi != b[i].hi) return false;
  }
  return true;
}

}  // namespace orchid::derivation
