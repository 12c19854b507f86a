// primitive_expr: every covered primitive's expression, evaluated by the expr
// evaluator, against the reference interpreter's node on the same random
// float32 inputs; golden texts of a few forms; reasons for the uncovered ones.
#include "fission/primitive_expr.h"

#include <cmath>

#include "fission_test_util.h"
#include "ir/expr_eval.h"
#include "ir/expr_printer.h"

namespace orchid::fission {
namespace {

using namespace testing;

// The expression of `one`'s node agrees with the reference within 1e-5
// (relative to the magnitude of the expected value, at least 1).
void expect_expr_matches(const OneNode& one, uint32_t seed = 3) {
  const Graph& g = one.graph;
  const Node& node = g.nodes().at(0);
  std::string why;
  std::optional<expr::Expr> e = primitive_expr(node, g, &why);
  ASSERT_TRUE(e.has_value()) << node.describe() << ": " << why;
  std::map<std::string, Tensor> feeds = random_feeds(one, seed);
  std::vector<Tensor> held;
  held.reserve(node.inputs.size());
  std::vector<const Tensor*> inputs;
  for (ValueId id : node.inputs) {
    if (id == kNoValue) {
      inputs.push_back(nullptr);
      continue;
    }
    const Value& v = g.value(id);
    held.push_back(v.is_constant() ? *v.constant : feeds.at(v.name));
    inputs.push_back(&held.back());
  }
  const Tensor want = reference::evaluate_node(node, inputs).at(0);
  expr::TensorValues values;
  for (const auto& [name, id] : primitive_expr_bindings(node, *e)) {
    const size_t k = size_t(std::find(node.inputs.begin(), node.inputs.end(), id) - node.inputs.begin());
    expr::DenseTensor t = expr::DenseTensor::zeros(inputs[k]->shape());
    t.data = inputs[k]->to_f64_vector();
    values[name] = std::move(t);
  }
  const expr::DenseTensor got = expr::evaluate(*e, values);
  ASSERT_EQ(got.shape, want.shape()) << node.describe() << "\n" << expr::print_program(*e);
  const std::vector<double> w = want.to_f64_vector();
  ASSERT_EQ(got.data.size(), w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    ASSERT_NEAR(got.data[i], w[i], 1e-5 * std::max(1.0, std::abs(w[i])))
        << node.describe() << " at " << i << "\n" << expr::print_program(*e);
  }
}

std::string why_not(const OneNode& one) {
  std::string why;
  EXPECT_FALSE(primitive_expr(one.graph.nodes().at(0), one.graph, &why).has_value());
  return why;
}

std::string program(const OneNode& one) {
  std::optional<expr::Expr> e = primitive_expr(one.graph.nodes().at(0), one.graph);
  return e ? expr::print_program(*e) : "nullopt";
}

Input positive(Shape shape) { return var(std::move(shape), DType::Float32, 0.1, 3); }

// ---- Elementwise ---------------------------------------------------------------

TEST(PrimitiveExprElementwise, Unary) {
  for (const char* op : {"Relu", "Exp", "Tanh", "Sigmoid", "Neg", "Abs", "Erf", "Sinh", "Cosh"}) {
    SCOPED_TRACE(op);
    expect_expr_matches(one_node(op, {var({2, 3, 4})}));
  }
  for (const char* op : {"Sqrt", "Log", "Reciprocal"}) {
    SCOPED_TRACE(op);
    expect_expr_matches(one_node(op, {positive({3, 5})}));
  }
  expect_expr_matches(one_node("Relu", {var({})}));  // a scalar
  expect_expr_matches(one_node("Cast", {var({4, 2})}, attrs({{"to", int64_t(1)}})));
}

TEST(PrimitiveExprElementwise, BinaryBroadcasting) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}}, {{2, 1, 4}, {3, 1}}, {{1, 3, 1}, {2, 1, 5}}, {{}, {2, 3}}};
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    for (const auto& [a, b] : shapes) {
      SCOPED_TRACE(std::string(op) + " " + shape_to_string(a) + " " + shape_to_string(b));
      Input rhs = std::string(op) == "Div" ? positive(b) : var(b);
      expect_expr_matches(one_node(op, {var(a), rhs}));
    }
  }
  // A constant operand is a tensor like any other.
  expect_expr_matches(one_node("Mul", {var({2, 3}), cst(random_tensor(DType::Float32, {3}, 9))}));
}

TEST(PrimitiveExprElementwise, PowWithConstantExponent) {
  for (double e : {0.0, 0.5, -0.5, 1.0, 2.0, 3.0, -1.0, -2.0}) {
    SCOPED_TRACE(e);
    expect_expr_matches(one_node("Pow", {positive({2, 3}), cst(DType::Float32, {}, std::vector<double>{e})}));
    expect_expr_matches(one_node("Pow", {positive({2, 3}), cst(DType::Float32, {3}, std::vector<double>{e, e, e})}));
  }
}

// ---- Reduce --------------------------------------------------------------------

TEST(PrimitiveExprReduce, ReduceSumAxesAndKeepdims) {
  for (int64_t keepdims : {0, 1}) {
    Attributes a = attrs({{"keepdims", keepdims}});
    expect_expr_matches(one_node("ReduceSum", {var({2, 3, 4}), ints({1})}, a));
    expect_expr_matches(one_node("ReduceSum", {var({2, 3, 4}), ints({0, -1})}, a));
    expect_expr_matches(one_node("ReduceSum", {var({2, 3, 4}), ints({0, 1, 2})}, a));
  }
}

TEST(PrimitiveExprReduce, CumSum) {
  for (int64_t exclusive : {0, 1}) {
    for (int64_t reverse : {0, 1}) {
      for (int64_t axis : {0, 1, -1}) {
        SCOPED_TRACE(std::to_string(exclusive) + std::to_string(reverse) + std::to_string(axis));
        Attributes a = attrs({{"exclusive", exclusive}, {"reverse", reverse}});
        Input axis_input = cst(Tensor::from_vector(DType::Int64, {}, std::vector<int64_t>{axis}));
        expect_expr_matches(one_node("CumSum", {var({3, 5}), axis_input}, a));
      }
    }
  }
}

// ---- Layout --------------------------------------------------------------------

TEST(PrimitiveExprLayout, Transpose) {
  expect_expr_matches(one_node("Transpose", {var({2, 3, 4})}, attrs({{"perm", std::vector<int64_t>{2, 0, 1}}})));
  expect_expr_matches(one_node("Transpose", {var({2, 3, 4})}));
  expect_expr_matches(one_node("Transpose", {var({2, 3, 4, 5})}, attrs({{"perm", std::vector<int64_t>{0, 2, 1, 3}}})));
}

TEST(PrimitiveExprLayout, Reshape) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{2, 3, 4}, {6, 4}},    {{2, 3, 4}, {4, 6}},       {{6, 4}, {2, 3, 4}},    {{2, 3, 4}, {24}},
      {{24}, {2, 12}},        {{4, 6}, {3, 8}},          {{2, 1, 6}, {1, 3, 4}}, {{1, 12}, {3, 1, 4, 1}},
      {{2, 3, 4, 5}, {6, 20}}, {{2, 3, 4, 5}, {5, 4, 3, 2}}, {{6}, {6}},          {{1, 1}, {1}}};
  for (const auto& [in, shape] : cases) {
    SCOPED_TRACE(shape_to_string(in) + " -> " + shape_to_string(shape));
    expect_expr_matches(one_node("Reshape", {var(in), ints(shape)}));
  }
  expect_expr_matches(one_node("Reshape", {var({2, 0, 3}), ints({0, 6})}, attrs({{"allowzero", int64_t(1)}})));
}

TEST(PrimitiveExprLayout, Slice) {
  expect_expr_matches(one_node("Slice", {var({6, 5}), ints({1}), ints({4})}));
  expect_expr_matches(one_node("Slice", {var({6, 5}), ints({1, 0}), ints({100, -1}), ints({0, 1}), ints({2, 1})}));
  expect_expr_matches(one_node("Slice", {var({6, 5}), ints({-1}), ints({-100}), ints({0}), ints({-1})}));
  expect_expr_matches(one_node("Slice", {var({6, 5}), ints({4, 3}), ints({0, 0}), ints({1, 0}), ints({-2, -2})}));
  expect_expr_matches(one_node("Slice", {var({2, 6, 5}), ints({-3}), ints({100}), ints({-2}), ints({1})}));
}

TEST(PrimitiveExprLayout, Concat) {
  expect_expr_matches(one_node("Concat", {var({2, 3}), var({2, 4})}, attrs({{"axis", int64_t(1)}})));
  expect_expr_matches(one_node("Concat", {var({1, 3}), var({2, 3}), var({3, 3})}, attrs({{"axis", int64_t(0)}})));
  expect_expr_matches(one_node("Concat", {var({2, 2, 3}), var({2, 0, 3}), var({2, 1, 3})}, attrs({{"axis", int64_t(-2)}})));
}

TEST(PrimitiveExprLayout, PadWithZero) {
  expect_expr_matches(one_node("Pad", {var({3, 4}), ints({1, 2, 0, 1})}));
  expect_expr_matches(one_node("Pad", {var({3, 4}), ints({1, -1, -1, 2})}));
  expect_expr_matches(one_node("Pad", {var({2, 3, 4}), ints({2, 1}), cst(DType::Float32, {}, std::vector<double>{0}), ints({-1})}));
}

TEST(PrimitiveExprLayout, Expand) {
  expect_expr_matches(one_node("Expand", {var({3, 1}), ints({2, 3, 4})}));
  expect_expr_matches(one_node("Expand", {var({1, 4}), ints({3, 1})}));
  expect_expr_matches(one_node("Expand", {var({}), ints({2, 2})}));
}

TEST(PrimitiveExprLayout, GatherWithAffineConstantIndices) {
  expect_expr_matches(one_node("Gather", {var({5, 4}), ints({3})}));
  expect_expr_matches(one_node("Gather", {var({5, 4}), ints({1, 2, 3})}, attrs({{"axis", int64_t(1)}})));
  expect_expr_matches(one_node("Gather", {var({5, 4}), ints({4, 2, 0})}));
  expect_expr_matches(one_node("Gather", {var({5, 4}), ints({-1, -1})}));
  expect_expr_matches(one_node("Gather", {var({2, 5, 3}), cst(Tensor::from_vector(DType::Int64, {}, std::vector<int64_t>{-2}))},
                               attrs({{"axis", int64_t(1)}})));
  expect_expr_matches(one_node("Gather", {var({2, 7, 3}), cst(DType::Int64, {2, 3}, std::vector<int64_t>{0, 1, 2, 3, 4, 5})},
                               attrs({{"axis", int64_t(1)}})));
}

// ---- Linear --------------------------------------------------------------------

TEST(PrimitiveExprLinear, MatMul) {
  const std::vector<std::pair<Shape, Shape>> shapes = {{{3, 4}, {4, 5}}, {{2, 3, 4}, {4, 5}}, {{2, 1, 3, 4}, {3, 4, 2}},
                                                       {{4}, {4, 5}},    {{3, 4}, {4}},       {{4}, {4}},
                                                       {{2, 3, 4}, {4}}, {{4}, {2, 4, 3}}};
  for (const auto& [a, b] : shapes) {
    SCOPED_TRACE(shape_to_string(a) + " x " + shape_to_string(b));
    expect_expr_matches(one_node("MatMul", {var(a), var(b)}));
  }
}

TEST(PrimitiveExprLinear, Conv) {
  expect_expr_matches(one_node("Conv", {var({1, 3, 6, 5}), var({4, 3, 3, 3})}, attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}})));
  expect_expr_matches(one_node("Conv", {var({2, 2, 7, 7}), var({3, 2, 3, 2}), var({3})},
                               attrs({{"strides", std::vector<int64_t>{2, 1}}, {"dilations", std::vector<int64_t>{1, 2}},
                                      {"pads", std::vector<int64_t>{1, 0, 2, 1}}})));
  expect_expr_matches(one_node("Conv", {var({1, 4, 5, 5}), var({6, 2, 3, 3}), var({6})},
                               attrs({{"group", int64_t(2)}, {"auto_pad", std::string("SAME_UPPER")}})));
  expect_expr_matches(one_node("Conv", {var({1, 4, 5, 5}), var({4, 1, 3, 3})}, attrs({{"group", int64_t(4)}})));  // depthwise
  expect_expr_matches(one_node("Conv", {var({2, 3, 9}), var({2, 3, 3})}, attrs({{"strides", std::vector<int64_t>{3}}})));  // 1-D
  expect_expr_matches(one_node("Conv", {var({1, 2, 4, 4, 4}), var({2, 2, 2, 2, 2})}));  // 3-D
}

TEST(PrimitiveExprLinear, ConvTranspose) {
  expect_expr_matches(one_node("ConvTranspose", {var({1, 2, 4, 4}), var({2, 3, 3, 3})}));
  expect_expr_matches(one_node("ConvTranspose", {var({1, 2, 4, 3}), var({2, 3, 3, 3}), var({3})},
                               attrs({{"strides", std::vector<int64_t>{2, 3}}, {"pads", std::vector<int64_t>{1, 0, 1, 2}},
                                      {"output_padding", std::vector<int64_t>{1, 0}}})));
  expect_expr_matches(one_node("ConvTranspose", {var({1, 2, 4, 4}), var({2, 2, 3, 2})},
                               attrs({{"strides", std::vector<int64_t>{2, 2}}, {"dilations", std::vector<int64_t>{2, 3}}})));
  expect_expr_matches(one_node("ConvTranspose", {var({2, 4, 3}), var({4, 3, 2}), var({6})},
                               attrs({{"group", int64_t(2)}, {"strides", std::vector<int64_t>{2}}})));
}

TEST(PrimitiveExprLinear, ConvTransposeOutputShapeAndAutoPad) {
  expect_expr_matches(one_node("ConvTranspose", {var({1, 2, 3, 3}), var({2, 2, 3, 3})},
                               attrs({{"strides", std::vector<int64_t>{2, 2}}, {"output_shape", std::vector<int64_t>{8, 7}}})));
  expect_expr_matches(one_node("ConvTranspose", {var({1, 2, 3, 3}), var({2, 2, 3, 3})},
                               attrs({{"strides", std::vector<int64_t>{2, 2}}, {"auto_pad", std::string("SAME_LOWER")}})));
}

// ---- Bindings ----------------------------------------------------------------------

TEST(PrimitiveExprBindings, OneTensorPerInputPosition) {
  Graph g = one_node_graph("Mul", {var({2, 3}), var({3})});
  Node& node = g.nodes().at(0);
  node.inputs[1] = node.inputs[0];  // Mul(x, x)
  std::optional<expr::Expr> e = primitive_expr(node, g);
  ASSERT_TRUE(e.has_value());
  const std::vector<std::pair<std::string, ValueId>> want = {{"in0", node.inputs[0]}, {"in1", node.inputs[0]}};
  EXPECT_EQ(primitive_expr_bindings(node, *e), want);
  EXPECT_EQ(primitive_expr_input_name(2), "in2");
  // Shape-deciding constants are folded, not tensors.
  OneNode reshape = one_node("Reshape", {var({2, 3}), ints({3, 2})});
  const Node& r = reshape.graph.nodes().at(0);
  EXPECT_EQ(primitive_expr_bindings(r, *primitive_expr(r, reshape.graph)).size(), 1u);
}

// ---- Golden texts ------------------------------------------------------------------

TEST(PrimitiveExprGolden, Relu) {
  EXPECT_EQ(program(one_node("Relu", {var({2, 3})})), "tensor in0[2, 3]\nL<i0:0:2, i1:0:3> relu(in0[i0, i1])");
}

TEST(PrimitiveExprGolden, MatMul2D) {
  EXPECT_EQ(program(one_node("MatMul", {var({3, 4}), var({4, 5})})),
            "tensor in0[3, 4]\ntensor in1[4, 5]\nL<i0:0:3, i1:0:5> Sum<r0:0:4> in0[i0, r0] * in1[r0, i1]");
}

TEST(PrimitiveExprGolden, Conv3x3) {
  EXPECT_EQ(program(one_node("Conv", {var({1, 3, 6, 5}), var({4, 3, 3, 3})},
                             attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}))),
            "tensor in0[1, 3, 6, 5] pad [0, 0, 1, 1]\n"
            "tensor in1[4, 3, 3, 3]\n"
            "L<i0:0:1, i1:0:4, i2:0:6, i3:0:5> Sum<r0:0:3, r1:0:3, r2:0:3> "
            "in0[i0, r0, i2 + r1 - 1, i3 + r2 - 1] * in1[i1, r0, r1, r2]");
}

TEST(PrimitiveExprGolden, ReshapeThroughTheFlatIndex) {
  EXPECT_EQ(program(one_node("Reshape", {var({2, 3, 4}), ints({6, 1, 4})})),
            "tensor in0[2, 3, 4]\nL<i0:0:6, i1:0:1, i2:0:4> in0[i0 / 3, i0 % 3, i2]");
  EXPECT_EQ(program(one_node("Reshape", {var({4, 6}), ints({3, 8})})),
            "tensor in0[4, 6]\nL<i0:0:3, i1:0:8> in0[i0 + (2*i0 + i1) / 6, (2*i0 + i1) % 6]");
}

TEST(PrimitiveExprGolden, ConcatIsASumOfShiftedReads) {
  EXPECT_EQ(program(one_node("Concat", {var({2}), var({3})}, attrs({{"axis", int64_t(0)}}))),
            "tensor in0[2]\ntensor in1[3]\nL<i0:0:5> in0[i0] + in1[i0 - 2]");
}

TEST(PrimitiveExprGolden, DilatedConvTransposeIsGuarded) {
  EXPECT_EQ(program(one_node("ConvTranspose", {var({1, 1, 3}), var({1, 1, 2})},
                             attrs({{"strides", std::vector<int64_t>{2}}, {"dilations", std::vector<int64_t>{2}}}))),
            "tensor in0[1, 1, 3]\n"
            "tensor in1[1, 1, 2]\n"
            "L<i0:0:1, i1:0:1, i2:0:7> Sum<r0:0:1, r1:0:3> "
            "in0[i0, r0, r1] * in1[r0, i1, -r1 + i2 / 2] * { L<q:0:1> 1.0 }[i2 % 2]");
}

// ---- Unsupported ----------------------------------------------------------------------

TEST(PrimitiveExprUnsupported, Reasons) {
  EXPECT_EQ(why_not(one_node("ReduceMax", {var({2, 3}), ints({1})})),
            "ReduceMax: the Expr IR has only summation (Sum<>); it has no max, min or product reduction");
  EXPECT_EQ(why_not(one_node("ArgMax", {var({2, 3})})),
            "ArgMax: an index of an extreme element is data dependent; the Expr IR has no comparison");
  EXPECT_EQ(why_not(one_node("Where", {var({2, 3}, DType::Bool), var({2, 3}), var({2, 3})})),
            "Where: the Expr IR has no comparison or select, so conditions cannot be expressed");
  EXPECT_EQ(why_not(one_node("Sin", {var({2, 3})})), "Sin: no function of the Expr IR's Func set computes it");
  EXPECT_EQ(why_not(one_node("Gather", {var({5, 4}), var({3}, DType::Int64, 0, 5)})), "Gather: runtime indices make the index map data dependent");
  EXPECT_EQ(why_not(one_node("Gather", {var({5, 4}), ints({0, 3, 1})})),
            "Gather: the constant indices are not an affine function of their position");
  EXPECT_EQ(why_not(one_node("Pad", {var({3, 4}), ints({1, 1, 1, 1}), cst(DType::Float32, {}, std::vector<double>{1.5})})),
            "Pad: pad value 1.500000: zero padding is the only padding the IR has");
  EXPECT_EQ(why_not(one_node("Add", {var({2}, DType::Int64), var({2}, DType::Int64)})),
            "Add: input 0 is int64: the Expr IR computes in real (floating-point) arithmetic");
  EXPECT_EQ(why_not(one_node("Pow", {var({2}), var({2})})),
            "Pow: runtime exponent: the Func set has no pow (exp(y * log(x)) is wrong for x <= 0)");
  EXPECT_EQ(why_not(one_node("Pow", {var({2}), cst(DType::Float32, {}, std::vector<double>{1.5})})),
            "Pow: exponent 1.500000 is not one of 0, +-0.5, 1, 2, 3, -1, -2: the Func set has no pow "
            "(exp(y * log(x)) is wrong for x <= 0)");
  EXPECT_EQ(why_not(one_node("Cast", {var({2})}, attrs({{"to", int64_t(7)}}))),
            "Cast: a cast from float32 to int64 rounds, which the Expr IR does not express");
  EXPECT_EQ(why_not(one_node("TopK", {var({5}), ints({2})}, {}, 2)),
            "TopK: an opaque primitive (data-dependent output or control) has no expression form");
  EXPECT_EQ(why_not(one_node("Softmax", {var({5})})), "Softmax: not a primitive (fission rewrites it first)");
}

}  // namespace
}  // namespace orchid::fission
