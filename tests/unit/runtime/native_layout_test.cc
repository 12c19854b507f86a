// Layout negotiation between kernels: intermediates that only oneDNN kernels
// produce and read stay in oneDNN's layout (no reorders to and from NCHW),
// and the results still match the interpreter.
#include "orchestration/baseline_plan.h"
#include "runtime_test_util.h"

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT

ValueId conv(Graph& g, ValueId x, int64_t in, int64_t out, uint32_t seed, int64_t k = 3) {
  ValueId w = g.add_constant("w" + std::to_string(seed), random_tensor(DType::Float32, {out, in, k, k}, seed, -0.5, 0.5));
  ValueId b = g.add_constant("b" + std::to_string(seed), random_tensor(DType::Float32, {out}, seed + 100, -0.5, 0.5));
  const int64_t p = k / 2;
  return add_op(g, "Conv", {x, w, b}, attrs({{"pads", std::vector<int64_t>{p, p, p, p}}}))[0];
}

struct Outcome {
  size_t native = 0;
  size_t arena = 0;
};

// Runs `g` with the baseline plan; expects the interpreter's outputs.
Outcome run_planned(const Graph& g, double atol = 1e-5) {
  std::vector<std::vector<size_t>> groups;
  for (const KernelGroup& group : orchestration::plan_baseline(g)) groups.push_back(group.nodes);
  expect_runtime_matches(g, uniform_feeds(g, 4), groups, 1e-4, atol);
  Program program{g, orchestration::plan_baseline(g)};
  Executable executable(std::move(program));
  return {executable.num_native_tensors(), executable.memory_plan().arena_bytes};
}

Graph graph_with_input(Shape shape, ValueId* x) {
  Graph g;
  *x = g.add_value("x", {DType::Float32, std::move(shape)});
  g.inputs().push_back(*x);
  return g;
}

TEST(NativeLayout, ConvChainSkipsReorders) {
  ValueId x;
  Graph g = graph_with_input({1, 8, 12, 12}, &x);
  ValueId a = add_op(g, "Relu", {conv(g, x, 8, 16, 1)})[0];
  g.outputs().push_back(conv(g, a, 16, 16, 2));
  EXPECT_EQ(run_planned(g).native, 1u);
}

TEST(NativeLayout, NonOneDnnReaderKeepsRowMajor) {
  ValueId x;
  Graph g = graph_with_input({1, 8, 12, 12}, &x);
  ValueId a = conv(g, x, 8, 16, 1);
  // (A Transpose that swaps H and W: one to channels-last would read a's
  // channels-last layout as its own row-major output, channels_last_transpose.cc.)
  ValueId t = add_op(g, "Transpose", {a}, attrs({{"perm", std::vector<int64_t>{0, 1, 3, 2}}}))[0];
  g.outputs().push_back(t);
  EXPECT_EQ(run_planned(g).native, 0u);
}

TEST(NativeLayout, ResidualBlockWithDownsample) {
  // ResNet's downsampling block: relu(conv2(relu(conv1(x))) + conv_d(x)),
  // then a second conv reading the block's output.
  ValueId x;
  Graph g = graph_with_input({1, 8, 10, 10}, &x);
  ValueId stem = add_op(g, "Relu", {conv(g, x, 8, 8, 1)})[0];
  ValueId c1 = add_op(g, "Relu", {conv(g, stem, 8, 16, 2)})[0];
  ValueId c2 = conv(g, c1, 16, 16, 3);
  ValueId down = conv(g, stem, 8, 16, 4, 1);
  ValueId block = add_op(g, "Relu", {add_op(g, "Add", {c2, down})[0]})[0];
  g.outputs().push_back(conv(g, block, 16, 4, 5));
  // stem, c1, down and block all feed only oneDNN kernels.
  EXPECT_EQ(run_planned(g).native, 4u);
}

TEST(NativeLayout, PaddedChannelBlocksGetTheirBytes) {
  // 3 channels in a blocked layout take a whole block: the arena must hold
  // the layout's size, not the dense one.
  ValueId x;
  Graph g = graph_with_input({1, 16, 20, 20}, &x);
  ValueId a = conv(g, x, 16, 3, 1);
  g.outputs().push_back(conv(g, a, 3, 16, 2));
  const Outcome outcome = run_planned(g);
  EXPECT_EQ(outcome.native, 1u);
  EXPECT_GE(outcome.arena, size_t(3 * 20 * 20 * 4));
}

TEST(NativeLayout, GraphOutputsStayRowMajor) {
  ValueId x;
  Graph g = graph_with_input({1, 8, 12, 12}, &x);
  ValueId a = conv(g, x, 8, 8, 1);
  g.outputs().push_back(a);
  g.outputs().push_back(conv(g, a, 8, 8, 2));
  EXPECT_EQ(run_planned(g).native, 0u);
}

// A second conv over a * sin(a) sums 144 products of magnitude up to ~10, in
// another order in another layout: outputs near zero differ by ~1e-5.
constexpr double kTwoConvAtol = 1e-4;

// a * sin(a): two pointwise kernels (no oneDNN post-op computes sin).
ValueId times_its_sine(Graph& g, ValueId a) { return add_op(g, "Mul", {a, add_op(g, "Sin", {a})[0]})[0]; }

TEST(NativeLayout, PointwiseKernelsBetweenConvsComputeInTheirLayout) {
  // z = a * sin(a) with a a conv's output, read by a conv: Sin and Mul are
  // kernels of their own (no oneDNN post-op computes sin), and a, sin(a)
  // and z all stay in the conv's layout.
  ValueId x;
  Graph g = graph_with_input({1, 16, 10, 10}, &x);
  ValueId a = conv(g, x, 16, 16, 1);
  ValueId z = times_its_sine(g, a);
  g.outputs().push_back(conv(g, z, 16, 8, 2));
  EXPECT_EQ(run_planned(g, kTwoConvAtol).native, 3u);
}

TEST(NativeLayout, APointwiseKernelConvertsWhatArrivesRowMajor) {
  // a * sin(a) + y, y a graph input: the Add takes the Mul's output in the
  // conv's layout and converts y into it; its output feeds a conv.
  ValueId x;
  Graph g = graph_with_input({1, 16, 10, 10}, &x);
  ValueId y = g.add_value("y", {DType::Float32, {1, 16, 10, 10}});
  g.inputs().push_back(y);
  ValueId a = conv(g, x, 16, 16, 1);
  ValueId z = times_its_sine(g, a);
  g.outputs().push_back(conv(g, add_op(g, "Add", {z, y})[0], 16, 8, 2));
  EXPECT_EQ(run_planned(g, kTwoConvAtol).native, 4u);
}

TEST(NativeLayout, APointwiseKernelWritesRowMajorForRowMajorReaders) {
  // a * sin(a) read by a Transpose: both inputs native, so the Mul computes
  // in the conv's layout and converts its output back for the Transpose.
  ValueId x;
  Graph g = graph_with_input({1, 16, 10, 10}, &x);
  ValueId a = conv(g, x, 16, 16, 1);
  ValueId z = times_its_sine(g, a);
  g.outputs().push_back(add_op(g, "Transpose", {z}, attrs({{"perm", std::vector<int64_t>{0, 1, 3, 2}}}))[0]);
  EXPECT_EQ(run_planned(g).native, 2u);  // a and sin(a)
}

TEST(NativeLayout, APointwiseKernelThatWouldConvertMoreThanItSavesStaysRowMajor) {
  // a * y, y a graph input, read by a Transpose: in the conv's layout the Mul
  // would convert y and its output to save a's conversion.
  ValueId x;
  Graph g = graph_with_input({1, 16, 10, 10}, &x);
  ValueId y = g.add_value("y", {DType::Float32, {1, 16, 10, 10}});
  g.inputs().push_back(y);
  ValueId a = conv(g, x, 16, 16, 1);
  g.outputs().push_back(conv(g, a, 16, 8, 2));  // a second reader: the Mul is not the conv's epilogue
  ValueId z = add_op(g, "Mul", {a, y})[0];
  g.outputs().push_back(add_op(g, "Transpose", {z}, attrs({{"perm", std::vector<int64_t>{0, 1, 3, 2}}}))[0]);
  EXPECT_EQ(run_planned(g).native, 0u);
}

TEST(NativeLayout, ABroadcastingKernelStaysRowMajor) {
  // a + b with b per channel ([16, 1, 1]) is not pointwise in every layout.
  ValueId x;
  Graph g = graph_with_input({1, 16, 10, 10}, &x);
  ValueId b = g.add_value("b", {DType::Float32, {16, 1, 1}});
  g.inputs().push_back(b);
  ValueId sum = add_op(g, "Add", {conv(g, x, 16, 16, 1), b})[0];
  g.outputs().push_back(conv(g, add_op(g, "Sin", {sum})[0], 16, 8, 2));
  // The Add reads the conv's output row-major, so the Sin after it does too.
  EXPECT_EQ(run_planned(g).native, 0u);
}

ValueId concat(Graph& g, std::vector<ValueId> parts) {
  return add_op(g, "Concat", std::move(parts), attrs({{"axis", int64_t(1)}}))[0];
}

TEST(NativeLayout, ConcatBetweenConvsStaysNative) {
  // A CSP block: two branches concatenated on channels, then fused by a conv.
  ValueId x;
  Graph g = graph_with_input({1, 8, 12, 12}, &x);
  ValueId a = add_op(g, "Relu", {conv(g, x, 8, 16, 1)})[0];
  ValueId b = conv(g, x, 8, 8, 2, 1);
  g.outputs().push_back(conv(g, concat(g, {a, b, a}), 40, 16, 3, 1));
  // a, b and the Concat's output.
  EXPECT_EQ(run_planned(g).native, 3u);
}

TEST(NativeLayout, ConcatOfNativeAndRowMajorInputs) {
  // The graph input is row-major, the conv's output native: the Concat
  // reads both.
  ValueId x;
  Graph g = graph_with_input({1, 8, 12, 12}, &x);
  ValueId a = conv(g, x, 8, 8, 1);
  g.outputs().push_back(conv(g, concat(g, {x, a}), 16, 8, 2));
  // The conv's output, and the Concat's: the Concat writes it in the layout
  // the second conv computes in, copying each input from its own layout.
  EXPECT_EQ(run_planned(g).native, 2u);
}

TEST(NativeLayout, ConcatOfRowMajorInputsIsWrittenAsItsReadersCompute) {
  // No oneDNN kernel writes the Concat's inputs (a graph input and a Relu):
  // the Concat writes its output in the convs' layout, so neither converts.
  ValueId x;
  Graph g = graph_with_input({1, 16, 12, 12}, &x);
  ValueId c = concat(g, {x, add_op(g, "Relu", {x})[0]});
  g.outputs().push_back(conv(g, c, 32, 16, 1));
  g.outputs().push_back(conv(g, c, 32, 16, 2));
  EXPECT_EQ(run_planned(g).native, 1u);
}

TEST(NativeLayout, ConcatOfPaddedChannelBlocks) {
  // 3 and 5 channels: each a partly filled block in a blocked layout.
  ValueId x;
  Graph g = graph_with_input({1, 16, 10, 10}, &x);
  ValueId a = conv(g, x, 16, 3, 1);
  ValueId b = conv(g, x, 16, 5, 2);
  g.outputs().push_back(conv(g, concat(g, {a, b}), 8, 16, 3));
  EXPECT_GE(run_planned(g).native, 2u);
}

TEST(NativeLayout, ConcatAsGraphOutputIsRowMajor) {
  ValueId x;
  Graph g = graph_with_input({1, 8, 12, 12}, &x);
  ValueId a = conv(g, x, 8, 16, 1);
  ValueId b = conv(g, x, 8, 16, 2);
  g.outputs().push_back(concat(g, {a, b}));
  EXPECT_EQ(run_planned(g).native, 2u);
}

}  // namespace
}  // namespace orchid::runtime
