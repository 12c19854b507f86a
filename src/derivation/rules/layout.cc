// Derivation rules: layout family (rules/rules.h). OLLIE's data-layout
// transforms: split, merge and reorder the dimensions of an intermediate
// tensor (a child scope), split the output through a new child, and view an
// input dimension as (a, b) with index p*a + b.
//
// Shape changes of a child act on its parent S: the child C is replaced by
// C' and every access to C in S's body is rewritten to read the same element
// of C', so S denotes the same function. Split and merge map C's box
// bijectively onto part of C''s box; they are exact because S only reads C
// inside its box (accesses_within_box), so C''s extra points are never read.
//
// Split factors p come from the scope's access indices: a coefficient >= 2 of
// another iterator in an index that uses x (the dilation 2 of h + 2*r), or
// the divisor of a floor-div/mod of x there; p < the extent of x.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <tuple>

#include "derivation/analysis.h"
#include "derivation/rules/rules.h"
#include "ir/expr_affine.h"
#include "ir/expr_utils.h"

namespace orchid::derivation::rules {

namespace {

using namespace expr;

using IndexMap = std::function<std::vector<Expr>(const std::vector<Expr>&)>;

bool mentions(Expr index, Expr it) {
  std::vector<Expr> free = free_iterators(index);
  return std::find(free.begin(), free.end(), it) != free.end();
}

// The floor-div/mod nodes inside an index expression, at any depth.
void collect_divmods(Expr index, std::vector<const DivModNode*>& out) {
  if (const auto* dm = index->try_as<DivModNode>()) {
    out.push_back(dm);
    collect_divmods(dm->operand(), out);
  } else if (const auto* a = index->try_as<AffineNode>()) {
    for (const AffineTerm& t : a->terms()) collect_divmods(t.atom, out);
  }
}

// Factors p in [2, extent) worth splitting loop `x` of a scope with `body`
// by: coefficients of other iterators in indices using x, divisors of
// floor-div/mod of x.
std::set<int64_t> split_factors(Expr body, Expr x, int64_t extent) {
  std::set<int64_t> out;
  auto add = [&](int64_t p) {
    if (p >= 2 && p < extent) out.insert(p);
  };
  for (const AccessNode* a : accesses_in(body)) {
    for (Expr index : a->indices()) {
      if (!mentions(index, x)) continue;
      for (const AffineTerm& t : affine_form(index).terms) {
        if (t.atom != x && t.atom->is<IterNode>()) add(std::abs(t.coef));
      }
      std::vector<const DivModNode*> dms;
      collect_divmods(index, dms);
      for (const DivModNode* dm : dms) {
        if (mentions(dm->operand(), x)) add(dm->divisor());
      }
    }
  }
  return out;
}

// Factors for relayout: every coefficient >= 2 of an iterator and every
// divisor in the access indices of `body`.
std::set<int64_t> body_factors(Expr body) {
  std::set<int64_t> out;
  for (const AccessNode* a : accesses_in(body)) {
    for (Expr index : a->indices()) {
      for (const AffineTerm& t : affine_form(index).terms) {
        if (t.atom->is<IterNode>() && std::abs(t.coef) >= 2) out.insert(std::abs(t.coef));
      }
      std::vector<const DivModNode*> dms;
      collect_divmods(index, dms);
      for (const DivModNode* dm : dms) {
        if (dm->divisor() >= 2) out.insert(dm->divisor());
      }
    }
  }
  return out;
}

// Two iterator names based on `base` unused in `scope` and distinct.
std::pair<Expr, Expr> fresh_pair(Expr scope, const std::string& base) {
  return {fresh_iter(scope, base + "1"), fresh_iter(scope, base + "2")};
}

// An iterator unused in `scope` and not in `taken` (which receives it).
Expr fresh_distinct(Expr scope, std::string base, std::set<Expr>& taken) {
  Expr it = fresh_iter(scope, base);
  while (taken.count(it)) it = fresh_iter(scope, base += "_");
  taken.insert(it);
  return it;
}

// `v` with its `count` entries from `pos` replaced by `with`.
template <typename T>
std::vector<T> splice(const std::vector<T>& v, size_t pos, size_t count, const std::vector<T>& with) {
  std::vector<T> out(v.begin(), v.begin() + pos);
  out.insert(out.end(), with.begin(), with.end());
  out.insert(out.end(), v.begin() + pos + count, v.end());
  return out;
}

// Scope S with its child C replaced by `child2`, each access C[idx] becoming
// child2[map(idx)], indices simplified with S's ranges.
Expr with_child(const ScopeNode& s, Expr child, Expr child2, const IndexMap& map) {
  Expr body = rewrite_accesses(s.body(), child, [&](const std::vector<Expr>& idx) { return access(child2, map(idx)); });
  return scope(s.loops(), s.sums(), simplify_indices(body, scope_ranges(s)), s.pads());
}

// `index` with k*Y*floor(E/Y) + k*(E mod Y) folded back into k*E (an identity
// at every integer point), so merging a split pair gives back E.
Expr fold_div_mod(Expr index) {
  AffineForm form = affine_form(index);
  for (size_t i = 0; i < form.terms.size(); ++i) {
    const auto* d = form.terms[i].atom->try_as<DivModNode>();
    if (!d || d->kind() != NodeKind::FloorDiv || form.terms[i].coef % d->divisor() != 0) continue;
    int64_t k = form.terms[i].coef / d->divisor();
    Expr m = mod_index(d->operand(), d->divisor());
    for (size_t j = 0; j < form.terms.size(); ++j) {
      if (form.terms[j].atom != m || form.terms[j].coef != k) continue;
      AffineForm rest{{}, form.constant};
      for (size_t t = 0; t < form.terms.size(); ++t) {
        if (t != i && t != j) rest.terms.push_back(form.terms[t]);
      }
      return fold_div_mod(add(make_affine(rest), mul(integer(k), d->operand())));
    }
  }
  return index;
}

// `value` with fold_div_mod applied to every access index (nested scopes
// left alone).
Expr fold_indices(Expr value) {
  if (const auto* a = value->try_as<AccessNode>()) {
    std::vector<Expr> indices;
    for (Expr i : a->indices()) indices.push_back(fold_div_mod(i));
    return access(a->source(), indices);
  }
  if (value->is<ScopeNode>() || value->is<TensorNode>() || value->is_index()) return value;
  return map_children(value, fold_indices);
}

// The children of S that S reads only inside their boxes.
std::vector<Expr> boxed_children(const ScopeNode& s) {
  std::vector<Expr> out;
  RangeMap ranges = scope_ranges(s);
  for (Expr c : direct_children(s.body())) {
    if (accesses_within_box(s.body(), c, ranges)) out.push_back(c);
  }
  return out;
}

// `c` with loop `pos` (x in [lo, hi)) split into x1 in [0, ceil(X/p)),
// x2 in [0, p), x = p*x1 + x2 + lo. Names are fresh in `names`.
Expr split_scope_loop(const ScopeNode& c, size_t pos, int64_t p, Expr names) {
  const IterRange& x = c.loops()[pos];
  auto [x1, x2] = fresh_pair(names, x.name());
  std::vector<IterRange> loops = splice(c.loops(), pos, 1, {{x1, 0, ceil_div_int(x.extent(), p)}, {x2, 0, p}});
  std::vector<int64_t> pads = splice(c.pads(), pos, 1, {0, 0});
  Expr value = add(add(mul(integer(p), x1), x2), integer(x.lo));
  Expr body = substitute(c.body(), x.iter, value);
  RangeMap ranges = ranges_of(loops, c.sums());
  return scope(loops, c.sums(), simplify_indices(body, ranges), pads);
}

// A Sum-free scope whose body is one access: a pure layout view (the roots
// split_output makes, the wrappers relayout_input makes).
bool is_view(const ScopeNode& s) { return s.sums().empty() && s.body()->is<AccessNode>(); }

// ---- split_loop ------------------------------------------------------------

class SplitLoop final : public Rule {
 public:
  std::string_view name() const override { return "split_loop"; }
  std::vector<Rewrite> apply(const RuleSite& site) const override {
    std::vector<Rewrite> out;
    const auto& s = site.scope->as<ScopeNode>();
    for (Expr child : boxed_children(s)) {
      const auto& c = child->as<ScopeNode>();
      for (size_t pos = 0; pos < c.rank(); ++pos) {
        const IterRange x = c.loops()[pos];
        for (int64_t p : split_factors(c.body(), x.iter, x.extent())) {
          Expr child2 = split_scope_loop(c, pos, p, child);
          IndexMap map = [&](const std::vector<Expr>& idx) {
            Expr e = sub(idx[pos], integer(x.lo));
            return splice(idx, pos, 1, {floor_div_index(e, p), mod_index(e, p)});
          };
          out.push_back({with_child(s, child, child2, map), "split " + x.name() + " by " + std::to_string(p)});
        }
      }
    }
    return out;
  }
};

// ---- merge_loops -----------------------------------------------------------

class MergeLoops final : public Rule {
 public:
  std::string_view name() const override { return "merge_loops"; }
  std::vector<Rewrite> apply(const RuleSite& site) const override {
    std::vector<Rewrite> out;
    const auto& s = site.scope->as<ScopeNode>();
    for (Expr child : boxed_children(s)) {
      const auto& c = child->as<ScopeNode>();
      for (size_t pos = 0; pos + 1 < c.rank(); ++pos) {
        const IterRange x = c.loops()[pos], y = c.loops()[pos + 1];
        if (x.extent() <= 1 || y.extent() <= 1) continue;
        out.push_back({merged(s, child, pos), "merge " + x.name() + ", " + y.name()});
      }
    }
    return out;
  }

 private:
  // m in [0, X*Y): x = m / Y + xl, y = m % Y + yl; reads (ex, ey) -> (ex - xl) * Y + (ey - yl).
  static Expr merged(const ScopeNode& s, Expr child, size_t pos) {
    const auto& c = child->as<ScopeNode>();
    const IterRange x = c.loops()[pos], y = c.loops()[pos + 1];
    const int64_t ny = y.extent();
    Expr m = fresh_iter(child, x.name() + y.name());
    std::vector<IterRange> loops = splice(c.loops(), pos, 2, {{m, 0, x.extent() * ny}});
    std::vector<int64_t> pads = splice(c.pads(), pos, 2, {0});
    Expr body = substitute(c.body(), {{x.iter, add(floor_div_index(m, ny), integer(x.lo))},
                                      {y.iter, add(mod_index(m, ny), integer(y.lo))}});
    RangeMap ranges = ranges_of(loops, c.sums());
    Expr child2 = scope(loops, c.sums(), fold_indices(simplify_indices(body, ranges)), pads);
    IndexMap map = [&](const std::vector<Expr>& idx) {
      Expr e = add(mul(sub(idx[pos], integer(x.lo)), integer(ny)), sub(idx[pos + 1], integer(y.lo)));
      return splice(idx, pos, 2, {fold_div_mod(e)});
    };
    return with_child(s, child, child2, map);
  }
};

// ---- reorder_loops ---------------------------------------------------------

// Swapping two loops of C and the two index positions of every access is a
// transposition of the function: exact whatever S reads.
class ReorderLoops final : public Rule {
 public:
  std::string_view name() const override { return "reorder_loops"; }
  std::vector<Rewrite> apply(const RuleSite& site) const override {
    std::vector<Rewrite> out;
    const auto& s = site.scope->as<ScopeNode>();
    for (Expr child : direct_children(s.body())) {
      const auto& c = child->as<ScopeNode>();
      for (size_t pos = 0; pos + 1 < c.rank(); ++pos) {
        std::vector<IterRange> loops = c.loops();
        std::vector<int64_t> pads = c.pads();
        std::swap(loops[pos], loops[pos + 1]);
        std::swap(pads[pos], pads[pos + 1]);
        Expr child2 = scope(loops, c.sums(), c.body(), pads);
        IndexMap map = [&](const std::vector<Expr>& idx) {
          std::vector<Expr> v = idx;
          std::swap(v[pos], v[pos + 1]);
          return v;
        };
        out.push_back({with_child(s, child, child2, map), "swap " + loops[pos + 1].name() + ", " + loops[pos].name()});
      }
    }
    return out;
  }
};

// ---- split_output ----------------------------------------------------------

// The root R = L<.., x, ..> Sum body becomes L<.., x, ..> C[.., (x-lo)/p, (x-lo)%p, ..]
// with C = R's computation over x1, x2 (x = p*x1 + x2 + lo). R reads C inside
// its box only, so C's extra points (x >= hi when p does not divide X) are
// never read.
class SplitOutput final : public Rule {
 public:
  std::string_view name() const override { return "split_output"; }
  std::vector<Rewrite> apply(const RuleSite& site) const override {
    std::vector<Rewrite> out;
    if (!site.is_root) return out;
    const auto& r = site.scope->as<ScopeNode>();
    if (is_view(r)) return out;  // splitting a view only nests another view
    for (size_t pos = 0; pos < r.rank(); ++pos) {
      const IterRange x = r.loops()[pos];
      for (int64_t p : split_factors(r.body(), x.iter, x.extent())) {
        Expr child = split_scope_loop(r, pos, p, site.scope);
        Expr e = sub(x.iter, integer(x.lo));
        std::vector<Expr> idx = splice(iters_of(r.loops()), pos, 1, {floor_div_index(e, p), mod_index(e, p)});
        Expr root = scope(r.loops(), {}, access(child, idx), r.pads());
        out.push_back({root, "split output " + x.name() + " by " + std::to_string(p)});
      }
    }
    return out;
  }
};

// ---- relayout_input --------------------------------------------------------

// W = L<i.., a, b, ..> src[i.., p*a + b, ..] with a in [floor(lo/p), ceil(hi/p)),
// b in [0, p) ([lo, hi) is src's box along d); src[.., e, ..] = W[.., e/p, e%p, ..]
// at every point: when e/p leaves W's box, e leaves src's box and both are 0.
class RelayoutInput final : public Rule {
 public:
  std::string_view name() const override { return "relayout_input"; }
  std::vector<Rewrite> apply(const RuleSite& site) const override {
    std::vector<Rewrite> out;
    const auto& s = site.scope->as<ScopeNode>();
    if (is_view(s)) return out;  // a wrapper's input: relayout would only nest wrappers
    std::set<int64_t> factors = body_factors(s.body());
    std::set<std::tuple<Expr, size_t, int64_t>> done;
    for (const AccessNode* a : accesses_in(s.body())) {
      for (size_t d = 0; d < a->indices().size(); ++d) {
        for (int64_t p : factors) {
          if (p >= source_box(a->source(), d).extent() || !has_multiple(a->indices()[d], p)) continue;
          if (!done.insert({a->source(), d, p}).second) continue;
          out.push_back({relayout(site.scope, a->source(), d, p),
                         "relayout " + source_name(a->source()) + " dim " + std::to_string(d) + " by " +
                             std::to_string(p)});
        }
      }
    }
    return out;
  }

 private:
  // Whether an iterator of `index` has a coefficient divisible by p.
  static bool has_multiple(Expr index, int64_t p) {
    for (const AffineTerm& t : affine_form(index).terms) {
      if (t.atom->is<IterNode>() && t.coef % p == 0) return true;
    }
    return false;
  }

  static std::string source_name(Expr src) {
    if (const auto* t = src->try_as<TensorNode>()) return t->name();
    return "child";
  }

  static Expr relayout(Expr site, Expr src, size_t d, int64_t p) {
    const auto& s = site->as<ScopeNode>();
    size_t rank = src->is<TensorNode>() ? src->as<TensorNode>().rank() : src->as<ScopeNode>().rank();
    std::vector<IterRange> loops;
    std::vector<Expr> src_idx;
    std::set<Expr> taken;  // names fresh in S, for readability (W is closed)
    for (size_t k = 0; k < rank; ++k) {
      Interval box = source_box(src, k);
      if (k != d) {
        Expr i = fresh_distinct(site, "i" + std::to_string(k), taken);
        loops.push_back({i, box.lo, box.hi});
        src_idx.push_back(i);
        continue;
      }
      Expr ia = fresh_distinct(site, "a", taken), ib = fresh_distinct(site, "b", taken);
      loops.push_back({ia, floor_div_int(box.lo, p), ceil_div_int(box.hi, p)});
      loops.push_back({ib, 0, p});
      src_idx.push_back(add(mul(integer(p), ia), ib));
    }
    Expr wrapper = scope(loops, {}, access(src, src_idx));
    IndexMap map = [&](const std::vector<Expr>& idx) {
      return splice(idx, d, 1, {floor_div_index(idx[d], p), mod_index(idx[d], p)});
    };
    return with_child(s, src, wrapper, map);
  }
};

}  // namespace

std::vector<RulePtr> layout_rules() {
  std::vector<RulePtr> out;
  out.push_back(std::make_unique<SplitLoop>());
  out.push_back(std::make_unique<MergeLoops>());
  out.push_back(std::make_unique<ReorderLoops>());
  out.push_back(std::make_unique<SplitOutput>());
  out.push_back(std::make_unique<RelayoutInput>());
  return out;
}

}  // namespace orchid::derivation::rules
