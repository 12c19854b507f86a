// Structural utilities: iterators, free tensors, substitution.
#include "ir/expr_utils.h"

#include <gtest/gtest.h>

#include "ir/expr_parser.h"
#include "ir/expr_printer.h"

namespace orchid::expr {
namespace {

TEST(ExprUtils, IteratorsAndFreeNames) {
  Expr e = parse(
      "tensor A[4,3] tensor B[3,5] tensor C[4]\n"
      "L<i:0:4, j:0:5> Sum<k:0:3> { L<a:0:4, b:0:3> A[a, b] + C[a] }[i, k] * B[k, j]");
  const auto& s = e->as<ScopeNode>();
  std::vector<std::string> names;
  for (const IterRange& r : iterators(s)) names.push_back(r.name());
  EXPECT_EQ(names, (std::vector<std::string>{"i", "j", "k"}));
  std::vector<std::string> tensors;
  for (Expr t : free_tensors(e)) tensors.push_back(t->as<TensorNode>().name());
  EXPECT_EQ(tensors, (std::vector<std::string>{"A", "C", "B"}));
  EXPECT_EQ(nested_scopes(e).size(), 1u);
  std::vector<Expr> free = free_iterators(s.body());
  EXPECT_EQ(free, (std::vector<Expr>{iter("i"), iter("k"), iter("j")}));
  EXPECT_TRUE(free_iterators(e).empty());
}

TEST(ExprUtils, SubstituteRebuildsCanonically) {
  TensorTable table = {{"A", tensor("A", {9, 9})}};
  Expr body = parse_open("A[h + r - 1, 2*w] * 2.0", table);
  // Variable substitution (h, r) -> (t = h + r, r): h := t - r.
  Expr t = iter("t");
  Expr out = substitute(body, iter("h"), sub(t, iter("r")));
  EXPECT_EQ(out, parse_open("A[t - 1, 2*w] * 2.0", table));
  // Simultaneous: w := w + 1 and t := w does not chain.
  EXPECT_EQ(substitute(parse_open("A[t, w]", table), {{iter("w"), add(iter("w"), integer(1))}, {t, iter("w")}}),
            parse_open("A[w, w + 1]", table));
  // Under a division the operand is re-canonicalized.
  EXPECT_EQ(substitute(parse_open("A[(h + 1) / 2, 0]", table), iter("h"), add(mul(integer(2), t), integer(1))),
            parse_open("A[t + 1, 0]", table));
  EXPECT_THROW(substitute(parse("L<i:0:4> 1.0"), iter("i"), integer(0)), InternalError);
}

TEST(ExprUtils, NestedScopesAreLeftAlone) {
  TensorTable table = {{"A", tensor("A", {4})}};
  Expr body = parse_open("{ L<i:0:4> A[i] }[i] + i", table);
  Expr out = substitute(body, iter("i"), add(iter("j"), integer(1)));
  EXPECT_EQ(to_string(out), "{ L<i:0:4> A[i] }[j + 1] + (j + 1)");
}

TEST(ExprUtils, MapChildrenIdentityIsIdentity) {
  Expr e = parse("tensor A[8] L<i:0:8> relu(A[(i + 1) / 2] / 3.0) - A[i % 2]");
  Expr body = e->as<ScopeNode>().body();
  EXPECT_EQ(map_children(body, [](Expr c) { return c; }), body);
  EXPECT_EQ(map_children(e, [](Expr c) { return c; }), e);
}

}  // namespace
}  // namespace orchid::expr
