// The channels-last convs (direct_channels_last.h), pointwise, grouped and depthwise,
// against the reference interpreter: randomized channel counts (tails of
// every vector width, several weight panels), planes and batches, each kind
// of epilogue (a residual Add included), with row-major buffers (its
// transpose of the output) and with native ones (inputs channels-last,
// blocked by 8 or 16, or NCHW; output channels-last), converted by oneDNN's
// reorder.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "direct_test_util.h"
#include "onednn_test_util.h"
#include "runtime/kernels/cpu/onednn_linear_spec.h"
#include "support/parallel.h"

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT
using dnnl::memory;
using tag = memory::format_tag;
using ints = std::vector<int64_t>;

constexpr const char* kImplementation = "direct pointwise conv (channels-last)";
constexpr const char* kGroupedImplementation = "direct grouped conv (channels-last)";
constexpr const char* kDepthwiseImplementation = "direct depthwise conv (channels-last)";

Graph pointwise(const Shape& x, int64_t m, int epilogue, uint32_t seed, bool bias) {
  GraphBuilder b;
  b.seed = seed;
  std::vector<ValueId> inputs = {b.input("x", x), b.constant({m, x[1], 1, 1}, -0.5, 0.5)};
  if (bias) inputs.push_back(b.constant({m}));
  ValueId v = b.op("Conv", inputs);
  return b.finish(add_conv_epilogue(b, v, epilogue, m, {x[0], m, x[2], x[3]}));
}

TEST(ChannelsLastPointwise, RandomShapesRowMajor) {
  std::mt19937 rng(17);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 30; ++trial) {
    const int epilogue = trial % 6;
    const int64_t c = pick(1, 90), m = trial % 3 ? pick(1, 40) : pick(60, 200);
    const Shape x = {pick(1, 2), c, pick(1, 15), pick(1, 17)};
    SCOPED_TRACE("trial " + std::to_string(trial));
    expect_direct(pointwise(x, m, epilogue, uint32_t(700 + trial), trial % 2), kImplementation,
                  cpu::kChannelsLastVariant);
  }
}

// The kernel built for the whole graph, its input in layout `in` and its
// output channels-last, against the interpreter.
void expect_native(const Graph& graph, tag in, const std::string& implementation = kImplementation) {
  KernelGroup group = make_group(graph, all_nodes(graph));
  group.variant = cpu::kChannelsLastVariant;
  std::unique_ptr<Kernel> kernel = cpu::make_linear_kernel(graph, group);
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->implementation(), implementation);
  const std::map<std::string, Tensor> feeds = uniform_feeds(graph, 3, -2, 2);
  const std::vector<Tensor> want = reference::run_graph(graph, feeds);
  // Every runtime input (x, and a residual r) in layout `in`, converted by oneDNN.
  std::vector<std::vector<float>> native_inputs;
  KernelArgs args;
  for (size_t k = 0; k < group.inputs.size(); ++k) {
    const Value& v = graph.value(group.inputs[k]);
    if (v.constant) {
      args.inputs.push_back(v.constant->raw());
      continue;
    }
    const Tensor& t = feeds.at(v.name);
    const memory::dims dims(t.shape().begin(), t.shape().end());
    const memory::desc md(dims, memory::data_type::f32, in);
    ASSERT_TRUE(kernel->can_read_input_as(k, cpu::onednn::native_layout(md))) << v.name;
    kernel->read_input_as(k, cpu::onednn::native_layout(md));
    const std::vector<float> data(t.data<float>(), t.data<float>() + t.numel());
    native_inputs.push_back(onednn_convert(data, cpu::onednn::plain_f32(dims), md));
    args.inputs.push_back(native_inputs.back().data());
  }
  const std::optional<NativeLayout> out_layout = kernel->native_output_layout(0);
  ASSERT_TRUE(out_layout.has_value());
  kernel->use_native_output(0);
  std::vector<float> y_native(out_layout->bytes / sizeof(float));
  args.outputs.push_back(y_native.data());
  kernel->run(args);
  kernel->run(args);  // twice: no state may leak between runs
  const Shape& y_shape = want[0].shape();
  const memory::dims y_dims(y_shape.begin(), y_shape.end());
  const std::vector<float> y = onednn_convert(y_native, cpu::onednn::layout_desc(*out_layout),
                                              cpu::onednn::plain_f32(y_dims));
  Tensor got(want[0].type());
  std::copy(y.begin(), y.end(), got.data<float>());
  reference::Comparison c = reference::compare_tensors(got, want[0], 1e-4, 1e-4);
  EXPECT_TRUE(c.ok) << c.mismatch;
}

TEST(ChannelsLastPointwise, NativeLayouts) {
  const std::vector<std::tuple<Shape, int64_t, int>> cases = {
      {{1, 32, 7, 7}, 48, 1},   {{1, 400, 7, 7}, 400, 1}, {{2, 16, 5, 9}, 70, 2}, {{1, 48, 14, 14}, 24, 4},
      {{1, 64, 3, 3}, 130, 5},  {{2, 24, 6, 6}, 16, 0},   {{1, 40, 7, 7}, 80, 3}, {{2, 16, 4, 5}, 32, 3},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& [x, m, epilogue] = cases[i];
    for (tag in : {tag::nhwc, tag::nChw16c, tag::nChw8c, tag::nchw}) {
      SCOPED_TRACE("case " + std::to_string(i) + " layout " + std::to_string(int(in)));
      expect_native(pointwise(x, m, epilogue, uint32_t(800 + i), i % 2 == 0), in);
    }
  }
}

// A grouped conv of `groups` groups of cin_g -> 16 m_v channels.
Graph grouped(const Shape& x, int64_t groups, int64_t m, const ints& k, const ints& stride, const ints& d, const ints& p,
              int epilogue, uint32_t seed, bool bias) {
  GraphBuilder b;
  b.seed = seed;
  std::vector<ValueId> inputs = {b.input("x", x), b.constant({m, x[1] / groups, k[0], k[1]}, -0.5, 0.5)};
  if (bias) inputs.push_back(b.constant({m}));
  ValueId v = b.op("Conv", inputs,
                   attrs({{"group", groups}, {"strides", stride}, {"dilations", d}, {"pads", p}, {"kernel_shape", k}}));
  Shape out = {x[0], m};
  for (size_t i = 0; i < 2; ++i) out.push_back((x[2 + i] + p[i] + p[i + 2] - d[i] * (k[i] - 1) - 1) / stride[i] + 1);
  return b.finish(add_conv_epilogue(b, v, epilogue, m, out));
}

TEST(ChannelsLastGrouped, RandomShapesRowMajor) {
  std::mt19937 rng(23);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 30; ++trial) {
    const int64_t groups = pick(2, 5), cin_g = pick(1, 20), m = groups * 16 * pick(1, 2);
    const ints k = {pick(1, 3), pick(1, 3)}, stride = {pick(1, 2), pick(1, 2)}, d = {pick(1, 2), pick(1, 2)};
    const ints p = {pick(0, k[0] - 1), pick(0, k[1] - 1), pick(0, k[0] - 1), pick(0, k[1] - 1)};
    const Shape x = {pick(1, 2), groups * cin_g, pick(4, 20), pick(4, 33)};
    if (x[2] + p[0] + p[2] < d[0] * (k[0] - 1) + 1 || x[3] + p[1] + p[3] < d[1] * (k[1] - 1) + 1) continue;
    SCOPED_TRACE("trial " + std::to_string(trial));
    expect_direct(grouped(x, groups, m, k, stride, d, p, trial % 6, uint32_t(900 + trial), trial % 2),
                  kGroupedImplementation, cpu::kChannelsLastVariant);
  }
}

TEST(ChannelsLastGrouped, NativeLayouts) {
  const std::vector<Graph> graphs = {
      grouped({1, 32, 12, 12}, 2, 32, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 1, 1, true),   // RegNet's stride 2
      grouped({1, 64, 7, 7}, 4, 64, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 3, 2, true),     // residual
      grouped({2, 48, 9, 10}, 3, 96, {3, 1}, {1, 2}, {2, 1}, {2, 0, 1, 0}, 2, 3, false),
  };
  for (size_t i = 0; i < graphs.size(); ++i) {
    for (tag in : {tag::nhwc, tag::nChw16c, tag::nchw}) {
      SCOPED_TRACE("graph " + std::to_string(i) + " layout " + std::to_string(int(in)));
      expect_native(graphs[i], in, kGroupedImplementation);
    }
  }
}

TEST(ChannelsLastDepthwise, RandomShapesRowMajor) {
  std::mt19937 rng(29);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 30; ++trial) {
    const int64_t c = 16 * pick(1, 4);
    const ints k = {pick(1, 5), pick(1, 5)}, stride = {pick(1, 2), pick(1, 2)}, d = {pick(1, 2), pick(1, 2)};
    const ints p = {pick(0, k[0] - 1), pick(0, k[1] - 1), pick(0, k[0] - 1), pick(0, k[1] - 1)};
    const Shape x = {pick(1, 2), c, pick(3, 20), pick(3, 33)};
    if (x[2] + p[0] + p[2] < d[0] * (k[0] - 1) + 1 || x[3] + p[1] + p[3] < d[1] * (k[1] - 1) + 1) continue;
    SCOPED_TRACE("trial " + std::to_string(trial));
    expect_direct(grouped(x, c, c, k, stride, d, p, trial % 7, uint32_t(950 + trial), trial % 2),
                  kDepthwiseImplementation, cpu::kChannelsLastVariant);
  }
}

TEST(ChannelsLastDepthwise, NativeLayouts) {
  const std::vector<Graph> graphs = {
      grouped({1, 128, 12, 12}, 128, 128, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 6, 4, true),  // Mix-FFN + GELU
      grouped({1, 32, 13, 11}, 32, 32, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 2, 5, true),     // stride 2 + SiLU
      grouped({2, 48, 9, 10}, 48, 48, {5, 3}, {1, 2}, {2, 1}, {4, 1, 4, 1}, 3, 6, false),     // residual
  };
  for (size_t i = 0; i < graphs.size(); ++i) {
    for (tag in : {tag::nhwc, tag::nChw16c, tag::nchw}) {
      SCOPED_TRACE("graph " + std::to_string(i) + " layout " + std::to_string(int(in)));
      expect_native(graphs[i], in, kDepthwiseImplementation);
    }
  }
}

TEST(ChannelsLastPointwise, OnlyOneByOne) {
  const auto variants = [](const Graph& g) { return cpu::linear_variants(g, make_group(g, all_nodes(g))); };
  const auto has = [](const std::vector<std::string>& v) {
    return std::find(v.begin(), v.end(), cpu::kChannelsLastVariant) != v.end();
  };
  EXPECT_TRUE(has(variants(pointwise({1, 8, 5, 5}, 8, 1, 1, true))));
  EXPECT_TRUE(has(variants(pointwise({1, 8, 5, 5}, 8, 3, 1, true))));  // a residual Add
  GraphBuilder b;
  ValueId v = b.op("Conv", {b.input("x", {1, 8, 5, 5}), b.constant({8, 8, 3, 3})});
  EXPECT_FALSE(has(variants(b.finish(v))));  // dense 3x3
  // Grouped: whole vectors of output channels per group only.
  EXPECT_TRUE(has(variants(grouped({1, 32, 6, 6}, 2, 32, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 0, 1, true))));
  EXPECT_FALSE(has(variants(grouped({1, 32, 6, 6}, 4, 32, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 0, 1, true))));
  // Depthwise: whole vectors of channels, one output channel per group.
  EXPECT_TRUE(has(variants(grouped({1, 32, 6, 6}, 32, 32, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 0, 1, true))));
  EXPECT_FALSE(has(variants(grouped({1, 24, 6, 6}, 24, 24, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 0, 1, true))));
  EXPECT_FALSE(has(variants(grouped({1, 16, 6, 6}, 16, 32, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 0, 1, true))));
}

TEST(ChannelsLastPointwise, KeepsNativeLayouts) {
  const Graph g = pointwise({1, 8, 5, 5}, 8, 1, 1, true);
  KernelGroup group = make_group(g, all_nodes(g));
  group.variant = cpu::kChannelsLastVariant;
  EXPECT_TRUE(cpu::linear_keeps_native_layouts(g, group));
  group.variant = cpu::kDirectVariant;
  EXPECT_FALSE(cpu::linear_keeps_native_layouts(g, group));
}

}  // namespace
}  // namespace orchid::runtime

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT

// Chains of 24 convs + ReLU, 1x1 or grouped 3x3 (weights that do not stay
// in cache between runs, as in a model), every kernel oneDNN's or every one
// channels-last, tensors in the layouts the kernels negotiate: median ms
// per conv.
// ORCHID_BENCH_THREADS=1 build/tests/orchid_unit_tests
//   --gtest_filter=ChannelsLast.DISABLED_Benchmark --gtest_also_run_disabled_tests
TEST(ChannelsLast, DISABLED_Benchmark) {
  set_num_threads(std::getenv("ORCHID_BENCH_THREADS") ? std::atoi(std::getenv("ORCHID_BENCH_THREADS")) : 2);
  const int layers = std::getenv("ORCHID_BENCH_LAYERS") ? std::atoi(std::getenv("ORCHID_BENCH_LAYERS")) : 24;
  struct Case {
    int64_t c, side, groups, k;
  };
  for (const Case& t : std::vector<Case>{{400, 7, 1, 1}, {160, 14, 1, 1}, {64, 56, 1, 1}, {96, 28, 1, 1},
                                         {400, 7, 25, 3}, {160, 14, 10, 3}, {64, 28, 4, 3}, {32, 56, 2, 3}}) {
    GraphBuilder b;
    ValueId v = b.input("x", {1, t.c, t.side, t.side});
    for (int i = 0; i < layers; ++i) {
      const int64_t p = t.k / 2;
      v = b.op("Conv", {v, b.constant({t.c, t.c / t.groups, t.k, t.k}, -0.05, 0.05), b.constant({t.c})},
               attrs({{"group", t.groups}, {"pads", std::vector<int64_t>{p, p, p, p}}}));
      v = b.op("Relu", {v});
    }
    const Graph graph = b.finish(v);
    double ms[2];
    for (int variant = 0; variant < 2; ++variant) {
      Program program;
      program.graph = graph;
      for (size_t n = 0; n < graph.nodes().size(); n += 2) {
        program.kernels.push_back(make_group(graph, {n, n + 1}));
        program.kernels.back().variant = variant ? cpu::kChannelsLastVariant : "";
      }
      Executable e(std::move(program));
      const std::map<std::string, Tensor> feeds = uniform_feeds(graph, 3, -1, 1);
      e.run(feeds);
      std::vector<double> totals;
      for (int run = 0; run < 41; ++run) {
        std::vector<double> seconds;
        e.run(feeds, &seconds);
        double total = 0;
        for (double s : seconds) total += s;
        totals.push_back(total);
      }
      std::sort(totals.begin(), totals.end());
      ms[variant] = totals[totals.size() / 2] * 1e3 / layers;
    }
    std::printf("%s %ld ch g%ld %ldx%ld: onednn %.4f ms, channels-last %.4f ms per conv\n", t.k == 1 ? "pw" : "grouped",
                long(t.c), long(t.groups), long(t.side), long(t.side), ms[0], ms[1]);
  }
}

}  // namespace
}  // namespace orchid::runtime
