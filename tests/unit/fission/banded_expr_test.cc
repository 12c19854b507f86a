// The banded matmuls G2BMM and GBMM (ai.orchid) as linear primitives: their
// primitive kind, their expressions evaluated against the reference
// operator on random inputs, golden texts, and that a default-domain
// operator of the same name is not mistaken for them.
#include <cmath>

#include "fission/primitive_expr.h"
#include "fission_test_util.h"
#include "ir/expr_eval.h"
#include "ir/expr_printer.h"

namespace orchid::fission {
namespace {

using namespace testing;

// A graph of one banded node over inputs A and B (graph inputs "a", "b").
Graph banded_graph(const std::string& op, Shape a, Shape b, int64_t width, int64_t dilation,
                   const std::string& domain = "ai.orchid") {
  Graph g;
  Node node;
  node.name = op + "0";
  node.op = op;
  node.domain = domain;
  node.attrs.set("width", width);
  node.attrs.set("dilation", dilation);
  node.inputs = {g.add_value("a", {DType::Float32, std::move(a)}), g.add_value("b", {DType::Float32, std::move(b)})};
  g.inputs() = node.inputs;
  // A default-domain G2BMM has no schema: give it the banded output shape by hand.
  Node as_banded = node;
  as_banded.domain = "ai.orchid";
  const std::vector<TensorType> out =
      reference::infer_node(as_banded, {&g.type(node.inputs[0]), &g.type(node.inputs[1])}, {nullptr, nullptr});
  node.outputs = {g.add_value("c", out[0])};
  g.outputs() = node.outputs;
  g.add_node(std::move(node));
  return g;
}

// The expression agrees with the reference operator within 1e-5.
void expect_expr_matches(const Graph& g, uint32_t seed = 5) {
  const Node& node = g.nodes().at(0);
  std::string why;
  std::optional<expr::Expr> e = primitive_expr(node, g, &why);
  ASSERT_TRUE(e.has_value()) << node.describe() << ": " << why;
  const Tensor a = random_tensor(DType::Float32, g.type(node.inputs[0]).shape, seed);
  const Tensor b = random_tensor(DType::Float32, g.type(node.inputs[1]).shape, seed + 1);
  const Tensor want = reference::evaluate_node(node, {&a, &b}).at(0);
  expr::TensorValues values;
  for (const auto& [name, id] : primitive_expr_bindings(node, *e)) {
    const Tensor& t = id == node.inputs[0] ? a : b;
    expr::DenseTensor dense = expr::DenseTensor::zeros(t.shape());
    dense.data = t.to_f64_vector();
    values[name] = std::move(dense);
  }
  const expr::DenseTensor got = expr::evaluate(*e, values);
  ASSERT_EQ(got.shape, want.shape());
  const std::vector<double> w = want.to_f64_vector();
  for (size_t i = 0; i < w.size(); ++i) {
    ASSERT_NEAR(got.data[i], w[i], 1e-5 * std::max(1.0, std::abs(w[i]))) << "at " << i << "\n"
                                                                         << expr::print_program(*e);
  }
}

std::string program(const Graph& g) {
  std::optional<expr::Expr> e = primitive_expr(g.nodes().at(0), g);
  return e ? expr::print_program(*e) : "nullopt";
}

TEST(BandedPrimitive, KindIsLinearOnlyInTheOrchidDomain) {
  const Graph g2 = banded_graph("G2BMM", {2, 5, 3}, {2, 5, 3}, 1, 1);
  const Graph g = banded_graph("GBMM", {2, 5, 3}, {2, 5, 4}, 1, 1);
  EXPECT_EQ(primitive_kind(g2.nodes()[0], g2), PrimitiveKind::Linear);
  EXPECT_EQ(primitive_kind(g.nodes()[0], g), PrimitiveKind::Linear);
  for (const char* domain : {"", "com.example"}) {
    const Graph other = banded_graph("G2BMM", {2, 5, 3}, {2, 5, 3}, 1, 1, domain);
    EXPECT_FALSE(primitive_kind(other.nodes()[0], other).has_value()) << domain;
    std::string why;
    EXPECT_FALSE(primitive_expr(other.nodes()[0], other, &why).has_value()) << domain;
  }
  // Other operators of the ai.orchid domain are not primitives.
  Graph unknown = banded_graph("G2BMM", {2, 5, 3}, {2, 5, 3}, 1, 1);
  unknown.nodes()[0].op = "Other";
  EXPECT_FALSE(primitive_kind(unknown.nodes()[0], unknown).has_value());
}

TEST(BandedPrimitive, FissionKeepsThem) {
  const Graph g = banded_graph("G2BMM", {1, 6, 4}, {1, 7, 4}, 2, 2);
  const Graph out = fission(g);
  ASSERT_EQ(out.nodes().size(), 1u);
  EXPECT_EQ(out.nodes()[0].domain, "ai.orchid");
  EXPECT_EQ(out.nodes()[0].op, "G2BMM");
}

TEST(BandedExpr, G2BMMMatchesTheReference) {
  struct Case { Shape a, b; int64_t w, d; };
  for (const Case& c : std::vector<Case>{{{2, 7, 5}, {2, 7, 5}, 2, 1},
                                         {{1, 6, 3}, {1, 6, 3}, 0, 1},
                                         {{2, 9, 4}, {2, 9, 4}, 2, 2},
                                         {{1, 5, 3}, {1, 8, 3}, 3, 1},
                                         {{3, 8, 2}, {3, 4, 2}, 2, 3},
                                         {{1, 4, 6}, {1, 4, 6}, 6, 1}}) {
    SCOPED_TRACE(shape_to_string(c.a) + " " + shape_to_string(c.b) + " W=" + std::to_string(c.w) +
                 " d=" + std::to_string(c.d));
    expect_expr_matches(banded_graph("G2BMM", c.a, c.b, c.w, c.d));
  }
}

TEST(BandedExpr, GBMMMatchesTheReference) {
  struct Case { Shape a, b; int64_t w, d; };
  for (const Case& c : std::vector<Case>{{{2, 7, 5}, {2, 7, 3}, 2, 1},
                                         {{1, 6, 1}, {1, 6, 4}, 0, 1},
                                         {{2, 9, 5}, {2, 9, 4}, 2, 2},
                                         {{1, 5, 7}, {1, 8, 2}, 3, 1},
                                         {{3, 8, 5}, {3, 4, 3}, 2, 3}}) {
    SCOPED_TRACE(shape_to_string(c.a) + " " + shape_to_string(c.b) + " W=" + std::to_string(c.w) +
                 " d=" + std::to_string(c.d));
    expect_expr_matches(banded_graph("GBMM", c.a, c.b, c.w, c.d));
  }
}

TEST(BandedExpr, GoldenTexts) {
  EXPECT_EQ(program(banded_graph("G2BMM", {2, 6, 4}, {2, 7, 4}, 3, 2)),
            "tensor in0[2, 6, 4]\n"
            "tensor in1[2, 7, 4]\n"
            "L<i0:0:2, i1:0:6, i2:0:7> Sum<r0:0:4> in0[i0, i1, r0] * in1[i0, i1 + 2*i2 - 6, r0]");
  EXPECT_EQ(program(banded_graph("GBMM", {2, 6, 7}, {2, 7, 5}, 3, 1)),
            "tensor in0[2, 6, 7]\n"
            "tensor in1[2, 7, 5]\n"
            "L<i0:0:2, i1:0:6, i2:0:5> Sum<r0:0:7> in0[i0, i1, r0] * in1[i0, i1 + r0 - 3, i2]");
}

}  // namespace
}  // namespace orchid::fission
