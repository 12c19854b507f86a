// ConvTranspose with kernel = stride as one channels-last matmul
// (deconv_matmul.cc) against the reference interpreter: NCHW buffers (the
// kernel converts), NHWC buffers (native layouts), strides that differ per
// axis, channel counts off the vector width, batches, bias and eltwise
// epilogues, a runtime bias; and the forms it leaves to the other kernels.
#include "runtime/kernels/cpu/deconv_matmul.h"

#include "runtime/kernels/cpu/onednn_common.h"
#include "runtime/kernels/cpu/onednn_linear_spec.h"
#include "runtime_test_util.h"

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT
using ints = std::vector<int64_t>;

struct Builder : GraphBuilder {
  Builder() { seed = 29; }
};

std::unique_ptr<Kernel> kernel_of(const Graph& graph, KernelGroup& group) {
  std::vector<size_t> all;
  for (size_t i = 0; i < graph.nodes().size(); ++i) all.push_back(i);
  group = make_group(graph, all);
  const std::optional<cpu::onednn::LinearSpec> spec = cpu::onednn::analyze_group(graph, group);
  if (!spec) return nullptr;
  return cpu::make_deconv_matmul_kernel(graph, group, *spec);
}

// [n, c, h, w] <-> [n, h, w, c], row-major both.
Tensor to_nhwc(const Tensor& t) {
  const Shape& s = t.shape();
  Tensor out(TensorType{DType::Float32, {s[0], s[2], s[3], s[1]}});
  const float* in = t.data<float>();
  float* o = out.data<float>();
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t h = 0; h < s[2]; ++h)
        for (int64_t w = 0; w < s[3]; ++w)
          o[((n * s[2] + h) * s[3] + w) * s[1] + c] = in[((n * s[1] + c) * s[2] + h) * s[3] + w];
  return out;
}

// The kernel against the interpreter, with NCHW buffers or (native) NHWC ones.
void expect_matches(const Graph& graph, bool native) {
  KernelGroup group;
  std::unique_ptr<Kernel> kernel = kernel_of(graph, group);
  ASSERT_NE(kernel, nullptr);
  EXPECT_NE(kernel->implementation().find("onednn deconv as matmul"), std::string::npos);
  const std::map<std::string, Tensor> feeds = uniform_feeds(graph, 5, -2, 2);
  const std::vector<Tensor> expected = reference::run_graph(graph, feeds);
  ASSERT_EQ(expected.size(), 1u);
  std::vector<Tensor> inputs;
  KernelArgs args;
  for (size_t k = 0; k < group.inputs.size(); ++k) {
    const Value& v = graph.value(group.inputs[k]);
    if (v.constant) {
      args.inputs.push_back(v.constant->raw());
      continue;
    }
    std::optional<NativeLayout> layout = native ? kernel->native_input_layout(k) : std::nullopt;
    if (layout) kernel->read_input_as(k, *layout);
    inputs.push_back(layout ? to_nhwc(feeds.at(v.name)) : feeds.at(v.name));
    args.inputs.push_back(inputs.back().raw());
  }
  std::optional<NativeLayout> out_layout = native ? kernel->native_output_layout(0) : std::nullopt;
  if (native) {
    ASSERT_TRUE(out_layout.has_value());
    kernel->use_native_output(0);
    EXPECT_FALSE(kernel->native_output_layout(0).has_value());
  }
  Tensor result(native ? to_nhwc(expected[0]).type() : expected[0].type());
  args.outputs.push_back(result.raw());
  kernel->run(args);
  kernel->run(args);  // twice: no state may leak between runs
  const Tensor want = native ? to_nhwc(expected[0]) : expected[0];
  reference::Comparison c = reference::compare_tensors(result, want, 1e-4, 1e-5);
  EXPECT_TRUE(c.ok) << c.mismatch;
}

Graph deconv(Shape x, int64_t cout, ints strides, const std::vector<std::string>& epilogue = {}, bool bias = true) {
  Builder b;
  const Shape w = {x[1], cout, strides[0], strides[1]};
  std::vector<ValueId> inputs = {b.input("x", x), b.constant(w)};
  if (bias) inputs.push_back(b.constant({cout}));
  ValueId v = b.op("ConvTranspose", inputs, attrs({{"strides", strides}, {"kernel_shape", strides}}));
  for (const std::string& op : epilogue) {
    v = op == "Add" ? b.op("Add", {v, b.constant({cout, 1, 1})}) : b.op(op, {v});
  }
  return b.finish(v);
}

TEST(DeconvMatmul, MatchesTheInterpreter) {
  const std::vector<Graph> graphs = {
      deconv({1, 6, 5, 5}, 4, {2, 2}),
      deconv({1, 32, 8, 8}, 16, {2, 2}, {"Relu"}),
      deconv({2, 17, 3, 7}, 5, {3, 2}, {"Add", "Sigmoid"}),
      deconv({1, 3, 4, 1}, 33, {1, 4}, {}, false),
      deconv({3, 20, 2, 3}, 9, {2, 3}, {"Tanh"}),
  };
  for (size_t i = 0; i < graphs.size(); ++i) {
    for (bool native : {false, true}) {
      SCOPED_TRACE("graph " + std::to_string(i) + (native ? " nhwc" : " nchw"));
      expect_matches(graphs[i], native);
    }
  }
}

TEST(DeconvMatmul, RuntimeBias) {
  Builder b;
  ValueId v = b.op("ConvTranspose", {b.input("x", {1, 5, 4, 4}), b.constant({5, 7, 2, 2}), b.input("b", {7})},
                   attrs({{"strides", ints{2, 2}}}));
  const Graph g = b.finish(b.op("Relu", {v}));
  expect_matches(g, false);
  expect_matches(g, true);
}

// The registry runs it for such a layer in a program.
TEST(DeconvMatmul, IsTheDefaultForNonOverlappingTaps) {
  const Graph g = deconv({1, 8, 6, 6}, 8, {2, 2}, {"Relu"});
  const std::vector<std::string> impl = expect_runtime_matches(g, uniform_feeds(g, 5, -2, 2), {{0, 1}});
  ASSERT_EQ(impl.size(), 1u);
  EXPECT_NE(impl[0].find("onednn deconv as matmul"), std::string::npos) << impl[0];
}

TEST(DeconvMatmul, LeavesOtherFormsToTheOtherKernels) {
  const auto none = [](const Graph& g) {
    KernelGroup group;
    return kernel_of(g, group) == nullptr;
  };
  {  // Pads (symmetric, asymmetric), output padding, overlapping taps (k4 s2 p1).
    for (const Attributes& a : {attrs({{"strides", ints{2, 2}}, {"pads", ints{1, 1, 1, 1}}}),
                                attrs({{"strides", ints{2, 2}}, {"pads", ints{1, 0, 0, 0}}}),
                                attrs({{"strides", ints{2, 2}}, {"output_padding", ints{1, 1}}})}) {
      Builder c;
      EXPECT_TRUE(none(c.finish(c.op("ConvTranspose", {c.input("x", {1, 4, 4, 4}), c.constant({4, 2, 2, 2})}, a))));
    }
    Builder c;
    const Graph k4 = c.finish(c.op("ConvTranspose", {c.input("x", {1, 4, 4, 4}), c.constant({4, 2, 4, 4})},
                                   attrs({{"strides", ints{2, 2}}, {"pads", ints{1, 1, 1, 1}}})));
    EXPECT_TRUE(none(k4));
  }
  {
    Builder c;
    const Graph grouped = c.finish(c.op("ConvTranspose", {c.input("x", {1, 4, 4, 4}), c.constant({4, 2, 2, 2})},
                                        attrs({{"strides", ints{2, 2}}, {"group", int64_t(2)}})));
    EXPECT_TRUE(none(grouped));
  }
  {  // A residual Add (binary epilogue) and runtime weights.
    Builder c;
    ValueId v =
        c.op("ConvTranspose", {c.input("x", {1, 4, 3, 3}), c.constant({4, 2, 2, 2})}, attrs({{"strides", ints{2, 2}}}));
    EXPECT_TRUE(none(c.finish(c.op("Add", {v, c.input("r", {1, 2, 6, 6})}))));
    Builder d;
    EXPECT_TRUE(none(d.finish(d.op("ConvTranspose", {d.input("x", {1, 4, 3, 3}), d.input("w", {4, 2, 2, 2})},
                                   attrs({{"strides", ints{2, 2}}})))));
  }
}

}  // namespace
}  // namespace orchid::runtime
