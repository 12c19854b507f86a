// The executor and memory plan: programs of several kernels against the
// interpreter, arena reuse, and the graph-output corner cases.
#include "runtime_test_util.h"
#include "runtime/memory_plan.h"

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT

// x -> Relu -> Exp -> Neg -> Abs -> Sqrt -> out: a chain of 5 kernels.
Graph chain_graph(int64_t n) {
  Graph g;
  ValueId x = g.add_value("x", {DType::Float32, {n}});
  g.inputs().push_back(x);
  ValueId v = x;
  for (const char* op : {"Relu", "Exp", "Neg", "Abs", "Sqrt"}) v = add_op(g, op, {v})[0];
  g.outputs().push_back(v);
  return g;
}

TEST(Executable, ChainMatchesInterpreter) {
  expect_runtime_matches(chain_graph(1000));
}

TEST(MemoryPlan, ChainReusesTwoBuffers) {
  Graph g = chain_graph(1000);
  Program program{g, {}};
  for (auto& nodes : one_kernel_per_node(g)) program.kernels.push_back(make_group(g, nodes));
  MemoryPlan plan = plan_memory(program);
  // Four intermediates of 4000 bytes; at most two are alive at once.
  EXPECT_EQ(plan.num_intermediates, 4u);
  EXPECT_EQ(plan.intermediate_bytes, 16000u);
  EXPECT_EQ(plan.arena_bytes, 2 * 4032u);
}

TEST(MemoryPlan, LiveTensorsNeverOverlap) {
  // A diamond: a = Relu(x), b = Exp(a), c = Neg(a), out = Add(b, c): a, b and
  // c are all alive at the Neg kernel.
  Graph g;
  ValueId x = g.add_value("x", {DType::Float32, {64}});
  g.inputs().push_back(x);
  ValueId a = add_op(g, "Relu", {x})[0];
  ValueId b = add_op(g, "Exp", {a})[0];
  ValueId c = add_op(g, "Neg", {a})[0];
  g.outputs().push_back(add_op(g, "Add", {b, c})[0]);
  Program program{g, {}};
  for (auto& nodes : one_kernel_per_node(g)) program.kernels.push_back(make_group(g, nodes));
  MemoryPlan plan = plan_memory(program);
  std::set<int64_t> offsets = {plan.offset[size_t(a)], plan.offset[size_t(b)], plan.offset[size_t(c)]};
  EXPECT_EQ(offsets.size(), 3u);
  expect_runtime_matches(g);
}

TEST(Executable, OutputsThatNoKernelWrites) {
  // Outputs: the input itself, a constant, and one value listed twice.
  Graph g;
  ValueId x = g.add_value("x", {DType::Float32, {2, 3}});
  g.inputs().push_back(x);
  ValueId k = g.add_constant("k", Tensor::from_vector(DType::Float32, {3}, std::vector<float>{1, 2, 3}));
  ValueId y = add_op(g, "Add", {x, k})[0];
  g.outputs() = {x, k, y, y};
  expect_runtime_matches(g);
}

TEST(Executable, GroupKeepsInternalValuesOutOfTheArena) {
  Graph g = chain_graph(100);
  Program program{g, {make_group(g, {0}), make_group(g, {1}), make_group(g, {2}), make_group(g, {3}),
                      make_group(g, {4})}};
  EXPECT_EQ(program.kernels[1].inputs.size(), 1u);
  EXPECT_EQ(program.kernels[1].outputs.size(), 1u);
  KernelGroup pair = make_group(g, {1, 2});
  EXPECT_EQ(pair.name, g.nodes()[1].name + "+" + g.nodes()[2].name);
  EXPECT_EQ(pair.outputs, g.nodes()[2].outputs);  // Exp's output stays inside
}

// x -> Relu -> Reshape a -> Reshape b -> Exp e, then Neg(a), and
// Add(Reshape(e), Neg(a)): the Reshapes' outputs share their sources'
// buffers; the Relu's lives until the Neg, so the Exp may not take it.
Graph reshape_chain() {
  Graph g;
  ValueId x = g.add_value("x", {DType::Float32, {6, 4}});
  g.inputs().push_back(x);
  ValueId r = add_op(g, "Relu", {x})[0];
  ValueId a = add_op(g, "Reshape", {r, g.add_constant("s1", Tensor::vector_i64({4, 6}))})[0];
  ValueId b = add_op(g, "Reshape", {a, g.add_constant("s2", Tensor::vector_i64({24}))})[0];
  ValueId e = add_op(g, "Exp", {b})[0];
  ValueId n = add_op(g, "Neg", {a})[0];
  ValueId f = add_op(g, "Reshape", {e, g.add_constant("s3", Tensor::vector_i64({4, 6}))})[0];
  g.outputs() = {add_op(g, "Add", {f, n})[0]};
  return g;
}

TEST(MemoryPlan, SameBytesShareTheSourcesBufferAndLifetime) {
  Graph g = reshape_chain();
  Program program{g, {}};
  for (auto& nodes : one_kernel_per_node(g)) program.kernels.push_back(make_group(g, nodes));
  const ValueId relu = g.nodes()[0].outputs[0], a = g.nodes()[1].outputs[0], b = g.nodes()[2].outputs[0];
  const ValueId e = g.nodes()[3].outputs[0], f = g.nodes()[5].outputs[0];
  MemoryPlan plan = plan_memory(program, {}, {{a, relu}, {b, a}, {f, e}});
  EXPECT_EQ(plan.num_intermediates, 3u);  // the Relu's, the Exp's and the Neg's buffers
  EXPECT_EQ(plan.offset[size_t(a)], plan.offset[size_t(relu)]);
  EXPECT_EQ(plan.offset[size_t(b)], plan.offset[size_t(relu)]);
  EXPECT_EQ(plan.offset[size_t(f)], plan.offset[size_t(e)]);
  EXPECT_NE(plan.offset[size_t(e)], plan.offset[size_t(relu)]);  // the Relu's is read by the Neg after the Exp
}

TEST(Executable, ReshapesOfIntermediatesCopyNothing) {
  Graph g = reshape_chain();
  expect_runtime_matches(g);
  Program program{g, {}};
  for (auto& nodes : one_kernel_per_node(g)) program.kernels.push_back(make_group(g, nodes));
  Executable executable(std::move(program));
  EXPECT_EQ(executable.memory_plan().num_intermediates, 3u);
  // A Reshape of a graph input, or into a graph output, still copies.
  Graph io;
  ValueId x = io.add_value("x", {DType::Float32, {6, 4}});
  io.inputs().push_back(x);
  io.outputs() = {add_op(io, "Reshape", {x, io.add_constant("s", Tensor::vector_i64({24}))})[0]};
  expect_runtime_matches(io);
}

TEST(Executable, WrongFeedIsAUserError) {
  Graph g = chain_graph(10);
  Program program{g, {}};
  for (auto& nodes : one_kernel_per_node(g)) program.kernels.push_back(make_group(g, nodes));
  Executable executable(std::move(program));
  EXPECT_THROW(executable.run({}), Error);
  EXPECT_THROW(executable.run({{"x", Tensor(DType::Float32, {11})}}), Error);
}

TEST(Executable, KernelTimesArePerKernel) {
  Graph g = chain_graph(10);
  Program program{g, {}};
  for (auto& nodes : one_kernel_per_node(g)) program.kernels.push_back(make_group(g, nodes));
  Executable executable(std::move(program));
  std::vector<double> seconds;
  executable.run({{"x", Tensor(DType::Float32, {10})}}, &seconds);
  ASSERT_EQ(seconds.size(), 5u);
  for (double s : seconds) EXPECT_GE(s, 0.0);
}

}  // namespace
}  // namespace orchid::runtime
