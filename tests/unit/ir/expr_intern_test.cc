// Hash-consing and canonical forms of the expr IR.
#include <gtest/gtest.h>

#include <thread>

#include "ir/expr.h"
#include "ir/expr_affine.h"
#include "ir/expr_printer.h"

namespace orchid::expr {
namespace {

Expr conv_scope(int64_t offset) {
  Expr n = iter("n"), h = iter("h"), w = iter("w"), f = iter("f"), c = iter("c"), r = iter("r"), s = iter("s");
  Expr a = tensor("A", {1, 7, 7, 8});
  Expr k = tensor("K", {3, 3, 16, 8});
  Expr body =
      mul(access(a, {n, sub(add(h, r), integer(offset)), sub(add(w, s), integer(offset)), c}), access(k, {r, s, f, c}));
  return scope({{n, 0, 1}, {h, 0, 7}, {w, 0, 7}, {f, 0, 16}}, {{c, 0, 8}, {r, 0, 3}, {s, 0, 3}}, body);
}

TEST(ExprIntern, SameStructureSamePointer) {
  EXPECT_EQ(iter("h"), iter("h"));
  EXPECT_NE(iter("h"), iter("w"));
  EXPECT_EQ(constant(1.5), constant(1.5));
  EXPECT_NE(constant(0.0), constant(-0.0));
  EXPECT_EQ(tensor("A", {2, 3}), tensor("A", {2, 3}, {0, 0}));
  EXPECT_NE(tensor("A", {2, 3}), tensor("A", {2, 4}));
  EXPECT_NE(tensor("A", {2, 3}), tensor("A", {2, 3}, {1, 0}));
  EXPECT_EQ(conv_scope(1), conv_scope(1));
  EXPECT_NE(conv_scope(1), conv_scope(0));
}

TEST(ExprIntern, AffineCanonicalFormMeets) {
  Expr h = iter("h"), r = iter("r");
  EXPECT_EQ(sub(add(h, r), integer(1)), sub(add(r, h), integer(1)));
  EXPECT_EQ(add(h, add(r, integer(-1))), add(add(integer(-1), r), h));
  EXPECT_EQ(sub(h, h), integer(0));
  EXPECT_EQ(add(h, integer(0)), h);  // a lone atom is the atom itself
  EXPECT_EQ(mul(integer(3), add(h, r)), add(mul(h, integer(3)), mul(r, integer(3))));
  EXPECT_EQ(to_string(sub(add(r, h), integer(1))), "h + r - 1");
  EXPECT_EQ(to_string(sub(mul(integer(-2), h), r)), "-2*h - r");
  EXPECT_EQ(coefficient_of(add(mul(integer(4), h), r), h), 4);
  EXPECT_EQ(coefficient_of(add(mul(integer(4), h), r), iter("w")), 0);
}

TEST(ExprIntern, DivModCanonicalForms) {
  Expr h = iter("h"), r = iter("r");
  Expr two = integer(2);
  // Whole multiples of the divisor leave the division.
  EXPECT_EQ(div(sub(h, integer(1)), two), sub(div(add(h, integer(1)), two), integer(1)));
  EXPECT_EQ(div(add(mul(integer(4), h), r), integer(4)), add(h, div(r, integer(4))));
  EXPECT_EQ(mod(add(mul(integer(4), h), r), integer(4)), mod(r, integer(4)));
  // Common factors divide out; nested divisions merge.
  EXPECT_EQ(div(add(mul(two, h), two), integer(4)), div(add(h, integer(1)), two));
  EXPECT_EQ(mod(mul(two, h), integer(4)), mul(two, mod(h, two)));
  EXPECT_EQ(div(div(h, two), integer(3)), div(h, integer(6)));
  EXPECT_EQ(mod(mod(h, integer(6)), integer(3)), mod(h, integer(3)));
  EXPECT_EQ(div(h, integer(1)), h);
  EXPECT_EQ(mod(h, integer(1)), integer(0));
  EXPECT_EQ(div(integer(-7), two), integer(-4));  // floor semantics
  EXPECT_EQ(mod(integer(-7), two), integer(1));
  EXPECT_EQ(to_string(div(sub(add(h, r), integer(1)), two)), "(h + r + 1) / 2 - 1");
}

TEST(ExprIntern, FloatArithmeticKeepsOrderAndFoldsConstants) {
  Expr a = access(tensor("A", {4}), {iter("i")});
  Expr b = access(tensor("B", {4}), {iter("i")});
  EXPECT_EQ(mul(a, b), mul(a, b));
  EXPECT_NE(mul(a, b), mul(b, a));  // commutativity is the fingerprint's business
  EXPECT_EQ(mul(constant(2.0), constant(3.0)), constant(6.0));
  EXPECT_EQ(call(Func::Relu, constant(-1.0)), constant(0.0));
  EXPECT_EQ(neg(constant(2.0)), constant(-2.0));
  EXPECT_EQ(add(a, integer(1)), add(a, constant(1.0)));      // index constants become floats
  EXPECT_TRUE(mul(iter("i"), iter("j"))->is<BinaryNode>());  // not affine: a float product
}

TEST(ExprIntern, MisuseIsAnInternalError) {
  Expr a = access(tensor("A", {4}), {iter("i")});
  EXPECT_THROW(access(tensor("A", {4}), {iter("i"), iter("j")}), InternalError);
  EXPECT_THROW(access(tensor("A", {4}), {a}), InternalError);
  EXPECT_THROW(mod(a, integer(2)), InternalError);
  EXPECT_THROW(div(iter("i"), integer(0)), InternalError);
  EXPECT_THROW(scope({{iter("j"), 0, 4}}, {}, a), InternalError);  // i unbound: scopes are closed
  EXPECT_THROW(scope({{iter("i"), 0, 4}, {iter("i"), 0, 4}}, {}, a), InternalError);
  EXPECT_THROW(iter("tensor"), InternalError);
}

TEST(ExprIntern, ConcurrentConstructionAgrees) {
  std::vector<Expr> results(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&results, t] {
      Expr last = nullptr;
      for (int rep = 0; rep < 200; ++rep) last = conv_scope(rep % 3);
      results[t] = last;
    });
  }
  for (std::thread& t : threads) t.join();
  for (Expr e : results) EXPECT_EQ(e, conv_scope(199 % 3));
}

}  // namespace
}  // namespace orchid::expr
