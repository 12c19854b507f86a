// Derivation search: fingerprint deduplication, statistics, limits, and the
// known results of OLLIE found by search from the original expressions
// (not written by hand), within the default limits. Each found state is
// checked against the original by the evaluator.
#include "derivation/search.h"

#include <gtest/gtest.h>

#include "derivation/check.h"
#include "derivation/instantiate.h"
#include "derivation/iterator_table.h"
#include "ir/expr_affine.h"
#include "ir/expr_parser.h"
#include "ir/expr_printer.h"
#include "ir/expr_utils.h"

namespace orchid::derivation {
namespace {

using expr::parse;

// Instantiable, with every compute scope matching `op` (at least one).
bool all_compute_is(Expr state, LinearOp op) {
  std::vector<const expr::ScopeNode*> scopes = compute_scopes(state);
  if (scopes.empty() || !instantiable(state)) return false;
  for (const expr::ScopeNode* s : scopes) {
    if (match_operator(*s).op != op) return false;
  }
  return true;
}

// Every compute scope is a Conv with these tap extents and dilation 1, and
// no other scope sums (no offset sum is left over).
bool plain_convs(Expr state, std::vector<int64_t> taps) {
  if (!all_compute_is(state, LinearOp::Conv)) return false;
  for (Expr s : scopes_of(state)) {
    const auto& scope = s->as<expr::ScopeNode>();
    if (!is_compute_scope(scope)) {
      if (!scope.sums().empty()) return false;
      continue;
    }
    std::optional<LinearMatch> m = match_linear(scope);
    std::vector<int64_t> got;
    for (const ConvSpatial& d : m->spatial) {
      if (d.dilation != 1) return false;
      got.push_back(d.tap.extent());
    }
    if (got != taps) return false;
  }
  return true;
}

const Derivation* find_first(const SearchResult& result) { return result.found.empty() ? nullptr : &result.found[0]; }

// Searches from `start` with the default options for a state accepted by
// `goal`; checks exactness of what it finds.
const Derivation* expect_found(Expr start, const Goal& goal, SearchResult& result, const char* what) {
  SearchOptions options;
  options.max_found = 1;
  result = search(start, goal, options);
  const Derivation* d = find_first(result);
  EXPECT_NE(d, nullptr) << what << ": not found; " << result.stats.to_string();
  if (!d) return nullptr;
  EXPECT_EQ(check_equivalent(start, d->state), "") << what << ": " << d->to_string();
  EXPECT_TRUE(same_loop_box(start, d->state));
  std::cout << "[ " << what << " ] " << d->steps.size() << " steps (" << d->explorative_steps
            << " explorative): " << d->to_string() << "\n  " << expr::to_string(d->state) << "\n  "
            << result.stats.to_string() << "\n";
  return d;
}

TEST(DerivationSearch, Conv3x3ToMatMulAndOffsetSum) {
  Expr conv = parse(
      "tensor A[1,8,6,6] pad [0,0,1,1] tensor K[16,8,3,3]\n"
      "L<n:0:1, f:0:16, h:0:6, w:0:6> Sum<c:0:8, r:0:3, s:0:3> A[n, c, h + r - 1, w + s - 1] * K[f, c, r, s]");
  SearchResult result;
  const Derivation* d = expect_found(conv, [](Expr s) { return all_compute_is(s, LinearOp::MatMul); }, result,
                                     "Conv3x3 -> MatMul + offset sum");
  ASSERT_NE(d, nullptr);
  EXPECT_GT(result.stats.dedup_hits, 0u);
}

TEST(DerivationSearch, ConvKx1ToMatMulAndReduce) {
  Expr conv = parse(
      "tensor A[1,4,16,16] pad [0,0,7,0] tensor K[6,4,15,1]\n"
      "L<n:0:1, f:0:6, h:0:16, w:0:16> Sum<c:0:4, r:0:15> A[n, c, h + r - 7, w] * K[f, c, r, 0]");
  SearchResult result;
  expect_found(conv, [](Expr s) { return all_compute_is(s, LinearOp::MatMul); }, result, "Conv 15x1 -> MatMul + reduce");
}

TEST(DerivationSearch, ConvTransposeToMatMulAndScatterSum) {
  // ConvTranspose 4x4 stride 2 pad 1 in one spatial dim (primitive_expr's form): X[1,4,5], W[4,3,4] -> [1,3,10].
  Expr deconv = parse(
      "tensor X[1,4,5] tensor W[4,3,4]\n"
      "L<n:0:1, m:0:3, o:0:10> Sum<c:0:4, i:0:5> X[n, c, i] * W[c, m, o + 1 - 2*i]");
  SearchResult result;
  expect_found(deconv, [](Expr s) { return all_compute_is(s, LinearOp::MatMul); }, result,
               "ConvTranspose -> MatMul + scatter sum");
}

TEST(DerivationSearch, DilatedConvToConvOnLargerBatch) {
  Expr conv = parse(
      "tensor A[1,3,8,8] pad [0,0,2,2] tensor K[4,3,3,3]\n"
      "L<n:0:1, f:0:4, h:0:8, w:0:8> Sum<c:0:3, r:0:3, s:0:3> A[n, c, h + 2*r - 2, w + 2*s - 2] * K[f, c, r, s]");
  SearchResult result;
  expect_found(conv, [](Expr s) { return plain_convs(s, {3, 3}); }, result, "dilated Conv -> Conv on a 4x batch");
}

TEST(DerivationSearch, Conv5x5ToConv3x3Pieces) {
  Expr conv = parse(
      "tensor A[1,2,7,7] pad [0,0,2,2] tensor K[1,2,5,5]\n"
      "L<n:0:1, f:0:1, h:0:7, w:0:7> Sum<c:0:2, r:0:5, s:0:5> A[n, c, h + r - 2, w + s - 2] * K[f, c, r, s]");
  SearchResult result;
  // Pieces: the compute is Conv3x3 over 4 output-channel groups, then an
  // offset sum of the 2 x 2 pieces (a Sum outside the Conv is allowed here).
  expect_found(conv,
               [](Expr s) {
                 if (!all_compute_is(s, LinearOp::Conv)) return false;
                 for (const expr::ScopeNode* c : compute_scopes(s)) {
                   std::vector<int64_t> taps;
                   std::optional<LinearMatch> m = match_linear(*c);
                   for (const ConvSpatial& d : m->spatial) {
                     if (d.dilation != 1) return false;
                     taps.push_back(d.tap.extent());
                   }
                   if (taps != std::vector<int64_t>{3, 3}) return false;
                 }
                 return true;
               },
               result, "Conv5x5 -> Conv3x3 pieces");
}

TEST(DerivationSearch, DilatedG2bmmToG2bmm) {
  Expr g2bmm = parse(
      "tensor Q[2,16,3] tensor Kt[2,16,3]\n"
      "L<b:0:2, m:0:16, w:0:5> Sum<k:0:3> Q[b, m, k] * Kt[b, m + 2*w - 4, k]");
  SearchResult result;
  expect_found(g2bmm,
               [](Expr s) {
                 if (!all_compute_is(s, LinearOp::G2BMM)) return false;
                 for (const expr::ScopeNode* c : compute_scopes(s)) {
                   for (Expr index : iterator_table(*c)->b->indices()) {
                     for (const expr::AffineTerm& t : expr::affine_form(index).terms) {
                       if (std::abs(t.coef) > 1) return false;
                     }
                   }
                 }
                 return true;
               },
               result, "dilated G2BMM -> G2BMM");
}

TEST(DerivationSearch, FingerprintsDeduplicate) {
  Expr conv = parse(
      "tensor A[1,2,4,4] pad [0,0,1,1] tensor K[2,2,3,3]\n"
      "L<n:0:1, f:0:2, h:0:4, w:0:4> Sum<c:0:2, r:0:3, s:0:3> A[n, c, h + r - 1, w + s - 1] * K[f, c, r, s]");
  SearchOptions with, without;
  with.max_depth = without.max_depth = 2;
  with.guided = without.guided = false;
  without.fingerprint_dedup = false;
  auto never = [](Expr) { return false; };
  SearchResult a = search(conv, never, with), b = search(conv, never, without);
  EXPECT_FALSE(a.stats.limit_reached);
  EXPECT_GT(a.stats.dedup_hits, 0u);
  EXPECT_EQ(b.stats.dedup_hits, 0u);
  EXPECT_LT(a.stats.states, b.stats.states);
}

TEST(DerivationSearch, LimitsStopTheSearch) {
  Expr conv = parse(
      "tensor A[1,2,4,4] pad [0,0,1,1] tensor K[2,2,3,3]\n"
      "L<n:0:1, f:0:2, h:0:4, w:0:4> Sum<c:0:2, r:0:3, s:0:3> A[n, c, h + r - 1, w + s - 1] * K[f, c, r, s]");
  SearchOptions options;
  options.max_states = 10;
  options.max_depth = 8;
  SearchResult r = search(conv, [](Expr) { return false; }, options);
  EXPECT_TRUE(r.stats.limit_reached);
  EXPECT_LE(r.stats.states, 10u);
}

TEST(DerivationSearch, EveryStepIsExactOnSmallShapes) {
  Expr conv = parse(
      "tensor A[1,2,4,4] pad [0,0,1,1] tensor K[2,2,3,3]\n"
      "L<n:0:1, f:0:2, h:0:4, w:0:4> Sum<c:0:2, r:0:3, s:0:3> A[n, c, h + r - 1, w + s - 1] * K[f, c, r, s]");
  SearchOptions options;
  options.max_depth = 2;
  options.check_steps = true;  // ORCHID_CHECK fails on an inexact step
  SearchResult r = search(conv, [](Expr) { return false; }, options);
  EXPECT_GT(r.stats.states, 10u);
}

}  // namespace
}  // namespace orchid::derivation
