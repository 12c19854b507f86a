// OLLIE's iterator mapping table and the operator patterns matched against it
// (iterator_table.h). A pattern assigns every iterator a role from the
// operands it appears in; a failed match names the iterators that do not fit
// and the rule that would move the scope towards the pattern.
#include "derivation/iterator_table.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/expr_affine.h"
#include "ir/expr_utils.h"

namespace orchid::derivation {

using namespace expr;

namespace {

// Splits a product into its factors, folding constants (and negation) into
// *scale. False when the body is not a product.
void collect_factors(Expr e, std::vector<Expr>& factors, double& scale) {
  if (const auto* bin = e->try_as<BinaryNode>()) {
    if (bin->op() == BinaryOp::Mul) {
      collect_factors(bin->lhs(), factors, scale);
      collect_factors(bin->rhs(), factors, scale);
      return;
    }
    if (bin->op() == BinaryOp::Div && bin->rhs()->is<ConstNode>()) {
      collect_factors(bin->lhs(), factors, scale);
      scale /= bin->rhs()->as<ConstNode>().value();
      return;
    }
  }
  if (const auto* c = e->try_as<ConstNode>()) {
    scale *= c->value();
    return;
  }
  if (const auto* call = e->try_as<CallNode>(); call && call->func() == Func::Neg) {
    scale = -scale;
    collect_factors(call->arg(), factors, scale);
    return;
  }
  factors.push_back(e);
}

bool mentions(Expr index, Expr iter) {
  if (index == iter) return true;
  if (const auto* dm = index->try_as<DivModNode>()) return mentions(dm->operand(), iter);
  if (const auto* aff = index->try_as<AffineNode>()) {
    for (const AffineTerm& t : aff->terms()) {
      if (mentions(t.atom, iter)) return true;
    }
  }
  return false;
}

// How an iterator occurs in one index dimension of an operand: alone means
// the dimension's index is coef * iter + constant.
struct Occurrence {
  size_t dim = 0;
  int64_t coef = 0;  // 0 when it occurs inside a div/mod
  bool alone = false;
};

std::vector<Occurrence> occurrences(const AccessNode& x, Expr iter) {
  std::vector<Occurrence> out;
  for (size_t d = 0; d < x.indices().size(); ++d) {
    Expr index = x.indices()[d];
    if (!mentions(index, iter)) continue;
    AffineForm form = affine_form(index);
    Occurrence occ{d, coefficient_of(index, iter), false};
    occ.alone = form.terms.size() == 1 && form.terms[0].atom == iter;
    out.push_back(occ);
  }
  return out;
}

bool all_alone(const std::vector<Occurrence>& occs) {
  return std::all_of(occs.begin(), occs.end(), [](const Occurrence& o) { return o.alone; });
}

std::string iter_name(Expr iter) { return iter->as<IterNode>().name(); }

// The names of the iterators in dimension `dim` of `x` other than `iter`.
std::string others_in_dim(const AccessNode& x, size_t dim, Expr iter) {
  std::string names;
  for (Expr other : free_iterators(x.indices()[dim])) {
    if (other == iter) continue;
    names += (names.empty() ? "" : ", ") + iter_name(other);
  }
  return names.empty() ? "a div/mod" : names;
}

// What a pattern attempt reports when it fails.
struct Mismatch {
  std::vector<std::string> iters;
  std::string why;
};

// The scope's two factors and every iterator with its range.
struct Operands {
  const AccessNode* a = nullptr;
  const AccessNode* b = nullptr;
  double scale = 1;
  std::vector<IterRange> loops, sums;
};

std::optional<Operands> operands_of(const ScopeNode& scope, bool drop_units) {
  std::vector<Expr> factors;
  Operands ops;
  collect_factors(scope.body(), factors, ops.scale);
  if (factors.size() != 2 || !factors[0]->is<AccessNode>() || !factors[1]->is<AccessNode>()) return std::nullopt;
  // With drop_units, iterators of extent 1 are constants: they take no
  // operator role (a unit loop is a broadcast of extent 1, a unit sum no sum
  // at all).
  std::unordered_map<Expr, Expr> unit;
  for (const IterRange& r : iterators(scope)) {
    if (drop_units && r.extent() == 1) unit[r.iter] = integer(r.lo);
  }
  for (Expr& f : factors) f = unit.empty() ? f : substitute(f, unit);
  ops.a = &factors[0]->as<AccessNode>();
  ops.b = &factors[1]->as<AccessNode>();
  ops.loops = scope.loops();
  for (const IterRange& r : scope.sums()) {
    if (!unit.count(r.iter)) ops.sums.push_back(r);
  }
  return ops;
}

Operands swapped(Operands ops) {
  std::swap(ops.a, ops.b);
  return ops;
}

LinearMatch match_base(LinearOp op, const Operands& ops) {
  LinearMatch m;
  m.op = op;
  m.a = ops.a;
  m.b = ops.b;
  m.scale = ops.scale;
  return m;
}

Mismatch fail(const IterRange& r, std::string why) { return Mismatch{{r.name()}, r.name() + " " + std::move(why)}; }

// ---- MatMul: roles by operand membership; an index dimension may combine
// iterators of one role (a layout of that operator dimension), not of two.

enum class Role { Batch, Rows, Cols, Reduce, Broadcast, Invalid };

Role matmul_role(const Operands& ops, Expr iter, bool is_sum) {
  bool in_a = !occurrences(*ops.a, iter).empty(), in_b = !occurrences(*ops.b, iter).empty();
  if (is_sum) return in_a && in_b ? Role::Reduce : Role::Invalid;
  return in_a && in_b ? Role::Batch : in_a ? Role::Rows : in_b ? Role::Cols : Role::Broadcast;
}

// Every dimension of `x` that mixes iterators of different roles (one row
// each: guided derivation counts them, so fixing one dimension shows).
void mixed_roles(const AccessNode& x, const char* operand, const std::map<Expr, Role>& roles, Mismatch& out) {
  for (size_t d = 0; d < x.indices().size(); ++d) {
    std::vector<Expr> iters = free_iterators(x.indices()[d]);
    bool has_divmod = false;
    for (const AffineTerm& t : affine_form(x.indices()[d]).terms) has_divmod |= !t.atom->is<IterNode>();
    for (Expr it : iters) {
      if (roles.at(it) == roles.at(iters[0]) && !has_divmod) continue;
      out.iters.push_back(iter_name(iters[0]));
      out.why += (out.why.empty() ? "" : ", ") + iter_name(iters[0]) + " combined with " +
                 others_in_dim(x, d, iters[0]) + " in " + operand + ": substitute";
      break;
    }
  }
}

std::optional<LinearMatch> try_matmul(const Operands& ops, Mismatch& why) {
  LinearMatch m = match_base(LinearOp::MatMul, ops);
  std::map<Expr, Role> roles;
  for (const auto& [ranges, is_sum] : {std::pair{&ops.loops, false}, std::pair{&ops.sums, true}}) {
    for (const IterRange& r : *ranges) roles[r.iter] = matmul_role(ops, r.iter, is_sum);
  }
  Mismatch mixed;
  for (auto [x, name] : {std::pair{ops.a, "A"}, std::pair{ops.b, "B"}}) mixed_roles(*x, name, roles, mixed);
  if (!mixed.iters.empty()) return why = mixed, std::nullopt;
  for (const IterRange& r : ops.loops) {
    Role role = roles[r.iter];
    (role == Role::Batch  ? m.batch
     : role == Role::Rows ? m.rows
     : role == Role::Cols ? m.cols
                          : m.broadcast)
        .push_back(r);
  }
  for (const IterRange& r : ops.sums) {
    if (roles[r.iter] == Role::Invalid) {
      bool in_a = !occurrences(*ops.a, r.iter).empty(), in_b = !occurrences(*ops.b, r.iter).empty();
      return why = fail(r, std::string("sum iterator only in ") +
                               (in_a   ? "A"
                                : in_b ? "B"
                                       : "no operand") +
                               ": not a pattern"),
             std::nullopt;
    }
    m.reduce.push_back(r);
  }
  if (m.reduce.empty()) return why = Mismatch{{}, "no iterator summed over both operands"}, std::nullopt;
  return m;
}

// ---- Conv: A's spatial dims are stride*o + dilation*t + c with o a loop
// iterator only in A and t a sum iterator alone in B.

std::optional<ConvSpatial> spatial_dim(const Operands& ops, size_t dim, Mismatch& why) {
  AffineForm form = affine_form(ops.a->indices()[dim]);
  auto range_of = [&](Expr it, bool sum) -> std::optional<IterRange> {
    for (const IterRange& r : sum ? ops.sums : ops.loops) {
      if (r.iter == it) return r;
    }
    return std::nullopt;
  };
  ConvSpatial s{};
  s.a_dim = dim;
  bool have_out = false, have_tap = false;
  for (const AffineTerm& t : form.terms) {
    if (!t.atom->is<IterNode>())
      return why = Mismatch{{}, "div/mod in A dimension " + std::to_string(dim)}, std::nullopt;
    if (auto out = range_of(t.atom, false); out && !have_out && t.coef > 0 && occurrences(*ops.b, t.atom).empty()) {
      s.out = *out, s.stride = t.coef, have_out = true;
    } else if (auto tap = range_of(t.atom, true); tap && !have_tap && t.coef > 0) {
      s.tap = *tap, s.dilation = t.coef, have_tap = true;
    } else {
      return why = Mismatch{{iter_name(t.atom)},
                            iter_name(t.atom) +
                                " in a spatial dimension of A is neither an "
                                "output position nor a tap"},
             std::nullopt;
    }
  }
  if (!have_out || !have_tap)
    return why = Mismatch{{}, "A dimension " + std::to_string(dim) + " is not o + t"}, std::nullopt;
  return s;
}

// The range of `iter` among `ranges`, or nullptr.
const IterRange* find_range(const std::vector<IterRange>& ranges, Expr iter) {
  for (const IterRange& r : ranges) {
    if (r.iter == iter) return &r;
  }
  return nullptr;
}

// A grouped Conv's channel dimension of A: g*C + c (+ a constant), g a loop
// iterator that B reads too (the group), c a sum iterator of extent C (the
// channel within the group): the operand lays out as [g, c] (a mixed-radix
// pair), like a plain channel.
bool is_group_channel_dim(const Operands& ops, size_t dim) {
  AffineForm form = affine_form(ops.a->indices()[dim]);
  if (form.terms.size() != 2) return false;
  const AffineTerm* group = nullptr;
  const AffineTerm* channel = nullptr;
  const IterRange* channel_range = nullptr;
  for (const AffineTerm& t : form.terms) {
    if (!t.atom->is<IterNode>() || occurrences(*ops.b, t.atom).empty()) return false;
    if (find_range(ops.loops, t.atom)) {
      group = &t;
    } else if (const IterRange* sum = find_range(ops.sums, t.atom); sum && t.coef == 1) {
      channel = &t, channel_range = sum;
    }
  }
  if (!group || !channel || group->coef != channel_range->extent()) return false;
  // B reads the channel alone, apart from the group (K[g*M + f, c, ...]):
  // not a tap split as 3*r1 + r2 on both sides.
  std::vector<Occurrence> channel_in_b = occurrences(*ops.b, channel->atom);
  if (!all_alone(channel_in_b)) return false;
  for (const Occurrence& o : occurrences(*ops.b, group->atom)) {
    if (std::any_of(channel_in_b.begin(), channel_in_b.end(), [&](const Occurrence& c) { return c.dim == o.dim; })) {
      return false;
    }
  }
  return true;
}

// Which dimensions of A are group channel dimensions (is_group_channel_dim).
std::vector<bool> group_channel_dims(const Operands& ops) {
  std::vector<bool> dims(ops.a->indices().size());
  for (size_t d = 0; d < dims.size(); ++d) dims[d] = is_group_channel_dim(ops, d);
  return dims;
}

// B reads a group once: alone in a dimension of its own (a depthwise Conv,
// with a multiplier when B has output channels elsewhere) or as g*M + f with
// f the group's output channels (K[g*M + f, c, ...]). Anything else (a tap
// read by both operands, B[.., s + w - 2]) is not a Conv, and its mismatch
// guides derivation on: matching those sent the Conv5x5 -> Conv3x3 pieces
// search astray.
bool reads_group_as_output_channel(const Operands& ops, const LinearMatch& m, const IterRange& g) {
  std::vector<Occurrence> in_b = occurrences(*ops.b, g.iter);
  if (in_b.size() != 1 || in_b[0].coef <= 0) return false;
  if (in_b[0].alone) return true;
  AffineForm form = affine_form(ops.b->indices()[in_b[0].dim]);
  if (form.terms.size() != 2 || form.constant != 0) return false;
  for (const AffineTerm& t : form.terms) {
    if (t.atom == g.iter) continue;
    const IterRange* f = find_range(m.cols, t.atom);
    if (!f || t.coef != 1 || f->lo != 0 || in_b[0].coef != f->extent()) return false;
  }
  return true;
}

// The role of a non-spatial iterator in a Conv; false on mismatch. A loop
// iterator in both operands is a group (a grouped or depthwise Conv).
// `grouped` marks A's group channel dimensions (group_channel_dims).
bool conv_role(const Operands& ops, const std::vector<bool>& grouped, const IterRange& r, bool is_sum, LinearMatch& m,
               Mismatch& why) {
  std::vector<Occurrence> oa = occurrences(*ops.a, r.iter), ob = occurrences(*ops.b, r.iter);
  const bool alone_or_grouped = std::all_of(
      oa.begin(), oa.end(), [&](const Occurrence& o) { return o.alone || (o.coef > 0 && grouped[o.dim]); });
  if (!alone_or_grouped)
    return why = fail(r,
                      "combined with other iterators in A outside a spatial "
                      "dimension"),
           false;
  bool in_a = !oa.empty(), in_b = !ob.empty();
  if (is_sum) {
    if (!(in_a && in_b)) return why = fail(r, "sum iterator not in both operands: not a channel"), false;
    m.reduce.push_back(r);
    return true;
  }
  if (in_a && in_b) {
    if (oa.size() != 1) return why = fail(r, "a group read in more than one dimension of A"), false;
    m.groups.push_back(r);
    return true;
  }
  (in_a ? m.batch : in_b ? m.cols : m.broadcast).push_back(r);
  return true;
}

std::optional<LinearMatch> try_conv(const Operands& ops, Mismatch& why) {
  LinearMatch m = match_base(LinearOp::Conv, ops);
  std::set<Expr> spatial_iters;
  // Every spatial dimension is checked, so the mismatch lists each one that
  // needs a rewrite (guided derivation sees one fixed).
  Mismatch bad_dims;
  const std::vector<bool> grouped = group_channel_dims(ops);
  for (size_t d = 0; d < ops.a->indices().size(); ++d) {
    if (affine_form(ops.a->indices()[d]).terms.size() < 2 || grouped[d]) continue;
    Mismatch one;
    std::optional<ConvSpatial> s = spatial_dim(ops, d, one);
    if (!s) {
      bad_dims.iters.insert(bad_dims.iters.end(), one.iters.begin(), one.iters.end());
      if (one.iters.empty()) bad_dims.iters.push_back("A" + std::to_string(d));
      bad_dims.why += (bad_dims.why.empty() ? "" : ", ") + one.why;
      continue;
    }
    if (!spatial_iters.insert(s->out.iter).second || !spatial_iters.insert(s->tap.iter).second ||
        occurrences(*ops.a, s->out.iter).size() != 1 || occurrences(*ops.a, s->tap.iter).size() != 1 ||
        occurrences(*ops.b, s->tap.iter).empty()) {
      return why = Mismatch{{s->out.name(), s->tap.name()}, "spatial iterators reused or tap not in B"}, std::nullopt;
    }
    m.spatial.push_back(*s);
  }
  if (!bad_dims.iters.empty()) return why = bad_dims, std::nullopt;
  if (m.spatial.empty()) return why = Mismatch{{}, "no spatial dimension o + t in A"}, std::nullopt;
  for (const IterRange& r : ops.loops) {
    if (!spatial_iters.count(r.iter) && !conv_role(ops, grouped, r, false, m, why)) return std::nullopt;
  }
  for (const IterRange& r : ops.sums) {
    if (!spatial_iters.count(r.iter) && !conv_role(ops, grouped, r, true, m, why)) return std::nullopt;
  }
  for (const IterRange& g : m.groups) {
    if (!reads_group_as_output_channel(ops, m, g)) {
      return why = fail(g, "in both operands: not a grouped conv's group (not B's output channel g*M + f)"), std::nullopt;
    }
  }
  return m;
}

// ---- G2BMM / GBMM: B has one dimension m + d*w + c, m a loop iterator alone
// in A; w a loop iterator (G2BMM) or a sum iterator alone in A (GBMM).

std::optional<LinearMatch> try_banded(LinearOp op, const Operands& ops, Mismatch& why) {
  const bool g2bmm = op == LinearOp::G2BMM;
  LinearMatch m = match_base(op, ops);
  std::optional<size_t> band_dim;
  const IterRange *row = nullptr, *band = nullptr;
  for (size_t d = 0; d < ops.b->indices().size(); ++d) {
    AffineForm form = affine_form(ops.b->indices()[d]);
    if (form.terms.size() < 2) continue;
    if (band_dim || form.terms.size() != 2)
      return why = Mismatch{{}, "B needs exactly one dimension m + d*w"}, std::nullopt;
    band_dim = d;
    for (int first = 0; first < 2 && !row; ++first) {
      const AffineTerm &tm = form.terms[first], &tw = form.terms[1 - first];
      const IterRange* rm = find_range(ops.loops, tm.atom);
      const IterRange* rw = find_range(g2bmm ? ops.loops : ops.sums, tw.atom);
      bool w_in_a = !occurrences(*ops.a, tw.atom).empty();
      if (tm.coef == 1 && tw.coef > 0 && rm && rw && w_in_a != g2bmm) row = rm, band = rw, m.dilation = tw.coef;
    }
  }
  if (!band_dim || !row) return why = Mismatch{{}, "no dimension m + d*w in B"}, std::nullopt;
  m.b_band_dim = *band_dim;
  m.band = *band;
  m.rows = {*row};
  for (const IterRange* r : {row, band}) {
    std::vector<Occurrence> oa = occurrences(*ops.a, r->iter);
    bool in_a_ok = r == band && g2bmm ? oa.empty() : (oa.size() == 1 && oa[0].alone && oa[0].coef == 1);
    if (!in_a_ok || occurrences(*ops.b, r->iter).size() != 1)
      return why = fail(*r, "not alone once in A"), std::nullopt;
  }
  for (const auto& [ranges, is_sum] : {std::pair{&ops.loops, false}, std::pair{&ops.sums, true}}) {
    for (const IterRange& r : *ranges) {
      if (r.iter == row->iter || r.iter == band->iter) continue;
      std::vector<Occurrence> oa = occurrences(*ops.a, r.iter), ob = occurrences(*ops.b, r.iter);
      if (!all_alone(oa) || !all_alone(ob)) return why = fail(r, "combined with other iterators"), std::nullopt;
      bool in_a = !oa.empty(), in_b = !ob.empty();
      if (!is_sum && in_a && in_b)
        m.batch.push_back(r);
      else if (!is_sum && !in_a && !in_b)
        m.broadcast.push_back(r);
      else if (g2bmm && is_sum && in_a && in_b)
        m.reduce.push_back(r);
      else if (!g2bmm && !is_sum && in_b && !in_a)
        m.cols.push_back(r);
      else
        return why = fail(r, "has no role in " + std::string(linear_op_name(op))), std::nullopt;
    }
  }
  return m;
}

void append(Mismatch& total, const char* pattern, const Mismatch& one) {
  for (const std::string& it : one.iters) {
    if (std::find(total.iters.begin(), total.iters.end(), it) == total.iters.end()) total.iters.push_back(it);
  }
  total.why += (total.why.empty() ? "" : "; ") + std::string(pattern) + ": " + one.why;
}

}  // namespace

std::optional<IteratorTable> iterator_table(const ScopeNode& scope) {
  std::optional<Operands> ops = operands_of(scope, false);
  if (!ops) return std::nullopt;
  IteratorTable table;
  table.a = ops->a;
  table.b = ops->b;
  table.scale = ops->scale;
  for (const auto& [ranges, is_sum] : {std::pair{&ops->loops, false}, std::pair{&ops->sums, true}}) {
    for (const IterRange& r : *ranges) {
      IteratorRow row;
      row.iter = r.iter;
      row.range = {r.lo, r.hi};
      row.is_sum = is_sum;
      std::vector<Occurrence> oa = occurrences(*ops->a, r.iter), ob = occurrences(*ops->b, r.iter);
      row.in_a = !oa.empty();
      row.in_b = !ob.empty();
      row.combined_a = !all_alone(oa);
      row.combined_b = !all_alone(ob);
      table.rows.push_back(row);
    }
  }
  return table;
}

const char* linear_op_name(LinearOp op) {
  switch (op) {
    case LinearOp::MatMul:
      return "MatMul";
    case LinearOp::Conv:
      return "Conv";
    case LinearOp::G2BMM:
      return "G2BMM";
    case LinearOp::GBMM:
      return "GBMM";
  }
  return "?";
}

std::optional<LinearMatch> match_operands(const ScopeNode& scope, bool drop_units, PatternMatch* report);

// Matches with every iterator in its role, or, failing that, with the
// iterators of extent 1 taken as constants (a unit dimension left by a
// reshape must not hide a G2BMM).
std::optional<LinearMatch> match_linear(const ScopeNode& scope, PatternMatch* report) {
  if (std::optional<LinearMatch> m = match_operands(scope, false, report)) return m;
  PatternMatch ignored;
  return match_operands(scope, true, &ignored);
}

std::optional<LinearMatch> match_operands(const ScopeNode& scope, bool drop_units, PatternMatch* report) {
  std::optional<Operands> ops = operands_of(scope, drop_units);
  if (!ops) {
    if (report) report->why_not = "body is not a product of two accesses";
    return std::nullopt;
  }
  Mismatch total;
  size_t rows = 0;
  auto attempt = [&](LinearOp op, const Operands& o, Mismatch& why) {
    return op == LinearOp::MatMul ? try_matmul(o, why)
           : op == LinearOp::Conv ? try_conv(o, why)
                                  : try_banded(op, o, why);
  };
  for (LinearOp op : {LinearOp::MatMul, LinearOp::Conv, LinearOp::G2BMM, LinearOp::GBMM}) {
    Mismatch first, second;
    if (auto m = attempt(op, *ops, first)) return m;
    if (op != LinearOp::MatMul) {
      if (auto m = attempt(op, swapped(*ops), second)) return m;
    }
    append(total, linear_op_name(op), first);
    rows += std::max<size_t>(first.iters.size(), 1);
  }
  if (report) {
    report->pattern_rows = rows;
    report->mismatched_iters = total.iters;
    report->why_not = total.why;
  }
  return std::nullopt;
}

PatternMatch match_operator(const ScopeNode& scope) {
  PatternMatch result;
  if (std::optional<LinearMatch> m = match_linear(scope, &result)) result.op = m->op;
  return result;
}

}  // namespace orchid::derivation
