// Canonical affine index expressions (see expr_affine.h for the identities).
#include "ir/expr_affine.h"

#include <algorithm>
#include <numeric>

namespace orchid::expr {

namespace detail {
// Defined in expr.cc, next to the intern table.
Expr intern_affine(std::vector<AffineTerm> terms, int64_t constant);
Expr intern_divmod(NodeKind kind, Expr operand, int64_t divisor);
}  // namespace detail

namespace {

int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  ORCHID_CHECK(!__builtin_mul_overflow(a, b, &r)) << "index arithmetic overflows int64";
  return r;
}

int64_t checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  ORCHID_CHECK(!__builtin_add_overflow(a, b, &r)) << "index arithmetic overflows int64";
  return r;
}

bool is_atom(Expr e) { return e->is<IterNode>() || e->is<DivModNode>(); }

int kind_rank(NodeKind kind) {
  switch (kind) {
    case NodeKind::Iter: return 0;
    case NodeKind::FloorDiv: return 1;
    case NodeKind::Mod: return 2;
    case NodeKind::Affine: return 3;
    default: break;
  }
  ORCHID_CHECK(false) << "not an index expression";
  return -1;
}

int sign(int64_t a, int64_t b) { return a < b ? -1 : (a > b ? 1 : 0); }

// Splits every coefficient and the constant of `form` as c*q + r, r in [0, c):
// the q parts go to `quotient`, the r parts stay in `form`.
AffineForm take_multiples(AffineForm& form, int64_t c) {
  AffineForm quotient;
  std::vector<AffineTerm> rest;
  for (const AffineTerm& t : form.terms) {
    const int64_t q = floor_div_int(t.coef, c);
    const int64_t r = t.coef - q * c;
    if (q != 0) quotient.terms.push_back({q, t.atom});
    if (r != 0) rest.push_back({r, t.atom});
  }
  quotient.constant = floor_div_int(form.constant, c);
  form.constant = floor_mod_int(form.constant, c);
  form.terms = std::move(rest);
  return quotient;
}

int64_t common_factor(const AffineForm& form, int64_t c) {
  int64_t g = c;
  for (const AffineTerm& t : form.terms) g = std::gcd(g, t.coef);
  return g;
}

// floor(form / c) where form has terms, coefficients and constant in [0, c).
Expr divide_reduced(AffineForm form, int64_t c) {
  const int64_t g = common_factor(form, c);  // g < c, since 0 < coef < c
  for (AffineTerm& t : form.terms) t.coef /= g;
  form.constant /= g;
  c /= g;
  Expr operand = make_affine(std::move(form));
  if (const auto* inner = operand->try_as<DivModNode>(); inner && inner->kind() == NodeKind::FloorDiv) {
    return floor_div_index(inner->operand(), checked_mul(inner->divisor(), c));
  }
  return detail::intern_divmod(NodeKind::FloorDiv, operand, c);
}

}  // namespace

int64_t floor_div_int(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod_int(int64_t a, int64_t b) { return a - b * floor_div_int(a, b); }

int64_t ceil_div_int(int64_t a, int64_t b) { return -floor_div_int(-a, b); }

AffineForm affine_form(Expr index) {
  ORCHID_CHECK(index != nullptr && index->is_index()) << "not an index expression";
  if (const auto* a = index->try_as<AffineNode>()) return {a->terms(), a->constant()};
  return {{{1, index}}, 0};
}

Expr make_affine(AffineForm form) {
  std::vector<AffineTerm> flat;
  int64_t constant = form.constant;
  for (const AffineTerm& t : form.terms) {
    if (const auto* inner = t.atom->try_as<AffineNode>()) {
      for (const AffineTerm& u : inner->terms()) flat.push_back({checked_mul(t.coef, u.coef), u.atom});
      constant = checked_add(constant, checked_mul(t.coef, inner->constant()));
    } else {
      ORCHID_CHECK(is_atom(t.atom)) << "affine term over a non-index expression";
      flat.push_back(t);
    }
  }
  std::stable_sort(flat.begin(), flat.end(),
                   [](const AffineTerm& a, const AffineTerm& b) { return compare_index(a.atom, b.atom) < 0; });
  std::vector<AffineTerm> merged;
  for (const AffineTerm& t : flat) {
    if (!merged.empty() && merged.back().atom == t.atom) {
      merged.back().coef = checked_add(merged.back().coef, t.coef);
    } else {
      merged.push_back(t);
    }
  }
  std::erase_if(merged, [](const AffineTerm& t) { return t.coef == 0; });
  if (merged.size() == 1 && merged[0].coef == 1 && constant == 0) return merged[0].atom;
  return detail::intern_affine(std::move(merged), constant);
}

int64_t coefficient_of(Expr index, Expr atom) {
  for (const AffineTerm& t : affine_form(index).terms) {
    if (t.atom == atom) return t.coef;
  }
  return 0;
}

Expr floor_div_index(Expr index, int64_t divisor) {
  ORCHID_CHECK(divisor > 0) << "floor division by " << divisor;
  if (divisor == 1) return index;
  AffineForm rest = affine_form(index);
  AffineForm result = take_multiples(rest, divisor);
  // With no terms left, floor(rest.constant / divisor) is 0.
  if (!rest.terms.empty()) result.terms.push_back({1, divide_reduced(std::move(rest), divisor)});
  return make_affine(std::move(result));
}

Expr mod_index(Expr index, int64_t divisor) {
  ORCHID_CHECK(divisor > 0) << "modulo by " << divisor;
  AffineForm rest = affine_form(index);
  take_multiples(rest, divisor);
  if (rest.terms.empty()) return integer(rest.constant);
  const int64_t g = common_factor(rest, divisor);
  const int64_t low = rest.constant % g;
  for (AffineTerm& t : rest.terms) t.coef /= g;
  rest.constant /= g;
  const int64_t c = divisor / g;
  Expr operand = make_affine(std::move(rest));
  Expr m = nullptr;
  if (const auto* inner = operand->try_as<DivModNode>();
      inner && inner->kind() == NodeKind::Mod && inner->divisor() % c == 0) {
    m = mod_index(inner->operand(), c);  // (x mod d) mod c = x mod c when c | d
  } else {
    m = detail::intern_divmod(NodeKind::Mod, operand, c);
  }
  return make_affine({{{g, m}}, low});
}

int compare_index(Expr a, Expr b) {
  if (a == b) return 0;
  const int ra = kind_rank(a->kind());
  const int rb = kind_rank(b->kind());
  if (ra != rb) return ra < rb ? -1 : 1;
  if (const auto* ia = a->try_as<IterNode>()) {
    const int c = ia->name().compare(b->as<IterNode>().name());
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (const auto* da = a->try_as<DivModNode>()) {
    const auto& db = b->as<DivModNode>();
    if (int c = compare_index(da->operand(), db.operand())) return c;
    return sign(da->divisor(), db.divisor());
  }
  const auto& aa = a->as<AffineNode>();
  const auto& ab = b->as<AffineNode>();
  const size_t n = std::min(aa.terms().size(), ab.terms().size());
  for (size_t i = 0; i < n; ++i) {
    if (int c = compare_index(aa.terms()[i].atom, ab.terms()[i].atom)) return c;
    if (int c = sign(aa.terms()[i].coef, ab.terms()[i].coef)) return c;
  }
  if (int c = sign(static_cast<int64_t>(aa.terms().size()), static_cast<int64_t>(ab.terms().size()))) return c;
  return sign(aa.constant(), ab.constant());
}

}  // namespace orchid::expr
