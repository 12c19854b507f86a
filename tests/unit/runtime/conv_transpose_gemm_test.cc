// The GEMM + col2im ConvTranspose kernel (conv_transpose_gemm.cc) against the
// reference interpreter: strides, pads, dilations, output_padding, groups,
// 1-D/3-D, bias, eltwise and binary epilogues; and the forms it leaves to oneDNN.
#include "runtime/kernels/cpu/conv_transpose_gemm.h"
#include "runtime/kernels/cpu/deconv_matmul.h"
#include "runtime/kernels/cpu/onednn_linear_spec.h"
#include "runtime_test_util.h"

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT

constexpr const char* kGemm = "gemm deconv (col2im)";

// Graphs are built with GraphBuilder (runtime_test_util.h).
struct Builder : GraphBuilder {
  Builder() { seed = 21; }
};

std::vector<size_t> all_nodes(const Graph& graph) {
  std::vector<size_t> all;
  for (size_t i = 0; i < graph.nodes().size(); ++i) all.push_back(i);
  return all;
}

// The GEMM kernel of the whole graph as one group, checked directly against
// the interpreter (whatever make_linear_kernel would choose).
void expect_gemm(const Graph& graph) {
  const std::vector<size_t> all = all_nodes(graph);
  const KernelGroup group = make_group(graph, all);
  std::optional<cpu::onednn::LinearSpec> spec = cpu::onednn::analyze_group(graph, group);
  ASSERT_TRUE(spec.has_value());
  ASSERT_NE(cpu::make_conv_transpose_gemm_kernel(graph, group, *spec), nullptr);
  // Through the runtime: the registry picks the GEMM kernel when the rule
  // prefers it; otherwise only the direct construction above is asserted and
  // the results are still checked against the interpreter.
  std::vector<std::string> impl = expect_runtime_matches(graph, uniform_feeds(graph, 5, -2, 2), {all});
  ASSERT_EQ(impl.size(), 1u);
  if (cpu::conv_transpose_gemm_preferred(*spec) && !cpu::make_deconv_matmul_kernel(graph, group, *spec)) {
    EXPECT_EQ(impl[0], kGemm);
  }
}

// A small harness of our own that forces the GEMM kernel: results against
// the interpreter through a Kernel built directly.
void expect_gemm_forced(const Graph& graph, double rtol = 1e-4, double atol = 1e-5) {
  const std::vector<size_t> all = all_nodes(graph);
  const KernelGroup group = make_group(graph, all);
  std::optional<cpu::onednn::LinearSpec> spec = cpu::onednn::analyze_group(graph, group);
  ASSERT_TRUE(spec.has_value());
  std::unique_ptr<Kernel> kernel = cpu::make_conv_transpose_gemm_kernel(graph, group, *spec);
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->implementation(), kGemm);
  const std::map<std::string, Tensor> feeds = uniform_feeds(graph, 5, -2, 2);
  const std::vector<Tensor> expected = reference::run_graph(graph, feeds);
  KernelArgs args;
  for (ValueId id : group.inputs) {
    const Value& v = graph.value(id);
    args.inputs.push_back(v.constant ? v.constant->raw() : feeds.at(v.name).raw());
  }
  Tensor result(graph.value(group.outputs[0]).type);
  args.outputs.push_back(result.raw());
  kernel->run(args);
  kernel->run(args);  // twice: no state may leak between runs
  ASSERT_EQ(expected.size(), 1u);
  reference::Comparison c = reference::compare_tensors(result, expected[0], rtol, atol);
  EXPECT_TRUE(c.ok) << c.mismatch;
}

Graph deconv_graph(Shape x_shape, Shape w_shape, Attributes a, int64_t out_channels, bool bias = true) {
  Builder b;
  ValueId x = b.input("x", x_shape);
  std::vector<ValueId> inputs = {x, b.constant(w_shape)};
  if (bias) inputs.push_back(b.constant({out_channels}));
  return b.finish(b.op("ConvTranspose", inputs, std::move(a)));
}

using ints = std::vector<int64_t>;

std::vector<Graph> forms() {
  return {
      // DCGAN: k4 s2 p1, and the 1x1 -> 4x4 first layer.
      deconv_graph({1, 8, 4, 4}, {8, 5, 4, 4}, attrs({{"strides", ints{2, 2}}, {"pads", ints{1, 1, 1, 1}}}), 5),
      deconv_graph({2, 10, 1, 1}, {10, 6, 4, 4}, {}, 6, false),
      // Images too large to share a GEMM: one chunk per image, the output of each at its own place.
      deconv_graph({3, 4, 16, 16}, {4, 32, 4, 4}, attrs({{"strides", ints{2, 2}}, {"pads", ints{1, 1, 1, 1}}}), 32),
      // A batch whose images share one GEMM (their columns gathered side by side), groups too.
      deconv_graph({5, 8, 3, 4}, {8, 3, 4, 4},
                   attrs({{"group", int64_t(2)}, {"strides", ints{2, 2}}, {"pads", ints{1, 1, 1, 1}}}), 6),
      // output_padding, asymmetric pads, odd strides.
      deconv_graph({1, 4, 5, 5}, {4, 6, 3, 3},
                   attrs({{"strides", ints{2, 2}}, {"pads", ints{1, 1, 1, 1}}, {"output_padding", ints{1, 1}}}), 6),
      deconv_graph({1, 3, 6, 5}, {3, 4, 3, 4},
                   attrs({{"strides", ints{3, 2}}, {"pads", ints{0, 2, 1, 1}}, {"output_padding", ints{1, 0}}}), 4),
      // Dilations and groups.
      deconv_graph({2, 6, 4, 5}, {6, 2, 3, 2},
                   attrs({{"group", int64_t(3)}, {"dilations", ints{2, 1}}, {"pads", ints{0, 1, 2, 0}}}), 6),
      deconv_graph({1, 8, 5, 5}, {8, 1, 3, 3},
                   attrs({{"group", int64_t(8)}, {"strides", ints{2, 2}}, {"dilations", ints{2, 3}}}), 8),
      // Column phases at least a vector long (gathered, then interleaved), of unequal lengths: 41
      // outputs as 21 + 20, 61 as 21 + 20 + 20; and stride 4 with phases of 9 and 8 (scattered adds).
      deconv_graph({1, 3, 3, 20}, {3, 4, 4, 4},
                   attrs({{"strides", ints{2, 2}}, {"pads", ints{1, 1, 1, 1}}, {"output_padding", ints{0, 1}}}), 4),
      deconv_graph({1, 2, 3, 20}, {2, 3, 3, 5},
                   attrs({{"strides", ints{2, 3}}, {"pads", ints{1, 1, 0, 2}}, {"output_padding", ints{0, 2}}}), 3),
      deconv_graph({1, 2, 2, 9}, {2, 3, 3, 5}, attrs({{"strides", ints{1, 4}}, {"pads", ints{0, 2, 0, 1}}}), 3),
      // Stride larger than the kernel (gaps), k=2 s=2 upsampling.
      deconv_graph({1, 3, 4, 4}, {3, 2, 2, 2}, attrs({{"strides", ints{3, 3}}}), 2),
      deconv_graph({1, 6, 5, 5}, {6, 4, 2, 2}, attrs({{"strides", ints{2, 2}}}), 4),
      // FSRCNN-like: k9 s3 p4 with output_padding.
      deconv_graph({1, 7, 6, 6}, {7, 1, 9, 9},
                   attrs({{"strides", ints{3, 3}}, {"pads", ints{4, 4, 4, 4}}, {"output_padding", ints{2, 2}}}), 1),
      // Columns several times the band budget: by bands of input rows (FSRCNN's 56 -> 1 at 256x256
      // went this way); and with groups, dilation and a height stride larger than the kernel, so
      // that some output rows get no tap.
      deconv_graph({1, 4, 160, 96}, {4, 1, 9, 9},
                   attrs({{"strides", ints{3, 3}}, {"pads", ints{4, 4, 4, 4}}, {"output_padding", ints{2, 2}}}), 1),
      deconv_graph({1, 6, 400, 256}, {6, 2, 2, 3},
                   attrs({{"group", int64_t(2)}, {"strides", ints{3, 2}}, {"dilations", ints{1, 2}},
                          {"pads", ints{0, 1, 1, 0}}}),
                   4),
      // output_shape, 1-D and 3-D.
      deconv_graph({1, 4, 5, 5}, {4, 2, 3, 3}, attrs({{"strides", ints{2, 2}}, {"output_shape", ints{10, 10}}}), 2),
      deconv_graph({1, 3, 7}, {3, 5, 4}, attrs({{"strides", ints{3}}, {"pads", ints{1, 2}}}), 5),
      deconv_graph({2, 4, 9}, {4, 3, 3}, attrs({{"dilations", ints{2}}, {"output_padding", ints{0}}}), 3, false),
      deconv_graph({1, 2, 3, 4, 3}, {2, 3, 2, 2, 2}, attrs({{"strides", ints{2, 2, 2}}, {"pads", ints{0, 1, 0, 1, 0, 0}}}),
                   3),
  };
}

TEST(ConvTransposeGemm, Forms) {
  const std::vector<Graph> graphs = forms();
  for (size_t i = 0; i < graphs.size(); ++i) {
    SCOPED_TRACE("form " + std::to_string(i));
    const Graph& g = graphs[i];
    expect_gemm_forced(g);
    expect_gemm(g);
  }
}

// ConvTranspose + per-channel Add + an activation.
Graph epilogue_graph(const std::vector<std::string>& ops) {
  Builder b;
  ValueId v = b.op("ConvTranspose", {b.input("x", {1, 6, 4, 4}), b.constant({6, 5, 4, 4})},
                   attrs({{"strides", ints{2, 2}}, {"pads", ints{1, 1, 1, 1}}}));
  v = b.op("Add", {v, b.constant({5, 1, 1})});
  for (const std::string& op : ops) {
    if (op == "Max") {
      v = b.op("Max", {v, b.scalar(-0.5f)});
    } else if (op == "Min") {
      v = b.op("Min", {v, b.scalar(0.75f)});
    } else if (op == "Mul") {
      v = b.op("Mul", {v, b.scalar(1.5f)});
    } else if (op == "LeakyRelu") {
      v = b.op("LeakyRelu", {v}, attrs({{"alpha", 0.2}}));
    } else {
      v = b.op(op, {v});
    }
  }
  return b.finish(v);
}

TEST(ConvTransposeGemm, Epilogues) {
  for (const std::vector<std::string>& ops : std::vector<std::vector<std::string>>{
           {"Relu"}, {"Tanh"}, {"Sigmoid"}, {"Max", "Min"}, {"LeakyRelu"}, {"Mul", "Abs"}, {"Elu"}, {}}) {
    Graph g = epilogue_graph(ops);
    expect_gemm_forced(g);
    expect_gemm(g);
  }
}

// A residual Add of a runtime tensor, then an activation (binary epilogues).
TEST(ConvTransposeGemm, ResidualEpilogue) {
  Builder b;
  ValueId v = b.op("ConvTranspose", {b.input("x", {2, 3, 4, 4}), b.constant({3, 2, 3, 3})});
  Graph g = b.finish(b.op("Relu", {b.op("Add", {v, b.input("r", {2, 2, 6, 6})})}));
  expect_gemm_forced(g);
  expect_gemm(g);
}

// By bands of input rows (columns over the band budget), with a residual
// Add: its rows are read at the band's output rows.
TEST(ConvTransposeGemm, BandedResidualEpilogue) {
  Builder b;
  ValueId v = b.op("ConvTranspose", {b.input("x", {1, 3, 170, 100}), b.constant({3, 2, 9, 9}), b.constant({2})},
                   attrs({{"strides", ints{3, 3}}, {"pads", ints{4, 4, 4, 4}}}));
  Graph g = b.finish(b.op("Relu", {b.op("Add", {v, b.input("r", {1, 2, 508, 298})})}));
  expect_gemm_forced(g);
  expect_gemm(g);
}

TEST(ConvTransposeGemm, RuntimeBias) {
  Builder b;
  ValueId v = b.op("ConvTranspose", {b.input("x", {1, 3, 4, 4}), b.constant({3, 4, 3, 3}), b.input("b", {4})},
                   attrs({{"strides", ints{2, 2}}}));
  Graph g = b.finish(b.op("Relu", {v}));
  expect_gemm_forced(g);
  expect_gemm(g);
}

TEST(ConvTransposeGemm, LeavesOtherFormsToOneDnn) {
  {  // Runtime weights.
    Builder b;
    Graph g = b.finish(b.op("ConvTranspose", {b.input("x", {1, 3, 4, 4}), b.input("w", {3, 2, 3, 3})}));
    const KernelGroup group = make_group(g, all_nodes(g));
    auto spec = cpu::onednn::analyze_group(g, group);
    ASSERT_TRUE(spec.has_value());
    EXPECT_EQ(cpu::make_conv_transpose_gemm_kernel(g, group, *spec), nullptr);
  }
}

}  // namespace
}  // namespace orchid::runtime
