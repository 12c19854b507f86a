// Printer/parser round trips and parse errors of the expr text form.
#include "ir/expr_parser.h"

#include <gtest/gtest.h>

#include "ir/expr_printer.h"

namespace orchid::expr {
namespace {

// Each program parses; printing it and parsing again gives the same node, and
// printing is stable.
const char* const kPrograms[] = {
    // Conv 3x3, pad 1, NHWC x RSFC.
    ("tensor A[1,7,7,8]\ntensor K[3,3,16,8]\n"
     "L<n:0:1, h:0:7, w:0:7, f:0:16> Sum<c:0:8, r:0:3, s:0:3> A[n, h+r-1, w+s-1, c] * K[r, s, f, c]"),
    // MatMul and batched MatMul.
    "tensor A[4,3] tensor B[3,5] L<i:0:4, j:0:5> Sum<k:0:3> A[i, k] * B[k, j]",
    "tensor A[2,4,3] tensor B[2,3,5] L<b:0:2, i:0:4, j:0:5> Sum<k:0:3> A[b, i, k] * B[b, k, j]",
    // Two stages: a nested scope read as an intermediate tensor.
    "tensor A[4,3] tensor B[3,5] L<i:0:4, j:0:5> Sum<k:0:3> { L<a:0:4, b:0:3> relu(A[a, b]) }[i, k] * B[k, j]",
    // Three stages, the inner one padded and tightened.
    "tensor A[8] L<i:0:8> { L<j:1:7 pad 1> Sum<t:0:3> { L<u:0:8> exp(A[u]) }[j + t - 1] }[i] * 0.5",
    // Div and mod indices (floor semantics), strides and dilation.
    "tensor X[4,2,4] L<h:0:8, w:0:8> X[h / 2, (w + 1) % 2, (h + w) / 4]",
    "tensor X[1,9,9,4] tensor K[3,3,4] L<h:0:4, w:0:4> Sum<c:0:4, r:0:3, s:0:3> X[0, 2*h + 2*r - 1, 2*w + s, c] * K[r, "
    "s, c]",
    "tensor X[8] tensor K[4] L<h:0:16> Sum<r:0:4> X[(h - r + 1) / 2] * K[r] * (1.0 - (h - r + 1) % 2)",
    // Functions and float arithmetic.
    "tensor A[8] L<i:0:8> exp(A[i]) / (1.0 + abs(A[i])) - tanh(sigmoid(A[i])) * neg(sqrt(log(erf(A[i]))))",
    "tensor A[8] L<i:0:8> -A[i] * -2.5 + 3.0 * i - (A[i] - (A[i] - 1e-07)) / (A[i] / 2.0)",
    // Nonzero and negative range starts, output padding.
    "tensor A[7,7] L<h:1:6 pad 1, w:-1:8> A[h - 1, w + 1]",
    // A scalar output, an index-valued body, a banded G2BMM.
    "tensor A[4] L<> Sum<i:0:4> A[i]",
    "L<i:0:4, j:0:3> 2*i - j + 1",
    "tensor A[2,6,4] tensor B[2,6,4] L<b:0:2, m:0:6, w:0:5> Sum<k:0:4> A[b, m, k] * B[b, m + w - 2, k]",
    // Padded input tensor and comments.
    "# a comment\ntensor P[4] pad [1]  # trailing\nL<i:-1:5> P[i]",
};

TEST(ExprParser, RoundTrips) {
  for (const char* text : kPrograms) {
    SCOPED_TRACE(text);
    Expr e = parse(text);
    ASSERT_TRUE(e->is<ScopeNode>());
    const std::string printed = print_program(e);
    EXPECT_EQ(parse(printed), e) << printed;
    EXPECT_EQ(print_program(parse(printed)), printed);
  }
}

TEST(ExprParser, PrintsReadableCanonicalText) {
  Expr conv = parse(kPrograms[0]);
  EXPECT_EQ(print_program(conv),
            "tensor A[1, 7, 7, 8]\ntensor K[3, 3, 16, 8]\n"
            "L<n:0:1, h:0:7, w:0:7, f:0:16> Sum<c:0:8, r:0:3, s:0:3> A[n, h + r - 1, s + w - 1, c] * K[r, s, f, c]");
  EXPECT_EQ(to_string(parse(kPrograms[10])), "L<h:1:6 pad 1, w:-1:8> A[h - 1, w + 1]");
}

TEST(ExprParser, SymbolTableAndOpenExpressions) {
  TensorTable table = {{"A", tensor("A", {4, 3})}, {"B", tensor("B", {3, 5})}};
  Expr mm = parse("L<i:0:4, j:0:5> Sum<k:0:3> A[i, k] * B[k, j]", table);
  EXPECT_EQ(parse(to_string(mm), table), mm);
  Expr body = parse_open("A[i, k] * B[k, j]", table);
  EXPECT_EQ(body, mm->as<ScopeNode>().body());
  EXPECT_EQ(parse_open("h + r - 1"), parse_open("r - 1 + h"));
}

// Parses `text` expecting an orchid::Error whose message names the position.
void expect_error(std::string_view text, int line, int column, std::string_view fragment) {
  SCOPED_TRACE(text);
  try {
    parse(text);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string message = e.what();
    const std::string where = "line " + std::to_string(line) + ", column " + std::to_string(column) + ":";
    EXPECT_NE(message.find(where), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

TEST(ExprParser, ErrorsNameLineAndColumn) {
  expect_error("L<i:0:4> A[i]", 1, 10, "unknown tensor 'A'");
  expect_error("tensor A[4]\nL<i:0:4> A[j]", 2, 12, "iterator 'j' is not bound");
  expect_error("tensor A[4]\nL<i:0:4> A[i", 2, 13, "expected ']'");
  expect_error("tensor A[4]\n\n  L<i:0:4> A[i] $", 3, 17, "unexpected character '$'");
  expect_error("tensor A[4,4] L<i:0:4, j:0:4> A[i % j, 0]", 1, 35, "positive integer constant divisor");
  expect_error("tensor A[4] L<i:0:4> A[i, i]", 1, 22, "access has 2 indices");
  expect_error("tensor A[4] L<i:0:4> A[A[i]]", 1, 22, "not an integer affine expression");
  expect_error("tensor A[4] L<i:0:4> { L<j:0:4> A[i] }[i]", 1, 35, "scopes are closed");
  expect_error("tensor A[4] L<i:4:0> A[i]", 1, 15, "lo > hi");
  expect_error("tensor A[4] L<i:0:4, i:0:2> A[i]", 1, 22, "declared twice");
  expect_error("tensor A[4] tensor A[5] L<i:0:4> A[i]", 1, 20, "redeclared");
  expect_error("tensor A[4] L<i:0:4> foo(A[i])", 1, 22, "unknown function 'foo'");
  expect_error("tensor A[4] L<i:0:4> A[i] +", 1, 28, "end of input");
  expect_error("tensor A[4] L<i:0:4> A[i] B", 1, 27, "after the expression");
  expect_error("L<i:0:4> i / 0", 1, 12, "non-positive");
  expect_error("L<pad:0:4> 1.0", 1, 3, "reserved word");
  expect_error("L<i:0:4> Sum<k:0:3 pad 1> 1.0", 1, 20, "loop iterators only");
}

}  // namespace
}  // namespace orchid::expr
