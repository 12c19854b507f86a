// Reference evaluator: a direct interpretation of the IR, point by point.
#include "ir/expr_eval.h"

#include <algorithm>
#include <unordered_map>

#include "ir/expr_affine.h"
#include "ir/expr_utils.h"

namespace orchid::expr {

DenseTensor DenseTensor::zeros(std::vector<int64_t> shape, std::vector<int64_t> origin) {
  DenseTensor t;
  t.shape = std::move(shape);
  t.origin = std::move(origin);
  t.data.assign(static_cast<size_t>(t.num_elements()), 0.0);
  return t;
}

int64_t DenseTensor::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t DenseTensor::offset_of(std::span<const int64_t> coords) const {
  ORCHID_CHECK(coords.size() == shape.size()) << "rank mismatch: " << coords.size() << " vs " << shape.size();
  int64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t c = coords[d] - (origin.empty() ? 0 : origin[d]);
    if (c < 0 || c >= shape[d]) return -1;
    offset = offset * shape[d] + c;
  }
  return offset;
}

double DenseTensor::at(std::span<const int64_t> coords) const {
  const int64_t offset = offset_of(coords);
  return offset < 0 ? 0.0 : data[static_cast<size_t>(offset)];
}

namespace {

// Advances `point` through the box [lo, hi) in row-major order; false when done.
bool advance(std::vector<int64_t>& point, const std::vector<int64_t>& lo, const std::vector<int64_t>& hi) {
  for (size_t d = point.size(); d-- > 0;) {
    if (++point[d] < hi[d]) return true;
    point[d] = lo[d];
  }
  return false;
}

bool box_empty(const std::vector<int64_t>& lo, const std::vector<int64_t>& hi) {
  for (size_t d = 0; d < lo.size(); ++d) {
    if (lo[d] >= hi[d]) return true;
  }
  return false;
}

// Values of the iterators of the scope being evaluated.
struct Frame {
  std::vector<Expr> iters;
  std::vector<int64_t> values;

  int64_t value_of(Expr iter) const {
    for (size_t i = 0; i < iters.size(); ++i) {
      if (iters[i] == iter) return values[i];
    }
    ORCHID_CHECK(false) << "unbound iterator '" << iter->as<IterNode>().name() << "' during evaluation";
    return 0;
  }
};

class Evaluator {
 public:
  explicit Evaluator(const TensorValues& inputs) : inputs_(inputs) {}

  // Memoized: a nested scope is computed once, however often it is read.
  const DenseTensor& materialize(Expr scope_expr) {
    if (auto it = memo_.find(scope_expr); it != memo_.end()) return it->second;
    DenseTensor result = compute(scope_expr->as<ScopeNode>());
    return memo_.emplace(scope_expr, std::move(result)).first->second;
  }

  const DenseTensor& input(const TensorNode& t) const {
    auto it = inputs_.find(t.name());
    if (it == inputs_.end()) ORCHID_FAIL() << "no value given for input tensor '" << t.name() << "'";
    const DenseTensor& v = it->second;
    const bool zero_origin = std::all_of(v.origin.begin(), v.origin.end(), [](int64_t o) { return o == 0; });
    if (v.shape != t.shape() || !zero_origin || static_cast<int64_t>(v.data.size()) != v.num_elements()) {
      ORCHID_FAIL() << "value of input tensor '" << t.name() << "' does not match its declared shape";
    }
    return v;
  }

 private:
  DenseTensor compute(const ScopeNode& s);
  int64_t index(Expr e, const Frame& f) const;
  double value(Expr e, const Frame& f);
  double read(const AccessNode& a, const Frame& f);

  const TensorValues& inputs_;
  std::unordered_map<Expr, DenseTensor> memo_;
};

DenseTensor Evaluator::compute(const ScopeNode& s) {
  std::vector<int64_t> lo, hi, extents, sum_lo, sum_hi;
  Frame frame;
  for (const IterRange& r : s.loops()) {
    lo.push_back(r.lo);
    hi.push_back(r.hi);
    extents.push_back(r.extent());
    frame.iters.push_back(r.iter);
  }
  for (const IterRange& r : s.sums()) {
    sum_lo.push_back(r.lo);
    sum_hi.push_back(r.hi);
    frame.iters.push_back(r.iter);
  }
  DenseTensor out = DenseTensor::zeros(extents, lo);
  if (box_empty(lo, hi)) return out;
  const bool no_sum = box_empty(sum_lo, sum_hi);
  std::vector<int64_t> point = lo;
  int64_t offset = 0;
  do {
    std::vector<int64_t> sum_point = sum_lo;
    double acc = 0.0;
    if (!no_sum) {
      do {
        frame.values = point;
        frame.values.insert(frame.values.end(), sum_point.begin(), sum_point.end());
        acc += value(s.body(), frame);
      } while (advance(sum_point, sum_lo, sum_hi));
    }
    out.data[static_cast<size_t>(offset++)] = acc;
  } while (advance(point, lo, hi));
  return out;
}

int64_t Evaluator::index(Expr e, const Frame& f) const {
  switch (e->kind()) {
    case NodeKind::Iter: return f.value_of(e);
    case NodeKind::Affine: {
      const auto& a = e->as<AffineNode>();
      int64_t v = a.constant();
      for (const AffineTerm& t : a.terms()) v += t.coef * index(t.atom, f);
      return v;
    }
    case NodeKind::FloorDiv:
      return floor_div_int(index(e->as<DivModNode>().operand(), f), e->as<DivModNode>().divisor());
    case NodeKind::Mod: return floor_mod_int(index(e->as<DivModNode>().operand(), f), e->as<DivModNode>().divisor());
    default: break;
  }
  ORCHID_CHECK(false) << "not an index expression";
  return 0;
}

double Evaluator::value(Expr e, const Frame& f) {
  switch (e->kind()) {
    case NodeKind::Const: return e->as<ConstNode>().value();
    case NodeKind::Binary: {
      const auto& b = e->as<BinaryNode>();
      const double l = value(b.lhs(), f);
      const double r = value(b.rhs(), f);
      switch (b.op()) {
        case BinaryOp::Add: return l + r;
        case BinaryOp::Sub: return l - r;
        case BinaryOp::Mul: return l * r;
        case BinaryOp::Div: return l / r;
      }
      return 0.0;
    }
    case NodeKind::Call: return func_info(e->as<CallNode>().func()).apply(value(e->as<CallNode>().arg(), f));
    case NodeKind::Access: return read(e->as<AccessNode>(), f);
    case NodeKind::Tensor:
    case NodeKind::Scope: break;
    default: return static_cast<double>(index(e, f));
  }
  ORCHID_CHECK(false) << "a tensor or scope is not a scalar value";
  return 0.0;
}

double Evaluator::read(const AccessNode& a, const Frame& f) {
  const DenseTensor& t = a.source()->is<ScopeNode>() ? materialize(a.source()) : input(a.source()->as<TensorNode>());
  int64_t offset = 0;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    const int64_t c = index(a.indices()[d], f) - (t.origin.empty() ? 0 : t.origin[d]);
    if (c < 0 || c >= t.shape[d]) return 0.0;  // zero padding
    offset = offset * t.shape[d] + c;
  }
  return t.data[static_cast<size_t>(offset)];
}

}  // namespace

DenseTensor reframe(const DenseTensor& tensor, std::vector<int64_t> origin, std::vector<int64_t> shape) {
  ORCHID_CHECK(origin.size() == shape.size() && shape.size() == tensor.shape.size()) << "reframe rank mismatch";
  DenseTensor out = DenseTensor::zeros(std::move(shape), std::move(origin));
  std::vector<int64_t> hi(out.shape.size());
  for (size_t d = 0; d < hi.size(); ++d) hi[d] = out.origin[d] + out.shape[d];
  if (box_empty(out.origin, hi)) return out;
  std::vector<int64_t> point = out.origin;
  size_t offset = 0;
  do {
    out.data[offset++] = tensor.at(point);
  } while (advance(point, out.origin, hi));
  return out;
}

DenseTensor evaluate(Expr scope_expr, const TensorValues& inputs) {
  ORCHID_CHECK(scope_expr != nullptr && scope_expr->is<ScopeNode>()) << "evaluate needs a scope";
  Evaluator evaluator(inputs);
  for (Expr t : free_tensors(scope_expr)) evaluator.input(t->as<TensorNode>());  // report bad inputs up front
  return evaluator.materialize(scope_expr);
}

}  // namespace orchid::expr
