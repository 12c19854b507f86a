// oneDNN linear kernels (Conv, ConvTranspose, MatMul) and their post-op
// epilogues against the reference interpreter, the forms that fall back to
// the reference kernel, and the baseline plan's Conv + epilogue groups.
#include "orchestration/baseline_plan.h"
#include "runtime/kernels/cpu/onednn_common.h"
#include "runtime/kernels/cpu/onednn_linear_kernel.h"
#include "runtime/kernels/cpu/onednn_linear_spec.h"
#include "runtime/kernels/cpu/registry.h"
#include "runtime_test_util.h"

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT

// Graphs are built with GraphBuilder (runtime_test_util.h).
struct Builder : GraphBuilder {
  Builder() { seed = 11; }
};

Attributes pad1() { return attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}); }

// Runs `graph` as one kernel group of all its nodes and expects the oneDNN
// kernel (not the reference one) and the interpreter's results.
void expect_onednn(const Graph& graph, const std::string& implementation, double lo = -2, double hi = 2) {
  std::vector<size_t> all;
  for (size_t i = 0; i < graph.nodes().size(); ++i) all.push_back(i);
  std::vector<std::string> impl = expect_runtime_matches(graph, uniform_feeds(graph, 5, lo, hi), {all});
  ASSERT_EQ(impl.size(), 1u);
  // "onednn conv (brgconv:avx512_core)": the primitive's own implementation follows.
  EXPECT_EQ(impl[0].substr(0, implementation.size() + 2), implementation + " (") << impl[0];
}

// x [shape] -> Conv(w, b?) with the given attributes.
Graph conv_graph(Shape x_shape, Shape w_shape, Attributes a, bool bias = true) {
  Builder b;
  ValueId x = b.input("x", x_shape);
  ValueId w = b.constant(w_shape);
  std::vector<ValueId> inputs = {x, w};
  if (bias) inputs.push_back(b.constant({w_shape[0]}));
  return b.finish(b.op("Conv", inputs, std::move(a)));
}

TEST(LinearKernel, Conv2dPaddedWithBias) {
  expect_onednn(conv_graph({1, 8, 10, 10}, {16, 8, 3, 3}, attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}})),
                "onednn conv");
}

TEST(LinearKernel, Conv2dStridesDilationsAsymmetricPadsNoBias) {
  Attributes a = attrs({{"strides", std::vector<int64_t>{2, 1}},
                        {"dilations", std::vector<int64_t>{1, 2}},
                        {"pads", std::vector<int64_t>{0, 2, 1, 1}}});
  expect_onednn(conv_graph({2, 5, 11, 9}, {7, 5, 3, 3}, a, false), "onednn conv");
}

TEST(LinearKernel, Conv1dAnd3d) {
  expect_onednn(conv_graph({2, 4, 17}, {6, 4, 5}, attrs({{"strides", std::vector<int64_t>{2}},
                                                         {"pads", std::vector<int64_t>{2, 1}}})),
                "onednn conv");
  expect_onednn(conv_graph({1, 3, 6, 7, 8}, {4, 3, 3, 2, 3}, attrs({{"pads", std::vector<int64_t>{1, 0, 1, 1, 1, 0}}})),
                "onednn conv");
}

TEST(LinearKernel, ConvGroupedAndDepthwise) {
  expect_onednn(conv_graph({1, 8, 9, 9}, {12, 2, 3, 3}, attrs({{"group", int64_t(4)}})), "onednn conv");
  expect_onednn(conv_graph({1, 16, 12, 12}, {16, 1, 3, 3}, attrs({{"group", int64_t(16)},
                                                                  {"strides", std::vector<int64_t>{2, 2}},
                                                                  {"pads", std::vector<int64_t>{1, 1, 1, 1}}})),
                "onednn conv");
}

TEST(LinearKernel, ConvAutoPad) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    expect_onednn(conv_graph({1, 3, 10, 11}, {4, 3, 4, 3}, attrs({{"auto_pad", std::string(mode)},
                                                                 {"strides", std::vector<int64_t>{2, 2}}})),
                  "onednn conv");
  }
}

TEST(LinearKernel, ConvRuntimeWeightsAndBias) {
  Builder b;
  ValueId x = b.input("x", {1, 4, 8, 8});
  ValueId w = b.input("w", {6, 4, 3, 3});
  ValueId bias = b.input("b", {6});
  ValueId y = b.op("Conv", {x, w, bias});
  ValueId z = b.op("Add", {y, b.constant({6, 1, 1})});
  expect_onednn(b.finish(b.op("Relu", {z})), "onednn conv");
}

// x -> ConvTranspose(w [C, M/group, k...], b) with the given attributes.
Graph deconv_graph(Shape x_shape, Shape w_shape, Attributes a, int64_t out_channels) {
  Builder b;
  ValueId x = b.input("x", x_shape);
  ValueId y = b.op("ConvTranspose", {x, b.constant(w_shape), b.constant({out_channels})}, std::move(a));
  return b.finish(y);
}

TEST(LinearKernel, ConvTransposeForms) {
  expect_onednn(deconv_graph({1, 4, 5, 5}, {4, 6, 3, 3}, attrs({{"strides", std::vector<int64_t>{2, 2}},
                                                                {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                                                                {"output_padding", std::vector<int64_t>{1, 1}}}),
                             6),
                "gemm deconv");
  expect_onednn(deconv_graph({2, 6, 4, 5}, {6, 2, 3, 2}, attrs({{"group", int64_t(3)},
                                                                {"dilations", std::vector<int64_t>{2, 1}},
                                                                {"pads", std::vector<int64_t>{0, 1, 2, 0}}}),
                             6),
                "gemm deconv");
  expect_onednn(deconv_graph({1, 3, 7}, {3, 5, 4}, attrs({{"strides", std::vector<int64_t>{3}}}), 5), "gemm deconv");
  expect_onednn(deconv_graph({1, 2, 3, 4, 3}, {2, 3, 2, 2, 2}, attrs({{"strides", std::vector<int64_t>{2, 2, 2}}}), 3),
                "gemm deconv");
  expect_onednn(deconv_graph({1, 4, 5, 5}, {4, 2, 3, 3}, attrs({{"strides", std::vector<int64_t>{2, 2}},
                                                                {"output_shape", std::vector<int64_t>{10, 10}}}),
                             2),
                "gemm deconv");
}

// a @ b with b a constant unless `runtime_b`.
Graph matmul_graph(Shape a_shape, Shape b_shape, bool runtime_b = false) {
  Builder b;
  ValueId a = b.input("a", a_shape);
  ValueId w = runtime_b ? b.input("b", b_shape) : b.constant(b_shape);
  return b.finish(b.op("MatMul", {a, w}));
}

TEST(LinearKernel, MatMulShapes) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{5, 7}, {7, 3}},          {{2, 3, 4, 5}, {5, 6}},   {{4, 5}, {2, 5, 6}},
      {{2, 1, 4, 5}, {1, 3, 5, 6}}, {{5}, {5, 6}},          {{2, 4, 5}, {5}},
      {{5}, {5}},                 {{3, 5}, {3, 5, 2}},
  };
  for (const auto& [a, b] : cases) {
    expect_onednn(matmul_graph(a, b), "onednn matmul");
    expect_onednn(matmul_graph(a, b, true), "onednn matmul");
  }
}

// A plain [K, N] second operand: A's batch dims fold into its rows (one
// GEMM), as for PyTorch MultiheadAttention's [L, 1, D] x [D, 3D]; a
// constant one makes it a rank-2 product (oneDNN blocks constant weights only
// at rank 2), a runtime one keeps the rank. A batched second operand keeps
// the batch.
TEST(LinearKernel, MatMulFoldsBatchIntoRows) {
  const std::vector<std::tuple<Shape, Shape, bool, dnnl::memory::dims>> cases = {
      {{7, 1, 16}, {16, 48}, false, {7, 16}},
      {{2, 3, 4, 5}, {1, 5, 6}, false, {24, 5}},
      {{1, 128, 32}, {32, 64}, false, {128, 32}},
      {{2, 3, 4, 5}, {1, 5, 6}, true, {1, 1, 24, 5}},
      {{2, 3, 5}, {2, 5, 6}, false, {2, 3, 5}},
  };
  for (const auto& [a, b, runtime_b, src] : cases) {
    Graph g = matmul_graph(a, b, runtime_b);
    const KernelGroup group = make_group(g, {0});
    std::optional<cpu::onednn::LinearSpec> spec = cpu::onednn::analyze_group(g, group);
    ASSERT_TRUE(spec.has_value());
    EXPECT_EQ(spec->anchor.src, src);
    expect_onednn(g, "onednn matmul");
  }
}

// What the plan is told about a linear group's default kernel
// (linear_keeps_native_layouts) is what the built kernel does: a conv and
// ConvTranspose as one matmul offer native layouts; a matrix product and
// GEMM + col2im are row-major.
TEST(LinearKernel, KeepsNativeLayoutsAsItsKernelDoes) {
  using ints = std::vector<int64_t>;
  const std::vector<std::pair<Graph, bool>> cases = {
      {conv_graph({1, 8, 12, 12}, {16, 8, 3, 3}, attrs({{"pads", ints{1, 1, 1, 1}}})), true},
      {conv_graph({1, 1, 16, 16}, {8, 1, 5, 5}, attrs({{"pads", ints{2, 2, 2, 2}}})), true},
      {matmul_graph({1, 32, 64}, {64, 48}), false},
      {deconv_graph({1, 8, 6, 6}, {8, 4, 4, 4}, attrs({{"strides", ints{2, 2}}, {"pads", ints{1, 1, 1, 1}}}), 4), false},
      {deconv_graph({1, 8, 6, 6}, {8, 16, 2, 2}, attrs({{"strides", ints{2, 2}}}), 16), true},
  };
  for (const auto& [g, native] : cases) {
    const KernelGroup group = make_group(g, {0});
    EXPECT_EQ(cpu::linear_keeps_native_layouts(g, group), native) << g.nodes()[0].op;
    std::unique_ptr<Kernel> kernel = cpu::make_linear_kernel(g, group);
    ASSERT_TRUE(kernel);
    bool offers = kernel->native_output_layout(0).has_value();
    for (size_t i = 0; i < group.inputs.size(); ++i) offers = offers || kernel->native_input_layout(i).has_value();
    EXPECT_EQ(offers, native) << kernel->implementation();
  }
}

// Grouped convs (not depthwise) keep channels-last, as brgconv keeps their
// 1x1 neighbours: no reorders between them.
TEST(LinearKernel, GroupedConvsWorkChannelsLast) {
  using ints = std::vector<int64_t>;
  const Graph g = conv_graph({1, 64, 14, 14}, {64, 16, 3, 3}, attrs({{"group", int64_t(4)}, {"pads", ints{1, 1, 1, 1}}}));
  std::unique_ptr<Kernel> kernel = cpu::make_linear_kernel(g, make_group(g, {0}));
  ASSERT_TRUE(kernel);
  const std::optional<NativeLayout> out = kernel->native_output_layout(0);
  ASSERT_TRUE(out.has_value());
  const dnnl::memory::desc nhwc({1, 64, 14, 14}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nhwc);
  EXPECT_TRUE(cpu::onednn::layout_desc(*out) == nhwc) << kernel->implementation();
  expect_onednn(g, "onednn conv");
}

TEST(LinearKernel, ConvBiasAddThenRelu) {
  for (Shape bias_shape : {Shape{8, 1, 1}, Shape{1, 8, 1, 1}}) {
    for (bool swapped : {false, true}) {
      Builder b;
      ValueId y = b.op("Conv", {b.input("x", {1, 3, 9, 9}), b.constant({8, 3, 3, 3}), b.constant({8})});
      ValueId c = b.constant(bias_shape);
      ValueId z = b.op("Add", swapped ? std::vector<ValueId>{c, y} : std::vector<ValueId>{y, c});
      expect_onednn(b.finish(b.op("Relu", {z})), "onednn conv");
    }
  }
}

TEST(LinearKernel, ConvEltwiseChain) {
  Builder b;
  ValueId v = b.op("Conv", {b.input("x", {1, 4, 7, 7}), b.constant({5, 4, 3, 3})});
  v = b.op("Sub", {v, b.constant({1, 5, 1, 1})});  // bias, subtracted
  for (const char* op : {"Tanh", "Sigmoid", "Neg", "Exp", "Abs", "Sqrt", "Log", "Reciprocal"}) v = b.op(op, {v});
  expect_onednn(b.finish(v), "onednn conv");
}

TEST(LinearKernel, ScalarArithmeticBothOrders) {
  // The affine steps fold into one eltwise_linear post-op.
  Builder b;
  ValueId v = b.op("Conv", {b.input("x", {1, 3, 6, 6}), b.constant({4, 3, 3, 3})});
  v = b.op("Relu", {v});
  v = b.op("Mul", {b.scalar(1.5f), v});
  v = b.op("Add", {v, b.scalar(0.25f, {1})});
  v = b.op("Sub", {v, b.scalar(0.5f)});
  v = b.op("Sub", {b.scalar(2.f), v});
  v = b.op("Div", {v, b.scalar(4.f)});
  v = b.op("Exp", {v});
  v = b.op("Div", {b.scalar(3.f), v});
  expect_onednn(b.finish(v), "onednn conv");
}

TEST(LinearKernel, ClipAndHardSigmoidForms) {
  {  // Clip(0, 0.5) = Max then Min: one clamp.
    Builder b;
    ValueId v = b.op("Conv", {b.input("x", {1, 3, 6, 6}), b.constant({4, 3, 3, 3}), b.constant({4})});
    v = b.op("Min", {b.op("Max", {v, b.scalar(0.f)}), b.scalar(0.5f)});
    expect_onednn(b.finish(b.op("Tanh", {v})), "onednn conv");
  }
  {  // HardSigmoid: Mul, Add, Max, Min with the scalars on either side.
    Builder b;
    ValueId v = b.op("Conv", {b.input("x", {1, 3, 6, 6}), b.constant({4, 3, 3, 3}), b.constant({4})});
    v = b.op("Add", {b.scalar(0.5f), b.op("Mul", {v, b.scalar(0.2f)})});
    v = b.op("Min", {b.scalar(1.f), b.op("Max", {b.scalar(0.f), v})});
    expect_onednn(b.finish(v), "onednn conv", -8, 8);
  }
}

TEST(LinearKernel, RepeatedEltwiseWithOtherParametersEndsTheGroup) {
  // oneDNN 2.6 would apply the first linear's alpha/beta to the second.
  Builder b;
  ValueId y = b.op("Conv", {b.input("x", {1, 3, 6, 6}), b.constant({4, 3, 3, 3})});
  ValueId m = b.op("Mul", {y, b.scalar(0.2f)});
  ValueId t = b.op("Tanh", {m});
  ValueId a = b.op("Add", {t, b.scalar(0.5f)});
  ValueId r = b.op("Relu", {t});
  Graph g = b.finish(a);
  g.outputs().push_back(r);
  EXPECT_TRUE(cpu::linear_can_absorb(g, make_group(g, {0}), g.nodes()[1]));
  EXPECT_TRUE(cpu::linear_can_absorb(g, make_group(g, {0, 1}), g.nodes()[2]));
  EXPECT_FALSE(cpu::linear_can_absorb(g, make_group(g, {0, 1, 2}), g.nodes()[3]));
  EXPECT_TRUE(cpu::linear_can_absorb(g, make_group(g, {0, 1, 2}), g.nodes()[4]));
  std::vector<std::string> impl = expect_runtime_matches(g, uniform_feeds(g, 4), {{0, 1, 2}, {3}, {4}});
  EXPECT_EQ(impl[0].rfind("onednn conv (", 0), 0u) << impl[0];
}

TEST(LinearKernel, ResidualAddEitherSideThenRelu) {
  for (bool swapped : {false, true}) {
    Builder b;
    ValueId x = b.input("x", {1, 8, 7, 7});
    ValueId r = b.input("r", {1, 8, 7, 7});
    ValueId y = b.op("Conv", {x, b.constant({8, 8, 3, 3}), b.constant({8})}, pad1());
    ValueId z = b.op("Add", swapped ? std::vector<ValueId>{r, y} : std::vector<ValueId>{y, r});
    expect_onednn(b.finish(b.op("Relu", {z})), "onednn conv");
  }
}

// GCN's global convolution: a 1x15 conv whose residual Add no fast oneDNN
// implementation takes; gemm:jit in channels-last read the operand wrongly.
TEST(LinearKernel, ResidualAddOnAOneByFifteenConv) {
  Builder b;
  ValueId x = b.input("x", {1, 64, 32, 32});
  ValueId r = b.input("r", {1, 21, 32, 32});
  ValueId y = b.op("Conv", {x, b.constant({21, 64, 1, 15}), b.constant({21})},
                   attrs({{"pads", std::vector<int64_t>{0, 7, 0, 7}}}));
  expect_onednn(b.finish(b.op("Add", {y, r})), "onednn conv", -0.5, 0.5);  // 960-term sums: small values
}

TEST(LinearKernel, BinaryTensorPostOps) {
  Builder b;
  ValueId x = b.input("x", {1, 4, 6, 6});
  ValueId t = b.input("t", {1, 4, 6, 6});
  ValueId v = b.op("Conv", {x, b.constant({4, 4, 3, 3})}, attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  v = b.op("Mul", {t, v});
  v = b.op("Sub", {v, t});
  v = b.op("Max", {t, v});
  v = b.op("Add", {v, x});  // the conv's own input, shape-preserving conv
  v = b.op("Mul", {v, b.constant({1, 4, 1, 1})});  // per-channel after post-ops: binary broadcast
  v = b.op("Add", {b.constant({4, 1, 1}), v});
  expect_onednn(b.finish(v), "onednn conv");
}

TEST(LinearKernel, MatMulEpilogues) {
  for (Shape bias_shape : {Shape{6}, Shape{1, 6}, Shape{1, 1, 6}}) {
    Builder b;
    ValueId a = b.input("a", {2, 3, 5});
    ValueId r = b.input("r", {2, 3, 6});
    ValueId v = b.op("MatMul", {a, b.constant({5, 6})});
    v = b.op("Add", {b.constant(bias_shape), v});
    v = b.op("Tanh", {v});
    v = b.op("Add", {v, r});
    v = b.op("Mul", {v, b.constant({6})});
    expect_onednn(b.finish(b.op("Relu", {v})), "onednn matmul");
  }
}

TEST(LinearKernel, ConvTransposeBiasAddRelu) {
  Builder b;
  ValueId v = b.op("ConvTranspose", {b.input("x", {1, 4, 5, 5}), b.constant({4, 3, 2, 2})},
                   attrs({{"strides", std::vector<int64_t>{2, 2}}}));
  v = b.op("Add", {v, b.constant({1, 3, 1, 1})});
  expect_onednn(b.finish(b.op("Relu", {v})), "onednn deconv as matmul");  // the taps do not overlap
  Builder c;
  ValueId u = c.op("ConvTranspose", {c.input("x", {1, 4, 5, 5}), c.constant({4, 3, 3, 3})},
                   attrs({{"strides", std::vector<int64_t>{2, 2}}}));
  u = c.op("Add", {u, c.constant({1, 3, 1, 1})});
  expect_onednn(c.finish(c.op("Relu", {u})), "gemm deconv");
}

TEST(LinearKernel, UnsupportedFormsFallBack) {
  // float64 conv and int32 matmul run on the reference kernel.
  Builder d;
  ValueId x = d.g.add_value("x", {DType::Float64, {1, 2, 5, 5}});
  d.g.inputs().push_back(x);
  ValueId w = d.g.add_constant("w", random_tensor(DType::Float64, {3, 2, 3, 3}, 1));
  std::vector<std::string> impl = expect_runtime_matches(d.finish(d.op("Conv", {x, w})), 3);
  EXPECT_EQ(impl, std::vector<std::string>{"reference"});
  Graph m = one_node_graph("MatMul", {var({3, 4}, DType::Int32), var({4, 2}, DType::Int32)});
  EXPECT_NE(expect_runtime_matches(m, random_feeds(m, 2, -3, 3))[0].rfind("onednn", 0), 0u);
}

TEST(LinearKernel, AbsorbsExactlyTheSupportedEpilogues) {
  Builder b;
  ValueId x = b.input("x", {1, 4, 6, 6});
  ValueId t = b.input("t", {1, 4, 1, 1});
  ValueId y = b.op("Conv", {x, b.constant({4, 4, 3, 3})}, attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  const std::vector<ValueId> candidates = {
      b.op("Relu", {y}),                        // yes
      b.op("Add", {y, b.constant({4, 1, 1})}),  // yes: bias
      b.op("Add", {y, b.constant({6, 6})}),     // no: not per channel
      b.op("Add", {y, t}),                      // no: a broadcast runtime tensor
      b.op("Sub", {x, y}),                      // no: tensor - output
      b.op("Div", {b.constant({4, 1, 1}), y}),  // no: constant / output
      b.op("Add", {y, y}),                      // no: reads the output twice
      b.op("Floor", {y}),                       // no: no eltwise for it
  };
  const std::vector<bool> expected = {true, true, false, false, false, false, false, false};
  Graph g = b.finish(y);
  KernelGroup group = make_group(g, {0});
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Node& next = g.nodes()[i + 1];
    EXPECT_EQ(cpu::linear_can_absorb(g, group, next), expected[i]) << next.describe();
  }
}

// x -> Conv -> Add(r) -> Relu, r a constant bias or a residual computed
// before the Conv (the plan only absorbs operands ready when the Conv runs).
Graph conv_add_relu(bool residual) {
  Builder b;
  ValueId x = b.input("x", {1, 8, 7, 7});
  ValueId r = residual ? b.op("Relu", {b.input("r", {1, 8, 7, 7})}) : b.constant({1, 8, 1, 1});
  ValueId y = b.op("Conv", {x, b.constant({8, 8, 3, 3}), b.constant({8})}, pad1());
  return b.finish(b.op("Relu", {b.op("Add", {y, r})}));
}

TEST(LinearKernel, BaselinePlanGroupsConvAddRelu) {
  for (bool residual : {false, true}) {
    Graph g = conv_add_relu(residual);
    std::vector<KernelGroup> plan = orchestration::plan_baseline(g);
    ASSERT_EQ(plan.size(), residual ? 2u : 1u);
    const KernelGroup& fused = plan.back();
    ASSERT_EQ(fused.nodes.size(), 3u);
    EXPECT_EQ(g.nodes()[fused.nodes[0]].op, "Conv");
    EXPECT_EQ(g.nodes()[fused.nodes[1]].op, "Add");
    EXPECT_EQ(g.nodes()[fused.nodes[2]].op, "Relu");
    std::vector<std::vector<size_t>> groups;
    for (const KernelGroup& group : plan) groups.push_back(group.nodes);
    std::vector<std::string> impl = expect_runtime_matches(g, uniform_feeds(g, 9), groups);
    EXPECT_EQ(impl.back().rfind("onednn conv (", 0), 0u) << impl.back();
  }
}

}  // namespace
}  // namespace orchid::runtime

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT

// Runs `g`'s baseline plan against the interpreter. With `fused`, expects
// one oneDNN kernel of `nodes` nodes; without, that the chain stopped (more
// than one kernel).
void expect_activation_fused(const Graph& g, bool fused, size_t nodes) {
  std::vector<KernelGroup> plan = orchestration::plan_baseline(g);
  std::vector<std::vector<size_t>> groups;
  for (const KernelGroup& group : plan) groups.push_back(group.nodes);
  std::vector<std::string> impl = expect_runtime_matches(g, uniform_feeds(g, 2), groups);
  if (!fused) {
    EXPECT_GT(plan.size(), 1u);
    return;
  }
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].nodes.size(), nodes);
  EXPECT_EQ(impl[0].rfind("onednn conv (", 0), 0u) << impl[0];
}

// SiLU as fission writes it (x * Sigmoid(x), either operand order) after a
// Conv: the plan makes one group of the three nodes, computed as a swish post-op.
TEST(LinearKernel, ConvSiluIsOneSwishGroup) {
  for (bool swapped : {false, true}) {
    Builder b;
    ValueId x = b.input("x", {1, 4, 9, 9});
    ValueId c = b.op("Conv", {x, b.constant({8, 4, 3, 3}), b.constant({8})}, pad1());
    ValueId s = b.op("Sigmoid", {c});
    ValueId y = swapped ? b.op("Mul", {s, c}) : b.op("Mul", {c, s});
    Graph g = b.finish(b.op("Relu", {y}));
    std::vector<KernelGroup> plan = orchestration::plan_baseline(g);
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_EQ(plan[0].nodes.size(), 4u);
    std::vector<std::string> impl = expect_runtime_matches(g, uniform_feeds(g, 2), {plan[0].nodes});
    EXPECT_EQ(impl[0].rfind("onednn conv (", 0), 0u) << impl[0];
  }
}

// A SiLU or Sigmoid ending the epilogues is applied by the kernel to the
// primitive's output (in whatever layout oneDNN chose, channel padding
// included) rather than as a post-op: 1x1, 3x3 and depthwise convs, channel
// counts that fill blocks of 16 and that do not, a ReLU after the SiLU, and
// a second conv reading the first one's output.
TEST(LinearKernel, SigmoidTailsAppliedByTheKernel) {
  for (int64_t channels : {16, 24, 32}) {
    for (int64_t k : {1, 3}) {
      for (const bool depthwise : {false, true}) {
        for (int tail = 0; tail < 3; ++tail) {  // SiLU, SiLU + ReLU, Sigmoid
          SCOPED_TRACE(std::to_string(channels) + " channels, k " + std::to_string(k) + (depthwise ? " depthwise" : "") +
                       " tail " + std::to_string(tail));
          Builder b;
          ValueId x = b.input("x", {1, channels, 12, 12});
          Attributes a = k == 3 ? pad1() : Attributes{};
          if (depthwise) a.set("group", channels);
          ValueId c = b.op("Conv", {x, b.constant({channels, depthwise ? 1 : channels, k, k}), b.constant({channels})},
                           a);
          ValueId s = b.op("Sigmoid", {c});
          ValueId y = tail == 2 ? s : b.op("Mul", {c, s});
          if (tail == 1) y = b.op("Relu", {y});
          const Graph single = b.finish(y);
          expect_onednn(single, "onednn conv");
          ValueId z = b.op("Conv", {y, b.constant({8, channels, 3, 3})}, pad1());
          const Graph chain = b.finish(z);
          std::vector<size_t> first(chain.nodes().size() - 1);
          for (size_t i = 0; i < first.size(); ++i) first[i] = i;
          // (The second conv's sums reach tens: an absolute 1e-5 is below
          // their float rounding where they cancel to near 0.)
          expect_runtime_matches(chain, uniform_feeds(chain, 5, -2, 2), {first, {first.size()}}, 1e-4, 1e-4);
        }
      }
    }
  }
}

// A residual Add after a conv (ResNet's Conv + Add + ReLU) as oneDNN's sum
// post-op (the variant "onednn residual sum", the residual copied into dst
// first) and as a binary one: residuals from the graph input (row-major)
// and from another conv (its native layout), 1x1 and 3x3, channel counts
// that fill blocks of 16 and that do not, the Add's operands either way
// round, and a residual read again after the conv.
TEST(LinearKernel, ResidualAddsAsSums) {
  for (int64_t channels : {16, 24, 64}) {
    for (int64_t k : {1, 3}) {
      for (int form = 0; form < 3; ++form) {  // graph input, conv output, conv output read again
        Builder b;
        ValueId x = b.input("x", {1, channels, 14, 14});
        ValueId r = form == 0 ? x : b.op("Conv", {x, b.constant({channels, channels, 1, 1}), b.constant({channels})});
        const Attributes a = k == 3 ? pad1() : Attributes{};
        ValueId c = b.op("Conv", {r, b.constant({channels, channels, k, k}), b.constant({channels})}, a);
        ValueId y = b.op("Relu", {form == 1 ? b.op("Add", {r, c}) : b.op("Add", {c, r})});
        if (form == 2) y = b.op("Mul", {y, r});
        const Graph g = b.finish(y);
        size_t node = 0;
        Program program{g, {}};
        if (form != 0) program.kernels.push_back(make_group(g, {node++}));
        const size_t residual_kernel = program.kernels.size();
        program.kernels.push_back(make_group(g, {node, node + 1, node + 2}));
        node += 3;
        if (form == 2) program.kernels.push_back(make_group(g, {node}));
        EXPECT_EQ(cpu::linear_variants(g, program.kernels[residual_kernel]).back(), cpu::onednn::kResidualSumVariant);
        for (const char* variant : {"", cpu::onednn::kResidualSumVariant}) {
          SCOPED_TRACE(std::to_string(channels) + " channels, k " + std::to_string(k) + " form " +
                       std::to_string(form) + " variant '" + variant + "'");
          program.kernels[residual_kernel].variant = variant;
          // (Inputs in [-0.5, 0.5]: the sums of 576 terms stay near 1, where
          // an absolute 1e-4 is above their float rounding.)
          const std::vector<std::string> impl =
              expect_program_matches(g, program, uniform_feeds(g, 9, -0.5, 0.5), 1e-4, 1e-4);
          EXPECT_NE(impl[residual_kernel].find("onednn conv"), std::string::npos);
        }
      }
    }
  }
  // No variant where the operand is subtracted, or there are two.
  Builder b;
  ValueId x = b.input("x", {1, 16, 6, 6});
  ValueId c = b.op("Conv", {x, b.constant({16, 16, 1, 1})});
  const Graph sub = b.finish(b.op("Sub", {c, x}));
  EXPECT_TRUE(cpu::linear_variants(sub, make_group(sub, {0, 1})).empty() ||
              cpu::linear_variants(sub, make_group(sub, {0, 1})).back() != cpu::onednn::kResidualSumVariant);
  const Graph two = b.finish(b.op("Add", {b.op("Add", {c, x}), x}));
  const std::vector<std::string> variants = cpu::linear_variants(two, make_group(two, {0, 2, 3}));
  EXPECT_EQ(std::find(variants.begin(), variants.end(), cpu::onednn::kResidualSumVariant), variants.end());
}

// HardSwish as fission writes it, x * Min(Max(x / 6 + 0.5, 0), 1) (constants on either side where the op
// commutes): one group of the six nodes, computed as a hardswish post-op; with another constant it is not
// HardSwish, and the chain stops at the Conv.
TEST(LinearKernel, ConvHardSwishIsOneGroup) {
  for (int form = 0; form < 3; ++form) {
    Builder b;
    ValueId x = b.input("x", {1, 4, 9, 9});
    ValueId c = b.op("Conv", {x, b.constant({8, 4, 3, 3}), b.constant({8})}, pad1());
    ValueId gate = b.op("Div", {c, b.scalar(6.f)});
    gate = form == 1 ? b.op("Add", {b.scalar(0.5f), gate}) : b.op("Add", {gate, b.scalar(form == 2 ? 0.25f : 0.5f)});
    gate = b.op("Min", {b.op("Max", {gate, b.scalar(0.f)}), b.scalar(1.f, {1, 1, 1, 1})});
    ValueId y = form == 1 ? b.op("Mul", {gate, c}) : b.op("Mul", {c, gate});
    expect_activation_fused(b.finish(b.op("Relu", {y})), form != 2, 7);
  }
}

// Mish as fission writes it, x * Tanh(Max(x, 0) + Log(Exp(-|x|) + 1)): one
// group of the ten nodes, computed as a mish post-op; with another constant
// it is not Mish, and the chain stops at the Conv.
TEST(LinearKernel, ConvMishIsOneGroup) {
  for (int form = 0; form < 2; ++form) {
    Builder b;
    ValueId x = b.input("x", {1, 4, 9, 9});
    ValueId c = b.op("Conv", {x, b.constant({8, 4, 3, 3}, -2, 2), b.constant({8})}, pad1());
    ValueId decay = b.op("Exp", {b.op("Neg", {b.op("Abs", {c})})});
    ValueId log = b.op("Log", {b.op("Add", {decay, b.scalar(form == 1 ? 2.f : 1.f)})});
    ValueId softplus = b.op("Add", {b.op("Max", {c, b.scalar(0.f)}), log});
    ValueId y = b.op("Mul", {c, b.op("Tanh", {softplus})});
    expect_activation_fused(b.finish(b.op("Relu", {y})), form != 1, 11);
  }
}

// LeakyReLU as fission writes it, Where(Less(x, 0), Mul(x, alpha), x): one
// group of the four nodes, a relu post-op with that alpha; compared with 1
// instead of 0 it is not LeakyReLU, and the chain stops at the Conv.
TEST(LinearKernel, ConvLeakyReluIsOneGroup) {
  for (int form = 0; form < 3; ++form) {
    Builder b;
    ValueId x = b.input("x", {1, 4, 9, 9});
    ValueId c = b.op("Conv", {x, b.constant({8, 4, 3, 3}), b.constant({8})}, pad1());
    ValueId negative = b.op("Less", {c, b.scalar(form == 2 ? 1.f : 0.f)});
    ValueId scaled = form == 1 ? b.op("Mul", {b.scalar(0.1f), c}) : b.op("Mul", {c, b.scalar(0.1f)});
    ValueId y = b.op("Where", {negative, scaled, c});
    // (A final Relu would be refused: one algorithm twice with other parameters.)
    expect_activation_fused(b.finish(b.op("Sigmoid", {b.op("Neg", {y})})), form != 2, 6);
  }
}

// GELU in the forms it arrives in, after a Conv: PyTorch's erf export (x /
// sqrt 2, Erf, + 1, times x, halved last), fission's (x times 1/sqrt 2, the
// halving first, constants on the left), the tanh form with x^3 as a Pow,
// and with two Muls. One group of the conv, its epilogue and the GELU,
// computed as one gelu post-op. With a wrong constant (x / 2) or a tanh
// form missing its cube it is not GELU, and the chain stops at the Conv.
TEST(LinearKernel, ConvGeluIsOneGroup) {
  for (int form = 0; form < 6; ++form) {
    SCOPED_TRACE("form " + std::to_string(form));
    Builder b;
    ValueId x = b.input("x", {1, 4, 9, 9});
    ValueId c = b.op("Conv", {x, b.constant({8, 4, 3, 3}, -2, 2), b.constant({8})}, pad1());
    ValueId y;
    size_t nodes = 0;
    if (form == 0 || form == 4) {
      ValueId erf = b.op("Erf", {b.op("Div", {c, b.scalar(form == 4 ? 2.f : 1.4142135f)})});
      y = b.op("Mul", {b.op("Mul", {c, b.op("Add", {erf, b.scalar(1.f)})}), b.scalar(0.5f)});
      nodes = 5;
    } else if (form == 1) {
      ValueId erf = b.op("Erf", {b.op("Mul", {b.scalar(0.70710677f), c})});
      y = b.op("Mul", {b.op("Mul", {b.scalar(0.5f), c}), b.op("Add", {b.scalar(1.f), erf})});
      nodes = 5;
    } else {
      ValueId cube = form == 2 ? b.op("Pow", {c, b.scalar(3.f)}) : b.op("Mul", {b.op("Mul", {c, c}), c});
      if (form == 5) cube = b.op("Mul", {c, c});
      ValueId inner = b.op("Mul", {b.op("Add", {c, b.op("Mul", {b.scalar(0.044715f), cube})}), b.scalar(0.7978846f)});
      ValueId half = b.op("Mul", {c, b.scalar(0.5f)});
      y = b.op("Mul", {half, b.op("Add", {b.op("Tanh", {inner}), b.scalar(1.f)})});
      nodes = form == 2 ? 8 : 9;
    }
    expect_activation_fused(b.finish(b.op("Relu", {y})), form < 4, nodes + 2);
  }
}

// A Sigmoid whose output is read elsewhere too is not SiLU: no fusion.
TEST(LinearKernel, SigmoidReadTwiceIsNotSilu) {
  Builder b;
  ValueId x = b.input("x", {1, 4, 9, 9});
  ValueId c = b.op("Conv", {x, b.constant({8, 4, 3, 3})}, pad1());
  ValueId s = b.op("Sigmoid", {c});
  ValueId y = b.op("Mul", {c, s});
  b.g.outputs().push_back(s);
  Graph g = b.finish(y);
  std::vector<KernelGroup> plan = orchestration::plan_baseline(g);
  EXPECT_EQ(plan.size(), 3u);
  std::vector<std::vector<size_t>> groups;
  for (const KernelGroup& group : plan) groups.push_back(group.nodes);
  expect_runtime_matches(g, uniform_feeds(g, 2), groups);
}

}  // namespace
}  // namespace orchid::runtime

namespace orchid::runtime {
namespace {

// A MatMul whose second operand is a Transpose of a runtime value (q k^T,
// Longformer's banded keys): the Transpose is the kernel's prologue, read
// through permuted strides — last two axes swapped, batch axes moved too,
// the default (reversed) perm, a rank-2 operand broadcast over A's batch —
// with and without an epilogue.
TEST(LinearKernel, MatMulReadsATransposedOperandThroughStrides) {
  struct Case {
    Shape a, y;
    std::vector<int64_t> perm;  // empty: the default perm
    bool relu;
  };
  const std::vector<Case> cases = {
      {{2, 3, 5, 4}, {2, 3, 6, 4}, {0, 1, 3, 2}, false},
      {{2, 3, 5, 4}, {3, 2, 6, 4}, {1, 0, 3, 2}, true},
      {{7, 4}, {9, 4}, {}, true},
      {{2, 5, 4}, {9, 4}, {1, 0}, false},
      {{1, 8, 16, 1, 16}, {1, 8, 16, 33, 16}, {0, 1, 2, 4, 3}, false},
  };
  for (const Case& c : cases) {
    Builder b;
    Attributes a;
    if (!c.perm.empty()) a = attrs({{"perm", c.perm}});
    ValueId t = b.op("Transpose", {b.input("y", c.y)}, a);
    ValueId v = b.op("MatMul", {b.input("a", c.a), t});
    if (c.relu) v = b.op("Relu", {v});
    expect_onednn(b.finish(v), "onednn matmul");
  }
}

TEST(LinearKernel, TransposePrologueOnlyForAMatMulsSecondOperand) {
  auto supported = [](const Graph& g) {
    std::vector<size_t> all;
    for (size_t i = 0; i < g.nodes().size(); ++i) all.push_back(i);
    return cpu::linear_group_supported(g, make_group(g, all));
  };
  {  // first operand
    Builder b;
    ValueId t = b.op("Transpose", {b.input("x", {4, 5})});
    EXPECT_FALSE(supported(b.finish(b.op("MatMul", {t, b.input("y", {4, 3})}))));
  }
  {  // a constant's transpose is folded, not a prologue
    Builder b;
    ValueId t = b.op("Transpose", {b.constant({3, 4})});
    EXPECT_FALSE(supported(b.finish(b.op("MatMul", {b.input("x", {2, 4}), t}))));
  }
  {  // the transposed value is also read outside the kernel
    Builder b;
    ValueId t = b.op("Transpose", {b.input("y", {3, 4})});
    ValueId m = b.op("MatMul", {b.input("x", {2, 4}), t});
    Graph g = b.finish(m);
    g.outputs().push_back(t);
    EXPECT_FALSE(supported(g));
  }
}

}  // namespace
}  // namespace orchid::runtime
