// Instantiation of derivation states: each state is emitted into a small
// graph, run by the reference interpreter on random inputs and compared
// with the expression evaluator on the same inputs; the operators chosen
// are checked too.
#include "derivation/instantiate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "ir/expr_eval.h"
#include "ir/expr_parser.h"
#include "ir/expr_utils.h"
#include "reference/interpreter.h"

namespace orchid::derivation {
namespace {

using expr::DenseTensor;

struct Instantiated {
  Graph graph;
  std::string error;
};

Tensor to_tensor(const DenseTensor& t) {
  std::vector<float> values(t.data.begin(), t.data.end());
  return Tensor::from_vector(DType::Float32, t.shape, values);
}

// Instantiates `text` with its tensors as graph inputs (or constants, for
// the names in `constants`), runs the graph and the evaluator on the same
// random inputs and expects equal results.
Instantiated instantiate_and_check(const std::string& text, const std::set<std::string>& constants = {},
                                   uint64_t seed = 7) {
  Expr state = expr::parse(text);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  expr::TensorValues values;
  Instantiated out;
  std::map<std::string, ValueId, std::less<>> bound;
  std::map<std::string, Tensor> feeds;
  for (Expr t : expr::free_tensors(state)) {
    const auto& tensor = t->as<expr::TensorNode>();
    DenseTensor v = DenseTensor::zeros(tensor.shape());
    for (double& x : v.data) x = dist(rng);
    values[tensor.name()] = v;
    if (constants.count(tensor.name())) {
      bound[tensor.name()] = out.graph.add_constant(tensor.name(), to_tensor(v));
    } else {
      bound[tensor.name()] = out.graph.add_value(tensor.name(), {DType::Float32, tensor.shape()});
      out.graph.inputs().push_back(bound[tensor.name()]);
      feeds[tensor.name()] = to_tensor(v);
    }
  }
  Node origin;
  origin.name = "state";
  fission::FissionBuilder builder(out.graph, origin);
  ValueId result = kNoValue;
  try {
    result = instantiate(state, bound, builder);
  } catch (const Error& e) {
    out.error = e.what();
    ADD_FAILURE() << "instantiate failed: " << e.what();
    return out;
  }
  out.graph.outputs().push_back(result);
  std::vector<Tensor> got = reference::run_graph(out.graph, feeds);
  DenseTensor want = expr::evaluate(state, values);
  EXPECT_EQ(got[0].shape(), want.shape);
  if (got[0].shape() != want.shape) return out;
  std::vector<double> g = got[0].to_f64_vector();
  double scale = 1, worst = 0;
  for (double w : want.data) scale = std::max(scale, std::abs(w));
  for (size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::abs(g[i] - want.data[i]));
  EXPECT_LE(worst, 1e-4 * scale) << "instantiation differs from the evaluator for\n" << text;
  return out;
}

size_t count_ops(const Graph& g, const std::string& op, const std::string& domain = "") {
  return size_t(std::count_if(g.nodes().begin(), g.nodes().end(),
                              [&](const Node& n) { return n.op == op && n.domain == domain; }));
}

const Node* first_op(const Graph& g, const std::string& op, const std::string& domain = "") {
  for (const Node& n : g.nodes()) {
    if (n.op == op && n.domain == domain) return &n;
  }
  return nullptr;
}

const char* kConv3x3AsMatMul = R"(
  tensor A[1,8,6,6] tensor K[16,8,3,3]
  L<n:0:1, f:0:16, h:0:6, w:0:6> Sum<r:0:3, s:0:3>
    { L<n:0:1, f:0:16, t:0:6, u:0:6, r:0:3, s:0:3> Sum<c:0:8> A[n, c, t, u] * K[f, c, r, s] }[n, f, h + r - 1, w + s - 1, r, s]
)";

const char* kDilatedSpaceToBatch = R"(
  tensor A[1,8,8,8] tensor K[16,8,3,3]
  L<n:0:1, f:0:16, h:0:8, w:0:8>
    { L<n:0:1, f:0:16, h1:0:4, h2:0:2, w1:0:4, w2:0:2> Sum<c:0:8, r:0:3, s:0:3>
        { L<n:0:1, c:0:8, a:0:4, b:0:2, a2:0:4, b2:0:2> A[n, c, 2*a + b, 2*a2 + b2] }[n, c, h1 + r - 1, h2, w1 + s - 1, w2]
        * K[f, c, r, s] }[n, f, h/2, h%2, w/2, w%2]
)";

TEST(Instantiate, PlainMatMul) {
  Instantiated r = instantiate_and_check(
      "tensor A[4,5] tensor B[5,3] L<i:0:4, "
      "j:0:3> Sum<k:0:5> A[i, k] * B[k, j]");
  EXPECT_EQ(count_ops(r.graph, "MatMul"), 1u);
  EXPECT_EQ(r.graph.nodes().size(), 1u);
}

TEST(Instantiate, BatchedMatMulWithTransposedOperandAndScale) {
  Instantiated r = instantiate_and_check(
      "tensor A[2,4,5] tensor B[2,3,5] L<b:0:2, j:0:3, "
      "i:0:4> Sum<k:0:5> 2.0 * A[b, i, k] * B[b, j, k]");
  EXPECT_EQ(count_ops(r.graph, "MatMul"), 1u);
  const Node* mm = first_op(r.graph, "MatMul");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(r.graph.type(mm->inputs[0]).shape, (Shape{2, 4, 5}));
  EXPECT_EQ(r.graph.type(mm->inputs[1]).shape, (Shape{2, 5, 3}));
}

TEST(Instantiate, Conv3x3AsMatMulAndOffsetSum) {
  Instantiated r = instantiate_and_check(kConv3x3AsMatMul);
  EXPECT_EQ(count_ops(r.graph, "MatMul"), 1u);
  EXPECT_EQ(count_ops(r.graph, "Conv"), 0u);
  EXPECT_EQ(count_ops(r.graph, "Gather"), 0u);
  EXPECT_EQ(count_ops(r.graph, "Add"), 8u);
  const Node* mm = first_op(r.graph, "MatMul");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(r.graph.type(mm->inputs[0]).shape, (Shape{36, 8}));
  EXPECT_EQ(r.graph.type(mm->inputs[1]).shape, (Shape{8, 144}));
}

TEST(Instantiate, WeightsAsConstantsAreLaidOutAtCompileTime) {
  Instantiated as_input = instantiate_and_check(kConv3x3AsMatMul);
  Instantiated as_constant = instantiate_and_check(kConv3x3AsMatMul, {"K"});
  EXPECT_EQ(count_ops(as_constant.graph, "MatMul"), 1u);
  // K's Transpose/Reshape are folded into a constant operand.
  EXPECT_LT(as_constant.graph.nodes().size(), as_input.graph.nodes().size());
  const Node* mm = first_op(as_constant.graph, "MatMul");
  ASSERT_NE(mm, nullptr);
  EXPECT_TRUE(as_constant.graph.value(mm->inputs[1]).is_constant());
}

TEST(Instantiate, DirectConvWithPadding) {
  Instantiated r = instantiate_and_check(R"(
    tensor A[1,8,6,6] tensor K[16,8,3,3]
    L<n:0:1, f:0:16, h:0:6, w:0:6> Sum<c:0:8, r:0:3, s:0:3> A[n, c, h + r - 1, w + s - 1] * K[f, c, r, s])");
  EXPECT_EQ(count_ops(r.graph, "Conv"), 1u);
  EXPECT_EQ(r.graph.nodes().size(), 1u);
  const Node* conv = first_op(r.graph, "Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->attrs.get_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
}

TEST(Instantiate, StridedConv) {
  Instantiated r = instantiate_and_check(R"(
    tensor A[1,3,9,9] tensor K[4,3,3,3]
    L<n:0:1, f:0:4, h:0:4, w:0:4> Sum<c:0:3, r:0:3, s:0:3> A[n, c, 2*h + r - 1, 2*w + s - 1] * K[f, c, r, s])");
  const Node* conv = first_op(r.graph, "Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->attrs.get_ints("strides"), (std::vector<int64_t>{2, 2}));
}

TEST(Instantiate, ConvWithShiftedTapsAndDilation) {
  Instantiated r = instantiate_and_check(R"(
    tensor A[1,2,8] tensor K[3,2,4]
    L<n:0:1, f:0:3, h:0:6> Sum<c:0:2, r:1:4> A[n, c, h + 2*r - 3] * K[f, c, r])");
  const Node* conv = first_op(r.graph, "Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->attrs.get_ints("dilations"), (std::vector<int64_t>{2}));
}

TEST(Instantiate, MatMulReadingAScopeWithNonzeroOrigin) {
  Instantiated r = instantiate_and_check(R"(
    tensor X[4,5] tensor B[5,3]
    L<i:0:6, j:0:3> Sum<k:0:5> { L<i:1:5, k:0:5> X[i - 1, k] * 2.0 }[i, k] * B[k, j])");
  EXPECT_EQ(count_ops(r.graph, "MatMul"), 1u);
  EXPECT_EQ(count_ops(r.graph, "Pad"), 1u);
}

TEST(Instantiate, DilatedConvAfterSpaceToBatch) {
  Instantiated r = instantiate_and_check(kDilatedSpaceToBatch);
  EXPECT_EQ(count_ops(r.graph, "Conv"), 1u);
  const Node* conv = first_op(r.graph, "Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->attrs.get_ints("dilations"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(r.graph.type(conv->inputs[0]).shape[0], 4);
  EXPECT_EQ(count_ops(r.graph, "Gather"),
            0u);  // h/2, h%2 and 2*a + b are reshapes
}

TEST(Instantiate, Conv5x5AsConv3x3WithFourTimesTheChannels) {
  Instantiated r = instantiate_and_check(R"(
    tensor A[1,2,8,8] tensor K[3,2,5,5]
    L<n:0:1, f:0:3, h:0:8, w:0:8> Sum<r1:0:2, s1:0:2>
      { L<n:0:1, f:0:3, r1:0:2, s1:0:2, t:0:11, u:0:11> Sum<c:0:2, r2:0:3, s2:0:3>
          A[n, c, t + r2 - 2, u + s2 - 2] * K[f, c, 3*r1 + r2, 3*s1 + s2] }[n, f, r1, s1, h + 3*r1, w + 3*s1])");
  const Node* conv = first_op(r.graph, "Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(count_ops(r.graph, "Conv"), 1u);
  EXPECT_EQ(r.graph.type(conv->inputs[1]).shape, (Shape{12, 2, 3, 3}));
}

TEST(Instantiate, DepthwiseConv) {
  // The group iterator g alone in both operands: one channel per group.
  Instantiated r = instantiate_and_check(R"(
    tensor A[1,4,6,6] pad [0,0,1,1] tensor K[4,1,3,3]
    L<n:0:1, g:0:4, h:0:6, w:0:6> Sum<r:0:3, s:0:3> A[n, g, h + r - 1, w + s - 1] * K[g, 0, r, s])");
  const Node* conv = first_op(r.graph, "Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->attrs.get_int("group", 1), 4);
  EXPECT_EQ(r.graph.type(conv->inputs[1]).shape, (Shape{4, 1, 3, 3}));
  EXPECT_EQ(count_ops(r.graph, "Gather"), 0u);
  // 1-D, no batch: each of the two rows of A convolved with its own row of B.
  Instantiated one_d = instantiate_and_check("tensor A[2,5] tensor B[2,5] L<g:0:2, i:0:3> Sum<k:0:3> A[g, k + i] * B[g, k]");
  const Node* conv1d = first_op(one_d.graph, "Conv");
  ASSERT_NE(conv1d, nullptr);
  EXPECT_EQ(conv1d->attrs.get_int("group", 1), 2);
}

TEST(Instantiate, GroupedConvWithItsChannelsAsGTimesCPlusC) {
  // Two groups of three input and two output channels, the loops in another
  // order than the operator's (f before g), dilated along the width.
  Instantiated r = instantiate_and_check(R"(
    tensor A[2,6,5,7] tensor K[4,3,3,2]
    L<n:0:2, f:0:2, g:0:2, h:0:3, w:0:5> Sum<c:0:3, r:0:3, s:0:2>
      A[n, 3*g + c, h + r, w + 2*s] * K[2*g + f, c, r, s])");
  const Node* conv = first_op(r.graph, "Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->attrs.get_int("group", 1), 2);
  EXPECT_EQ(r.graph.type(conv->inputs[0]).shape, (Shape{2, 6, 5, 7}));
  EXPECT_EQ(r.graph.type(conv->inputs[1]).shape, (Shape{4, 3, 3, 2}));
  EXPECT_EQ(count_ops(r.graph, "Gather"), 0u);
}

TEST(Instantiate, DepthwiseConvWithAMultiplier) {
  // c in both operands, alone in each; B's output channels f in another
  // dimension: a depthwise Conv with multiplier 3 (weights laid out [c, f]).
  Instantiated r = instantiate_and_check(R"(
    tensor A[1,2,6,6] tensor K[3,2,3,3]
    L<n:0:1, f:0:3, c:0:2, h:0:4, w:0:4> Sum<r:0:3, s:0:3> A[n, c, h + r, w + s] * K[f, c, r, s])");
  const Node* conv = first_op(r.graph, "Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->attrs.get_int("group", 1), 2);
  EXPECT_EQ(r.graph.type(conv->inputs[1]).shape, (Shape{6, 1, 3, 3}));
}

TEST(Instantiate, AGroupThatIsNotGTimesTheChannelsIsNotAConv) {
  // g*2 + c with c of extent 3: the groups' channels overlap, not a grouped Conv.
  std::string why;
  EXPECT_FALSE(instantiable(expr::parse(R"(
    tensor A[1,7,5,5] tensor K[4,3,3,3]
    L<n:0:1, g:0:2, f:0:2, h:0:3, w:0:3> Sum<c:0:3, r:0:3, s:0:3>
      A[n, 2*g + c, h + r, w + s] * K[2*g + f, c, r, s])"), &why));
}

TEST(Instantiate, ConvTransposeAsMatMulAndSum) {
  Instantiated r = instantiate_and_check(R"(
    tensor X[1,3,5] tensor W[3,2,4]
    L<n:0:1, m:0:2, o:0:10> Sum<i:0:5>
      { L<n:0:1, m:0:2, t:0:4, i:0:5> Sum<c:0:3> X[n, c, i] * W[c, m, t] }[n, m, o + 1 - 2*i, i])");
  EXPECT_EQ(count_ops(r.graph, "MatMul"), 1u);
  EXPECT_EQ(count_ops(r.graph, "Gather"), 0u);
}

TEST(Instantiate, ConvTransposeWithoutUnrolling) {
  // 80 input positions: more than the unrolling limit, so ReduceSum.
  Instantiated r = instantiate_and_check(R"(
    tensor X[1,2,80] tensor W[2,2,4]
    L<n:0:1, m:0:2, o:0:160> Sum<i:0:80>
      { L<n:0:1, m:0:2, t:0:4, i:0:80> Sum<c:0:2> X[n, c, i] * W[c, m, t] }[n, m, o + 1 - 2*i, i])");
  EXPECT_EQ(count_ops(r.graph, "MatMul"), 1u);
  EXPECT_EQ(count_ops(r.graph, "ReduceSum"), 1u);
}

TEST(Instantiate, BandedG2BMM) {
  Instantiated r = instantiate_and_check(R"(
    tensor Q[2,16,4] tensor Kt[2,16,4]
    L<b:0:2, m:0:16, w:0:7> Sum<k:0:4> Q[b, m, k] * Kt[b, m + 2*w - 6, k])");
  EXPECT_EQ(count_ops(r.graph, "G2BMM", "ai.orchid"), 1u);
  const Node* op = first_op(r.graph, "G2BMM", "ai.orchid");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->attrs.get_int("width", -1), 3);
  EXPECT_EQ(op->attrs.get_int("dilation", -1), 2);
  EXPECT_EQ(count_ops(r.graph, "Slice"), 0u);
}

TEST(Instantiate, BandedG2BMMWithOtherOffset) {
  Instantiated r = instantiate_and_check(R"(
    tensor Q[1,12,4] tensor Kt[1,14,4]
    L<b:0:1, m:0:12, w:0:4> Sum<k:0:4> Q[b, m, k] * Kt[b, m + w + 1, k])");
  EXPECT_EQ(count_ops(r.graph, "G2BMM", "ai.orchid"), 1u);
}

TEST(Instantiate, BandedGBMM) {
  Instantiated r = instantiate_and_check(R"(
    tensor P[2,16,7] tensor V[2,16,4]
    L<b:0:2, m:0:16, k:0:4> Sum<w:0:7> P[b, m, w] * V[b, m + w - 3, k])");
  EXPECT_EQ(count_ops(r.graph, "GBMM", "ai.orchid"), 1u);
  const Node* op = first_op(r.graph, "GBMM", "ai.orchid");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->attrs.get_int("width", -1), 3);
}

TEST(Instantiate, LongformerSizedG2BMM) {
  Instantiated r = instantiate_and_check(R"(
    tensor Q[1,40,3] tensor Kt[1,40,3]
    L<b:0:1, m:0:40, w:0:129> Sum<k:0:3> Q[b, m, k] * Kt[b, m + 2*w - 128, k])");
  const Node* op = first_op(r.graph, "G2BMM", "ai.orchid");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->attrs.get_int("width", -1), 64);
}

TEST(Instantiate, MemoryBoundDivModIndexMap) {
  for (const char* text : {"tensor X[4,6] L<i:0:24> X[i/6, i%6] * 2.0",
                           "tensor X[4,6] L<a:0:3, b:0:8> relu(X[(8*a + b)/6, (8*a + b)%6]) - 0.5",
                           "tensor X[4,6] L<i:0:20> X[(i + 3)/6, (i + 3)%6]"}) {
    Instantiated r = instantiate_and_check(text);
    EXPECT_EQ(count_ops(r.graph, "Gather"), 0u) << text;
  }
  // Not a reshape: the divisor differs from the dimension; a general index map.
  Instantiated g = instantiate_and_check("tensor X[4,5] L<i:0:24> X[i/6, i%6]");
  EXPECT_EQ(count_ops(g.graph, "Gather"), 1u);
}

TEST(Instantiate, NestedScopeWithNonzeroOrigin) {
  Instantiated r = instantiate_and_check(R"(
    tensor X[4,3]
    L<i:0:8, j:0:3> { L<i:2:6, j:0:3> X[i - 2, j] + 1.0 }[i, j] * 2.0 + { L<i:2:6, j:0:3> X[i - 2, j] + 1.0 }[i + 1, j])");
  EXPECT_EQ(count_ops(r.graph, "Gather"), 0u);
}

TEST(Instantiate, MemoryBoundReductionIndexValueAndBroadcast) {
  instantiate_and_check("tensor X[4,100] L<i:0:4> Sum<k:0:100> exp(X[i, k])");
  instantiate_and_check("tensor X[4] L<i:0:4, j:0:3> X[i] * j + 1.0");
  for (const char* reversed : {"tensor X[5] L<i:0:5> X[4 - i]", "tensor X[5] L<i:0:7> X[3 - i]",
                               "tensor X[3,4] L<a:0:3, b:0:4> X[2 - a, 3 - b]", "tensor X[9] L<i:0:4> X[7 - 2*i]"}) {
    Instantiated r = instantiate_and_check(reversed);
    EXPECT_EQ(count_ops(r.graph, "Gather"), 0u) << reversed;
  }
  instantiate_and_check("tensor X[6,6] L<i:0:6> X[i, i] + X[i, 5 - i]");
}

TEST(Instantiate, InstantiableAndDescribe) {
  Expr state = expr::parse(kConv3x3AsMatMul);
  std::string why;
  EXPECT_TRUE(instantiable(state, &why)) << why;
  std::vector<std::string> lines = describe_instantiation(state);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "MatMul [36x8]x[8x144]");
  EXPECT_EQ(lines[1], "memory-bound offset sum (9 terms)");
  Expr dilated = expr::parse(kDilatedSpaceToBatch);
  EXPECT_TRUE(instantiable(dilated, &why)) << why;
  EXPECT_EQ(describe_instantiation(dilated),
            (std::vector<std::string>{"memory-bound index map", "Conv [4x8x6x6]*[16x8x3x3] stride [1x1] dilation [1x1]",
                                      "memory-bound index map"}));
  Expr banded = expr::parse(R"(
    tensor Q[1,40,3] tensor Kt[1,40,3]
    L<b:0:1, m:0:40, w:0:129> Sum<k:0:3> Q[b, m, k] * Kt[b, m + 2*w - 128, k])");
  EXPECT_EQ(describe_instantiation(banded), (std::vector<std::string>{"G2BMM [1x40x3]x[1x40x3] width 64 dilation 2"}));
  Expr huge_index_map = expr::parse("tensor X[2048,2048] L<i:0:2048, j:0:2049> X[i, 2047 + i - j]");
  EXPECT_FALSE(instantiable(huge_index_map, &why));
  EXPECT_NE(why.find("general index map"), std::string::npos) << why;
  EXPECT_TRUE(instantiable(expr::parse("tensor X[2048,2048] L<i:0:2048, j:0:2048> X[j, i]")));
  // g read twice by B: not a grouped conv's group.
  Expr grouped = expr::parse(
      "tensor A[2,5] tensor B[2,2,5] L<g:0:2, i:0:3> "
      "Sum<k:0:5> A[g, k + i] * B[g, g, k]");
  EXPECT_FALSE(instantiable(grouped, &why));
  EXPECT_NE(why.find("matches no operator"), std::string::npos) << why;
  auto instantiate_grouped = [&] {
    Graph g;
    Node origin;
    origin.name = "x";
    fission::FissionBuilder builder(g, origin);
    std::map<std::string, ValueId, std::less<>> inputs;
    inputs["A"] = g.add_value("A", {DType::Float32, {2, 5}});
    inputs["B"] = g.add_value("B", {DType::Float32, {2, 2, 5}});
    instantiate(grouped, inputs, builder);
  };
  EXPECT_THROW(instantiate_grouped(), Error);
}

TEST(Instantiate, ComputeScopeClassification) {
  auto scope_of = [](const char* text) -> const expr::ScopeNode& { return expr::parse(text)->as<expr::ScopeNode>(); };
  EXPECT_TRUE(
      is_compute_scope(scope_of("tensor A[4,5] tensor B[5,3] L<i:0:4, j:0:3> "
                                "Sum<k:0:5> A[i, k] * B[k, j]")));
  EXPECT_FALSE(is_compute_scope(scope_of("tensor A[4,5] L<i:0:4> Sum<k:0:5> A[i, k] * 2.0")));
  EXPECT_FALSE(is_compute_scope(scope_of("tensor A[4,5] tensor B[4] L<i:0:4> Sum<k:0:5> A[i, k] * B[i]")));
  EXPECT_FALSE(is_compute_scope(scope_of("tensor A[4,5] tensor B[5] L<i:0:4, k:0:5> A[i, k] * B[k]")));
}

}  // namespace
}  // namespace orchid::derivation
