// Derivation rules: variable substitution (rules/rules.h).
//
//  loop_substitute  a child scope C's loop iterator x is replaced by
//                   t = e, where e is the loop part of an affine access
//                   index of C's body (its terms over C's loop iterators
//                   and its constant) containing x with coefficient +-1 and
//                   other loop iterators of C (OLLIE's (h, r) -> (t = h +
//                   r - 1, r); h + 3*k + q - 2 with q summed gives t = h +
//                   3*k - 2 and leaves t + q).
//                   Acts on the parent S: C becomes C' and every access
//                   C[i] in S's body becomes C'[..., e(i), ...].
//  sum_split_iter   a Sum iterator r in [lo, hi) becomes p*k + q + lo with
//                   k in [0, ceil(R/p)), q in [0, p): a bijection of the
//                   range, relaxed past hi when p does not divide R and the
//                   added terms are 0. Only iterators sharing an index with
//                   another iterator (taps) are split; p is 2, 3 or a
//                   coefficient of the body's indices.
//  sum_substitute   a Sum iterator i combined with a loop iterator x as
//                   c*(x - i) becomes j = x - i over the range where the
//                   body can be nonzero (col2im as a short sum over taps).
#include <algorithm>
#include <optional>
#include <utility>
#include <string>
#include <unordered_map>

#include "derivation/analysis.h"
#include "derivation/rules/rules.h"
#include "ir/expr_affine.h"
#include "ir/expr_printer.h"
#include "ir/expr_utils.h"

namespace orchid::derivation::rules {

namespace {

using namespace expr;

// Whether `it` appears in an index together with another iterator.
bool combined_somewhere(Expr it, const std::vector<Expr>& indices) {
  for (Expr i : indices) {
    std::vector<Expr> free = free_iterators(i);
    if (free.size() > 1 && std::find(free.begin(), free.end(), it) != free.end()) return true;
  }
  return false;
}

bool is_loop_of(Expr it, const ScopeNode& scope) {
  for (const IterRange& r : scope.loops()) {
    if (r.iter == it) return true;
  }
  return false;
}

// The loop part of an index: its terms over loop iterators of `scope` plus
// its constant, dropping terms over the scope's sum iterators (h + 3*k + q - 2
// with q summed gives h + 3*k - 2: the substitution then leaves t + q).
// nullopt when a term is neither (a div/mod atom).
std::optional<Expr> loop_part(Expr e, const ScopeNode& scope) {
  AffineForm form = affine_form(e), loops{{}, form.constant};
  for (const AffineTerm& t : form.terms) {
    if (!t.atom->is<IterNode>()) return std::nullopt;
    if (is_loop_of(t.atom, scope)) loops.terms.push_back(t);
  }
  return make_affine(loops);
}

// Whether `e` is sum(coef * loop iterator of `scope`) + constant, with `x`
// at coefficient +-1 and at least one other iterator.
bool substitutable(Expr e, Expr x, const ScopeNode& scope) {
  AffineForm form = affine_form(e);
  if (form.terms.size() < 2) return false;
  bool has_x = false;
  for (const AffineTerm& t : form.terms) {
    if (!t.atom->is<IterNode>() || !is_loop_of(t.atom, scope)) return false;
    if (t.atom == x) has_x = t.coef == 1 || t.coef == -1;
  }
  return has_x;
}

class LoopSubstitute final : public Rule {
 public:
  std::string_view name() const override { return "loop_substitute"; }

  std::vector<Rewrite> apply(const RuleSite& site) const override {
    const auto& s = site.scope->as<ScopeNode>();
    RangeMap ranges = scope_ranges(s);
    std::vector<Rewrite> out;
    for (Expr child : direct_children(s.body())) {
      // Outside its box C' differs from C (C is 0 there), so S may read C
      // only inside the box.
      if (!accesses_within_box(s.body(), child, ranges)) continue;
      const auto& c = child->as<ScopeNode>();
      std::vector<Expr> indices = access_indices(c.body()), candidates;
      for (Expr e : indices) {
        std::optional<Expr> part = loop_part(e, c);
        if (part && std::find(candidates.begin(), candidates.end(), *part) == candidates.end()) {
          candidates.push_back(*part);
        }
      }
      indices = candidates;
      for (size_t pos = 0; pos < c.loops().size(); ++pos) {
        for (Expr e : indices) {
          if (!substitutable(e, c.loops()[pos].iter, c)) continue;
          if (auto rw = substitute_loop(site.scope, child, pos, e)) out.push_back(std::move(*rw));
        }
      }
    }
    return out;
  }

 private:
  // S with C's loop iterator at `pos` replaced by t = e.
  static std::optional<Rewrite> substitute_loop(Expr site, Expr child, size_t pos, Expr e) {
    const auto& s = site->as<ScopeNode>();
    const auto& c = child->as<ScopeNode>();
    Expr x = c.loops()[pos].iter;
    RangeMap child_ranges = scope_ranges(c);
    std::optional<Interval> t_range = index_interval(e, child_ranges);
    if (!t_range || t_range->empty()) return std::nullopt;
    Expr t = fresh_iter(site, "t");
    // e = coef * x + rest with coef = +-1, so x = coef * (t - rest).
    int64_t coef = coefficient_of(e, x);
    Expr rest = sub(e, mul(integer(coef), x));
    Expr solution = mul(integer(coef), sub(t, rest));

    std::vector<IterRange> loops = c.loops();
    loops[pos] = {t, t_range->lo, t_range->hi};
    RangeMap new_ranges = child_ranges;
    new_ranges.erase(x);
    new_ranges[t] = *t_range;
    Expr body = simplify_indices(substitute(c.body(), x, solution), new_ranges);
    Expr new_child = scope(loops, c.sums(), body, c.pads());

    // C[i0..in] -> C'[i0.., e(i0..in), ..in]: C'(.., e(i), ..) = C(i) inside C's box.
    std::vector<Expr> child_loops = iters_of(c.loops());
    Expr new_body = rewrite_accesses(s.body(), child, [&](const std::vector<Expr>& idx) {
      std::unordered_map<Expr, Expr> map;
      for (size_t k = 0; k < idx.size(); ++k) map[child_loops[k]] = idx[k];
      std::vector<Expr> next = idx;
      next[pos] = substitute(e, map);
      return access(new_child, next);
    });
    new_body = simplify_indices(new_body, scope_ranges(s));
    Expr result = scope(s.loops(), s.sums(), new_body, s.pads());
    std::string detail = c.loops()[pos].name() + " -> " + t->as<IterNode>().name() + " = " + to_string(e);
    return Rewrite{result, detail};
  }
};

class SumSplitIter final : public Rule {
 public:
  std::string_view name() const override { return "sum_split_iter"; }

  std::vector<Rewrite> apply(const RuleSite& site) const override {
    const auto& s = site.scope->as<ScopeNode>();
    std::vector<int64_t> factors = {2, 3};
    std::vector<Expr> indices = access_indices(s.body());
    for (Expr i : indices) {
      for (const AffineTerm& t : affine_form(i).terms) {
        int64_t a = t.coef < 0 ? -t.coef : t.coef;
        if (a >= 2 && std::find(factors.begin(), factors.end(), a) == factors.end()) factors.push_back(a);
      }
    }
    std::vector<Rewrite> out;
    RangeMap ranges = scope_ranges(s);
    for (size_t pos = 0; pos < s.sums().size(); ++pos) {
      const IterRange& r = s.sums()[pos];
      // Only an iterator that shares an index with others (a convolution
      // tap) gains from a split; a plain reduction would only be cut up.
      if (!combined_somewhere(r.iter, indices)) continue;
      // A range that p does not divide is relaxed to the next multiple of p
      // first (boundary relaxing), when the terms added are 0.
      bool relaxable = zero_outside(s.body(), r.iter, {r.lo, r.hi}, ranges);
      for (int64_t p : factors) {
        int64_t blocks = (r.extent() + p - 1) / p;
        if (blocks < 2 || (r.extent() % p != 0 && !relaxable)) continue;
        out.push_back(split(site.scope, pos, p));
      }
    }
    return out;
  }

 private:
  // r -> p*k + q + lo: every r in [lo, hi) is hit exactly once (and, when p
  // does not divide the extent, points past hi whose terms are 0).
  static Rewrite split(Expr site, size_t pos, int64_t p) {
    const auto& s = site->as<ScopeNode>();
    const IterRange& r = s.sums()[pos];
    Expr k = fresh_iter(site, "k");
    Expr q = fresh_iter(site, "q");
    std::vector<IterRange> sums = s.sums();
    const int64_t blocks = (r.extent() + p - 1) / p;
    sums[pos] = {k, 0, blocks};
    sums.insert(sums.begin() + pos + 1, {q, 0, p});
    Expr value = add(add(mul(integer(p), k), q), integer(r.lo));
    Expr body = substitute(s.body(), r.iter, value);
    Expr result = scope(s.loops(), sums, body, s.pads());
    body = simplify_indices(body, scope_ranges(result->as<ScopeNode>()));
    result = scope(s.loops(), sums, body, s.pads());
    std::string detail = r.name() + " -> " + to_string(value);
    if (blocks * p != r.extent()) detail += ", relaxed " + std::to_string(r.extent()) + " -> " + std::to_string(blocks * p);
    return {result, detail};
  }
};

// A Sum iterator i that an index combines with a loop iterator x as
// c*(x - i) (or c*(x + i)) is replaced by j = x - i (or x + i): the sum then
// runs along the diagonal the index follows. For a transposed convolution
// split by output phase, s*o1 + o2 + p - s*i becomes s*j + o2 + p, and the
// tap range bounds j to about k/s values instead of every input position.
// j's range is the hull of x - i, cut to where the body may be nonzero.
// Exact when the body is 0 wherever i leaves its range (zero_outside): the
// relaxed range then only adds zero terms, and for each x the map i <-> j is
// a bijection.
class SumSubstitute final : public Rule {
 public:
  std::string_view name() const override { return "sum_substitute"; }

  std::vector<Rewrite> apply(const RuleSite& site) const override {
    const auto& s = site.scope->as<ScopeNode>();
    RangeMap ranges = scope_ranges(s);
    std::vector<Expr> indices = access_indices(s.body());
    std::vector<Rewrite> out;
    std::vector<std::pair<Expr, Expr>> seen;  // (i, x) pairs already proposed
    for (size_t pos = 0; pos < s.sums().size(); ++pos) {
      const IterRange& i = s.sums()[pos];
      if (!zero_outside(s.body(), i.iter, {i.lo, i.hi}, ranges)) continue;
      for (Expr e : indices) {
        int64_t ci = coefficient_of(e, i.iter);
        if (ci == 0) continue;
        for (const IterRange& x : s.loops()) {
          int64_t cx = coefficient_of(e, x.iter);
          if (cx != ci && cx != -ci) continue;
          if (std::find(seen.begin(), seen.end(), std::pair{i.iter, x.iter}) != seen.end()) continue;
          seen.emplace_back(i.iter, x.iter);
          if (auto rw = substitute_sum(site.scope, pos, x, cx == -ci)) out.push_back(std::move(*rw));
        }
      }
    }
    return out;
  }

 private:
  // i := x - j (difference) or i := j - x (sum), j over its cut range.
  static std::optional<Rewrite> substitute_sum(Expr site, size_t pos, const IterRange& x, bool difference) {
    const auto& s = site->as<ScopeNode>();
    const IterRange& i = s.sums()[pos];
    RangeMap ranges = scope_ranges(s);
    Expr j = fresh_iter(site, "j");
    Expr combined = difference ? sub(x.iter, i.iter) : add(x.iter, i.iter);
    std::optional<Interval> hull = index_interval(combined, ranges);
    if (!hull || hull->empty()) return std::nullopt;
    Expr solution = difference ? sub(x.iter, j) : sub(j, x.iter);
    Expr body = substitute(s.body(), i.iter, solution);
    RangeMap new_ranges = ranges;
    new_ranges.erase(i.iter);
    new_ranges[j] = *hull;
    Interval range = *hull;
    if (std::optional<Interval> nonzero = support(body, j, new_ranges)) range = range.intersect(*nonzero);
    if (range.empty() || range.extent() >= i.extent()) return std::nullopt;  // no gain over the original sum
    new_ranges[j] = range;
    body = simplify_indices(body, new_ranges);
    std::vector<IterRange> sums = s.sums();
    sums[pos] = {j, range.lo, range.hi};
    Expr result = scope(s.loops(), sums, body, s.pads());
    std::string detail = i.name() + " -> " + to_string(solution) + ", " + j->as<IterNode>().name() + " in [" +
                         std::to_string(range.lo) + ", " + std::to_string(range.hi) + ")";
    return Rewrite{result, detail};
  }
};

}  // namespace

std::vector<RulePtr> substitution_rules() {
  std::vector<RulePtr> rules;
  rules.push_back(std::make_unique<LoopSubstitute>());
  rules.push_back(std::make_unique<SumSplitIter>());
  rules.push_back(std::make_unique<SumSubstitute>());
  return rules;
}

}  // namespace orchid::derivation::rules
