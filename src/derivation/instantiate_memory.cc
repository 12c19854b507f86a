// Memory-bound instantiation: accesses become layout primitives (Slice with
// steps, Pad with zeros, Reshape, Transpose, Expand), or a Gather over a
// constant index table when no layout chain expresses them; bodies become
// elementwise primitives; sums are unrolled into terms when small, else
// reduced by ReduceSum.
#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "derivation/analysis.h"
#include "derivation/instantiate_internal.h"
#include "ir/expr_affine.h"
#include "ir/expr_utils.h"
#include "ir/op_traits.h"

namespace orchid::derivation::inst {

using namespace expr;

int64_t num_points(const std::vector<IterRange>& ranges) {
  int64_t n = 1;
  for (const IterRange& r : ranges) n *= std::max<int64_t>(r.extent(), 0);
  return n;
}

std::vector<int64_t> extents_of(const std::vector<IterRange>& ranges) {
  std::vector<int64_t> out;
  for (const IterRange& r : ranges) out.push_back(r.extent());
  return out;
}

namespace {

// The box a source (input tensor or scope) holds: origin and extents.
struct Box {
  std::vector<int64_t> lo, extent;
};

Box box_of(Expr source) {
  Box box;
  if (const auto* t = source->try_as<TensorNode>()) {
    box.lo.assign(t->rank(), 0);
    box.extent = t->shape();
    return box;
  }
  for (const IterRange& r : source->as<ScopeNode>().loops()) {
    box.lo.push_back(r.lo);
    box.extent.push_back(r.extent());
  }
  return box;
}


// One source dimension of a layout-primitive lowering: the slice of the
// source (value coordinates) that is read, the zero padding around it, and
// the target iterators it splits into (outermost first).
struct DimPlan {
  int64_t start = 0, end = 0, step = 1;
  int64_t pad_lo = 0, pad_hi = 0;
  std::vector<size_t> targets;
};

struct LayoutPlan {
  std::vector<int64_t> merged_shape;  // the source reshaped first (div/mod pairs merged)
  std::vector<DimPlan> dims;          // one per merged dimension
  bool all_zero = false;
};

// Plans dimension `index` (value coordinates: box origin subtracted) as a
// mixed-radix group of distinct target iterators whose coefficients share a
// sign (a negative one reverses: Slice with a negative step).
bool plan_dim(Expr index, int64_t origin, int64_t size, const std::vector<IterRange>& targets, std::vector<bool>& used,
              DimPlan& plan, bool& all_zero) {
  AffineForm form = affine_form(index);
  std::vector<std::pair<int64_t, size_t>> terms;  // (coef, target)
  int64_t base = form.constant - origin;
  for (const AffineTerm& t : form.terms) {
    auto it = std::find_if(targets.begin(), targets.end(), [&](const IterRange& r) { return r.iter == t.atom; });
    if (it == targets.end() || used[size_t(it - targets.begin())]) return false;
    if (!terms.empty() && (t.coef > 0) != (terms[0].first > 0)) return false;
    size_t j = size_t(it - targets.begin());
    used[j] = true;
    terms.push_back({t.coef, j});
    base += t.coef * it->lo;
  }
  std::sort(terms.begin(), terms.end(), [](auto& x, auto& y) { return std::abs(x.first) > std::abs(y.first); });
  int64_t points = 1;
  for (size_t i = terms.size(); i-- > 0;) {
    if (i + 1 < terms.size() && terms[i].first != terms[i + 1].first * targets[terms[i + 1].second].extent())
      return false;
    points *= targets[terms[i].second].extent();
  }
  const int64_t step = terms.empty() ? 1 : terms.back().first;
  // Points t in [ta, tb) read inside [0, size): 0 <= base + step*t < size.
  int64_t ta = 0, tb = points;
  if (step > 0) {
    ta = std::max<int64_t>(0, ceil_div_int(-base, step));
    tb = std::min(points, floor_div_int(size - 1 - base, step) + 1);
  } else {
    ta = std::max<int64_t>(0, ceil_div_int(base - size + 1, -step));
    tb = std::min(points, floor_div_int(base, -step) + 1);
  }
  if (ta >= tb) all_zero = true;
  plan.start = base + step * ta;
  plan.end = base + step * (tb - 1) + (step > 0 ? 1 : -1);
  if (plan.end < 0) plan.end = -size - 1;  // through index 0 (ONNX reads -1 as the last)
  plan.step = step;
  plan.pad_lo = ta;
  plan.pad_hi = points - tb;
  for (auto& term : terms) plan.targets.push_back(term.second);
  return true;
}

// Source dimensions k, k+1 read at Q + floor(R/q) and R mod q, with the
// second one's box [0, q), are one dimension of size q * size_k read at
// q*Q + R: the merged index, or nullptr.
Expr merged_divmod_index(Expr first, Expr second, const Box& box, size_t k) {
  const auto* mod = second->try_as<DivModNode>();
  if (!mod || second->kind() != NodeKind::Mod || box.lo[k + 1] != 0 || box.extent[k + 1] != mod->divisor()) {
    return nullptr;
  }
  AffineForm form = affine_form(first);
  Expr floor_atom = floor_div_index(mod->operand(), mod->divisor());
  auto it = std::find_if(form.terms.begin(), form.terms.end(),
                         [&](const AffineTerm& t) { return t.atom == floor_atom && t.coef == 1; });
  if (it == form.terms.end()) return nullptr;
  form.terms.erase(it);
  for (AffineTerm& t : form.terms) t.coef *= mod->divisor();
  form.constant *= mod->divisor();
  form.terms.push_back({1, mod->operand()});
  return make_affine(form);
}

std::optional<LayoutPlan> plan_layout(Expr source, const std::vector<Expr>& indices,
                                      const std::vector<IterRange>& targets) {
  Box box = box_of(source);
  LayoutPlan plan;
  std::vector<bool> used(targets.size(), false);
  for (size_t k = 0; k < indices.size(); ++k) {
    Expr index = indices[k];
    int64_t origin = box.lo[k], size = box.extent[k];
    if (k + 1 < indices.size()) {
      if (Expr merged = merged_divmod_index(indices[k], indices[k + 1], box, k)) {
        index = merged, origin *= box.extent[k + 1], size *= box.extent[k + 1];
        ++k;
      }
    }
    DimPlan dim;
    if (!plan_dim(index, origin, size, targets, used, dim, plan.all_zero)) return std::nullopt;
    plan.dims.push_back(dim);
    plan.merged_shape.push_back(size);
  }
  return plan;
}

ValueId expand_to(Emitter& em, ValueId v, const std::vector<int64_t>& shape) {
  if (em.builder.shape(v) == shape) return v;
  return em.builder.add1("Expand", {v, em.builder.ints(shape)});
}

ValueId emit_layout(Emitter& em, ValueId v, const LayoutPlan& plan, const std::vector<IterRange>& targets,
                    bool broadcast) {
  v = em.builder.reshape(v, plan.merged_shape);
  const Shape shape = em.builder.shape(v);
  std::vector<int64_t> starts, ends, axes, steps, pads(2 * plan.dims.size(), 0), split;
  std::vector<size_t> order;  // target of each split dimension
  for (size_t k = 0; k < plan.dims.size(); ++k) {
    const DimPlan& d = plan.dims[k];
    if (d.start != 0 || d.end != shape[k] || d.step != 1) {
      starts.push_back(d.start), ends.push_back(d.end), axes.push_back(int64_t(k)), steps.push_back(d.step);
    }
    pads[k] = d.pad_lo, pads[k + plan.dims.size()] = d.pad_hi;
    for (size_t j : d.targets) split.push_back(targets[j].extent()), order.push_back(j);
  }
  if (!axes.empty()) v = em.builder.slice(v, starts, ends, axes, steps);
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; })) {
    v = em.builder.add1("Pad", {v, em.builder.ints(pads)});
  }
  v = em.builder.reshape(v, split);
  std::vector<int64_t> perm(order.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) { return order[size_t(x)] < order[size_t(y)]; });
  v = em.builder.transpose(v, perm);
  std::vector<int64_t> full = extents_of(targets), with_ones = full;
  for (size_t j = 0; j < targets.size(); ++j) {
    if (std::find(order.begin(), order.end(), j) == order.end()) with_ones[j] = 1;
  }
  v = em.builder.reshape(v, with_ones);
  return broadcast ? v : expand_to(em, v, full);
}

// Integer value of an index expression at a point of `env`.
int64_t eval_index(Expr e, const std::vector<std::pair<Expr, int64_t>>& env) {
  if (e->is<IterNode>()) {
    for (const auto& [it, v] : env) {
      if (it == e) return v;
    }
    ORCHID_CHECK(false) << "iterator " << e->as<IterNode>().name() << " unbound in instantiation";
  }
  if (const auto* aff = e->try_as<AffineNode>()) {
    int64_t total = aff->constant();
    for (const AffineTerm& t : aff->terms()) total += t.coef * eval_index(t.atom, env);
    return total;
  }
  const auto& dm = e->as<DivModNode>();
  int64_t x = eval_index(dm.operand(), env);
  return e->kind() == NodeKind::FloorDiv ? floor_div_int(x, dm.divisor()) : floor_mod_int(x, dm.divisor());
}

// Calls fn(env) at every point of `targets`, in row-major order.
template <typename Fn>
void for_each_point(const std::vector<IterRange>& targets, Fn fn) {
  if (num_points(targets) == 0) return;
  std::vector<std::pair<Expr, int64_t>> env;
  for (const IterRange& r : targets) env.push_back({r.iter, r.lo});
  while (true) {
    fn(env);
    size_t k = targets.size();
    while (k-- > 0) {
      if (++env[k].second < targets[k].hi) break;
      env[k].second = targets[k].lo;
    }
    if (k == size_t(-1)) return;
  }
}

// General index map: a Gather from the flattened source followed by one
// zero, which every read outside the box indexes.
std::optional<ValueId> emit_gather(Emitter& em, const SourceValue& src, Expr source, const std::vector<Expr>& indices,
                                   const std::vector<IterRange>& targets) {
  if (num_points(targets) > kMaxGatherTable) {
    ORCHID_FAIL() << "general index map over " << num_points(targets) << " points exceeds the gather table limit";
  }
  Box box = box_of(source);
  const int64_t numel = shape_numel(box.extent);
  Tensor table(DType::Int64, extents_of(targets));
  int64_t* out = table.data<int64_t>();
  bool any_inside = false;
  for_each_point(targets, [&](const auto& env) {
    int64_t offset = 0;
    for (size_t k = 0; k < indices.size() && offset >= 0; ++k) {
      int64_t x = eval_index(indices[k], env) - box.lo[k];
      offset = x < 0 || x >= box.extent[k] ? -1 : offset * box.extent[k] + x;
    }
    *out++ = offset < 0 ? numel : offset;
    any_inside |= offset >= 0;
  });
  if (!any_inside) return std::nullopt;
  ValueId flat = em.builder.reshape(src.value, {numel});
  Tensor zero(DType::Float32, {1});
  ValueId padded = em.builder.concat({flat, em.builder.constant(zero)}, 0);
  Attributes attrs;
  attrs.set("axis", int64_t(0));
  return em.builder.add1("Gather", {padded, em.builder.constant(std::move(table))}, std::move(attrs));
}

const SourceValue& source_value(Emitter& em, Expr source) {
  auto it = em.sources.find(source);
  ORCHID_CHECK(it != em.sources.end()) << "source not instantiated before its reader";
  return it->second;
}

}  // namespace

bool access_is_layout(Expr source, const std::vector<Expr>& indices, const std::vector<IterRange>& targets) {
  return plan_layout(source, indices, targets).has_value();
}

std::optional<ValueId> lower_access(Emitter& em, Expr source, const std::vector<Expr>& indices,
                                    const std::vector<IterRange>& targets, bool broadcast) {
  const SourceValue& src = source_value(em, source);
  if (std::optional<LayoutPlan> plan = plan_layout(source, indices, targets)) {
    if (plan->all_zero) return std::nullopt;
    return emit_layout(em, src.value, *plan, targets, broadcast);
  }
  return emit_gather(em, src, source, indices, targets);
}

ValueId lower_access_full(Emitter& em, Expr source, const std::vector<Expr>& indices,
                          const std::vector<IterRange>& targets) {
  if (std::optional<ValueId> v = lower_access(em, source, indices, targets, false)) return *v;
  return em.builder.constant(Tensor(DType::Float32, extents_of(targets)));
}

ValueId to_loop_order(Emitter& em, ValueId value, const std::vector<IterRange>& order,
                      const std::vector<IterRange>& loops) {
  std::vector<int64_t> perm, with_ones;
  for (const IterRange& loop : loops) {
    auto it = std::find(order.begin(), order.end(), loop);
    if (it != order.end()) perm.push_back(int64_t(it - order.begin()));
    with_ones.push_back(it != order.end() ? loop.extent() : 1);
  }
  ORCHID_CHECK(perm.size() == order.size()) << "operator dimensions outside the scope's loops";
  value = em.builder.transpose(value, perm);
  value = em.builder.reshape(value, with_ones);
  return expand_to(em, value, extents_of(loops));
}

namespace {

// A body value over the targets: rank = targets (size 1 where it does not
// vary) or rank 0; nullopt when identically zero.
using Lowered = std::optional<ValueId>;

ValueId index_as_value(Emitter& em, Expr index, const std::vector<IterRange>& targets) {
  if (num_points(targets) > kMaxGatherTable) ORCHID_FAIL() << "index used as a value over too many points";
  Tensor table(DType::Float32, extents_of(targets));
  float* out = table.data<float>();
  for_each_point(targets, [&](const auto& env) { *out++ = float(eval_index(index, env)); });
  return em.builder.constant(std::move(table));
}

Lowered lower_value(Emitter& em, Expr e, const std::vector<IterRange>& targets);

Lowered lower_binary(Emitter& em, const BinaryNode& bin, const std::vector<IterRange>& targets) {
  Lowered x = lower_value(em, bin.lhs(), targets), y = lower_value(em, bin.rhs(), targets);
  switch (bin.op()) {
    case BinaryOp::Add:
      if (!x || !y) return x ? x : y;
      return em.builder.binary("Add", *x, *y);
    case BinaryOp::Sub:
      if (!y) return x;
      if (!x) return em.builder.unary("Neg", *y);
      return em.builder.binary("Sub", *x, *y);
    case BinaryOp::Mul:
      if (!x || !y) return std::nullopt;
      return em.builder.binary("Mul", *x, *y);
    case BinaryOp::Div:
      if (!x) return std::nullopt;  // 0 / y, taking 0 / 0 as 0
      if (!y) ORCHID_FAIL() << "division by an identically zero value";
      return em.builder.binary("Div", *x, *y);
  }
  return std::nullopt;
}

Lowered lower_value(Emitter& em, Expr e, const std::vector<IterRange>& targets) {
  if (const auto* c = e->try_as<ConstNode>()) return em.builder.scalar(c->value(), DType::Float32);
  if (e->is_index()) {
    AffineForm form = affine_form(e);
    if (form.terms.empty()) return em.builder.scalar(double(form.constant), DType::Float32);
    return index_as_value(em, e, targets);
  }
  if (const auto* a = e->try_as<AccessNode>()) return lower_access(em, a->source(), a->indices(), targets, true);
  if (const auto* bin = e->try_as<BinaryNode>()) return lower_binary(em, *bin, targets);
  const auto& call = e->as<CallNode>();
  Lowered arg = lower_value(em, call.arg(), targets);
  if (arg) return em.builder.unary(std::string(op_of_func(call.func())), *arg);
  double at_zero = func_info(call.func()).apply(0.0);
  if (at_zero == 0.0) return std::nullopt;
  return em.builder.scalar(at_zero, DType::Float32);
}

ValueId materialize(Emitter& em, Lowered v, const std::vector<IterRange>& targets) {
  std::vector<int64_t> shape = extents_of(targets);
  if (!v) return em.builder.constant(Tensor(DType::Float32, shape));
  return expand_to(em, *v, shape);
}

// The body with the sum iterators fixed at one point, indices simplified.
Expr term_at(Expr body, const std::vector<std::pair<Expr, int64_t>>& point, const RangeMap& loop_ranges) {
  std::unordered_map<Expr, Expr> fixed;
  for (const auto& [it, v] : point) fixed[it] = integer(v);
  return simplify_indices(substitute(body, fixed), loop_ranges);
}

bool unrolls(const ScopeNode& scope) { return !scope.sums().empty() && num_points(scope.sums()) <= kMaxUnrolledTerms; }

}  // namespace

ValueId emit_memory_scope(Emitter& em, const ScopeNode& scope) {
  const std::vector<IterRange>& loops = scope.loops();
  RangeMap ranges = scope_ranges(scope);
  Expr body = simplify_indices(scope.body(), ranges);
  if (scope.sums().empty()) return materialize(em, lower_value(em, body, loops), loops);
  if (unrolls(scope)) {
    RangeMap loop_ranges;
    for (const IterRange& r : loops) loop_ranges[r.iter] = {r.lo, r.hi};
    Lowered total;
    for_each_point(scope.sums(), [&](const auto& point) {
      Lowered term = lower_value(em, term_at(body, point, loop_ranges), loops);
      if (term) total = total ? em.builder.binary("Add", *total, *term) : *term;
    });
    return materialize(em, total, loops);
  }
  std::vector<IterRange> all = expr::iterators(scope);
  ValueId full = materialize(em, lower_value(em, body, all), all);
  std::vector<int64_t> axes(scope.sums().size());
  std::iota(axes.begin(), axes.end(), int64_t(loops.size()));
  return em.builder.reduce("ReduceSum", full, axes, false);
}

std::string memory_scope_blocker(const ScopeNode& scope) {
  std::vector<IterRange> targets = unrolls(scope) || scope.sums().empty() ? scope.loops() : expr::iterators(scope);
  if (num_points(targets) <= kMaxGatherTable) return "";
  std::vector<const AccessNode*> accesses = accesses_in(scope.body());
  std::unordered_map<Expr, Expr> first_point;  // a representative term
  if (unrolls(scope)) {
    for (const IterRange& r : scope.sums()) first_point[r.iter] = integer(r.lo);
  }
  for (const AccessNode* a : accesses) {
    std::vector<Expr> indices = a->indices();
    for (Expr& index : indices) index = substitute(index, first_point);
    if (!access_is_layout(a->source(), indices, targets)) {
      return "an access needs a general index map over " + std::to_string(num_points(targets)) + " points (limit " +
             std::to_string(kMaxGatherTable) + ")";
    }
  }
  return "";
}

std::string describe_memory_scope(const ScopeNode& scope) {
  if (scope.sums().empty()) return scope.body()->is<AccessNode>() ? "index map" : "elementwise";
  if (unrolls(scope)) return "offset sum (" + std::to_string(num_points(scope.sums())) + " terms)";
  return "reduction over " + std::to_string(num_points(scope.sums())) + " points";
}

}  // namespace orchid::derivation::inst
