// The direct convolution kernels (direct_conv.cc, direct_gemm_conv.cc)
// against the reference interpreter on randomized shapes — depthwise with
// any multiplier, kernel, stride, dilation and padding; pointwise with any
// channel counts and plane sizes (tails of every vector width); dense and
// grouped with any kernel, dilation and padding — and each kind of epilogue.
#include "runtime/kernels/cpu/direct_conv.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <tuple>

#include "runtime/kernels/cpu/registry.h"
#include "direct_test_util.h"
#include "cost/machine.h"
#include "support/parallel.h"

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT
using ints = std::vector<int64_t>;

Shape conv_output(const Shape& x, int64_t m, const ints& k, const ints& s, const ints& d, const ints& p) {
  Shape out = {x[0], m};
  for (size_t i = 0; i < 2; ++i) out.push_back((x[2 + i] + p[i] + p[i + 2] - d[i] * (k[i] - 1) - 1) / s[i] + 1);
  return out;
}

TEST(DirectConv, DepthwiseRandomShapes) {
  std::mt19937 rng(5);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t c = pick(2, 12), mult = pick(1, 2), n = pick(1, 2);
    const ints k = {pick(1, 3) * 2 - 1, pick(1, 3) * 2 - 1};
    const ints s = {pick(1, 3), pick(1, 3)};
    const ints d = {pick(1, 2), pick(1, 2)};
    const ints p = {pick(0, k[0]), pick(0, k[1]), pick(0, k[0]), pick(0, k[1])};
    const Shape x = {n, c, pick(1, 40), pick(1, 90)};
    const Shape out = conv_output(x, c * mult, k, s, d, p);
    if (out[2] < 1 || out[3] < 1) continue;
    SCOPED_TRACE("trial " + std::to_string(trial));
    GraphBuilder b;
    b.seed = uint32_t(100 + trial);
    const bool bias = trial % 3 == 0;
    std::vector<ValueId> inputs = {b.input("x", x), b.constant({c * mult, 1, k[0], k[1]})};
    if (bias) inputs.push_back(b.constant({c * mult}));
    ValueId v = b.op("Conv", inputs,
                     attrs({{"group", c}, {"strides", s}, {"dilations", d}, {"pads", p}, {"kernel_shape", k}}));
    Graph g = b.finish(add_conv_epilogue(b, v, trial % 6, c * mult, out));
    expect_direct(g, "direct depthwise conv");
  }
}

// Stride 2 both ways without dilation runs by rows (each input row
// deinterleaved once): kernels of odd and even sizes, pads up to the
// kernel, widths on both sides of whole vectors, every epilogue kind.
TEST(DirectConv, DepthwiseStrideTwoByRows) {
  std::mt19937 rng(17);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 30; ++trial) {
    const int64_t c = pick(1, 6), mult = pick(1, 2), n = pick(1, 2);
    const ints k = {pick(1, 7), pick(1, 7)};
    const ints s = {2, 2}, d = {1, 1};
    const ints p = {pick(0, k[0] - 1), pick(0, k[1] - 1), pick(0, k[0] - 1), pick(0, k[1] - 1)};
    const Shape x = {n, c, pick(1, 30), pick(1, 140)};
    const Shape out = conv_output(x, c * mult, k, s, d, p);
    if (out[2] < 1 || out[3] < 1) continue;
    SCOPED_TRACE("trial " + std::to_string(trial));
    GraphBuilder b;
    b.seed = uint32_t(700 + trial);
    std::vector<ValueId> inputs = {b.input("x", x), b.constant({c * mult, 1, k[0], k[1]})};
    if (trial % 2) inputs.push_back(b.constant({c * mult}));
    ValueId v = b.op("Conv", inputs,
                     attrs({{"group", c}, {"strides", s}, {"dilations", d}, {"pads", p}, {"kernel_shape", k}}));
    Graph g = b.finish(add_conv_epilogue(b, v, trial % 7, c * mult, out));
    expect_direct(g, "direct depthwise conv");
  }
}

TEST(DirectConv, PointwiseRandomShapes) {
  std::mt19937 rng(9);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 30; ++trial) {
    const int64_t c = pick(1, 40), m = pick(1, 30), n = pick(1, 2);
    const Shape x = {n, c, pick(1, 20), pick(1, 40)};
    const Shape out = {n, m, x[2], x[3]};
    SCOPED_TRACE("trial " + std::to_string(trial));
    GraphBuilder b;
    b.seed = uint32_t(300 + trial);
    std::vector<ValueId> inputs = {b.input("x", x), b.constant({m, c, 1, 1})};
    if (trial % 2) inputs.push_back(b.constant({m}));
    ValueId v = b.op("Conv", inputs);
    Graph g = b.finish(add_conv_epilogue(b, v, trial % 6, m, out));
    expect_direct(g, "direct pointwise conv");
  }
}

// Sums longer than one chunk of input channels, several row tasks.
TEST(DirectConv, PointwiseDeepSums) {
  for (const Shape& x : {Shape{1, 700, 5, 27}, Shape{2, 260, 16, 16}}) {
    GraphBuilder b;
    const int64_t m = x[1] == 700 ? 200 : 37;
    const Shape out = {x[0], m, x[2], x[3]};
    ValueId v = b.op("Conv", {b.input("x", x), b.constant({m, x[1], 1, 1}, -0.1, 0.1), b.constant({m})});
    expect_direct(b.finish(add_conv_epilogue(b, v, 3, m, out)), "direct pointwise conv");
  }
}

TEST(DirectConv, RuntimeBias) {
  GraphBuilder b;
  ValueId v = b.op("Conv", {b.input("x", {1, 5, 9, 33}), b.constant({5, 1, 3, 3}), b.input("bias", {5})},
                   attrs({{"group", int64_t(5)}, {"pads", ints{1, 1, 1, 1}}}));
  expect_direct(b.finish(b.op("Relu", {v})), "direct depthwise conv");
}

TEST(DirectConv, DenseRandomShapes) {
  std::mt19937 rng(13);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 30; ++trial) {
    const int64_t groups = trial % 3 == 2 ? pick(2, 4) : 1;  // grouped: a GEMM per group
    const int64_t c = groups * pick(1, 10), m = groups * pick(1, 10), n = pick(1, 2);
    const ints k = {pick(1, 5), pick(1, 5)};
    if (k[0] * k[1] == 1 && groups == 1) continue;  // a 1x1 conv is pointwise
    const ints d = {pick(1, 2), pick(1, 2)};
    const ints p = {pick(0, k[0]), pick(0, k[1]), pick(0, k[0]), pick(0, k[1])};
    const Shape x = {n, c, pick(1, 30), pick(1, 80)};
    const Shape out = conv_output(x, m, k, {1, 1}, d, p);
    if (out[2] < 1 || out[3] < 1) continue;
    SCOPED_TRACE("trial " + std::to_string(trial));
    GraphBuilder b;
    b.seed = uint32_t(500 + trial);
    std::vector<ValueId> inputs = {b.input("x", x), b.constant({m, c / groups, k[0], k[1]})};
    if (trial % 2) inputs.push_back(b.constant({m}));
    ValueId v =
        b.op("Conv", inputs, attrs({{"group", groups}, {"dilations", d}, {"pads", p}, {"kernel_shape", k}}));
    Graph g = b.finish(add_conv_epilogue(b, v, trial % 6, m, out));
    // One input channel per group is depthwise.
    expect_direct(g, c == groups && groups > 1 ? "direct depthwise conv" : "direct conv (implicit GEMM)");
  }
}

// 7, 14 and 21 output channels fill 7-row blocks of the register tile (6-
// or 8-row ones would compute 24 rows for 21): wide rows (by bands, in
// place) and narrow ones (whole planes), with an epilogue.
TEST(DirectConv, DenseSevenRowBlocks) {
  for (const auto& [x, m] : {std::pair<Shape, int64_t>{{1, 21, 5, 64}, 21}, {{1, 3, 9, 37}, 14}, {{2, 4, 6, 80}, 7}}) {
    SCOPED_TRACE(shape_to_string(x) + " -> " + std::to_string(m));
    GraphBuilder b;
    ValueId v = b.op("Conv", {b.input("x", x), b.constant({m, x[1], 3, 3}), b.constant({m})},
                     attrs({{"pads", ints{1, 1, 1, 1}}}));
    const Shape out = {x[0], m, x[2], x[3]};
    Graph g = b.finish(add_conv_epilogue(b, v, 1, m, out));
    expect_direct(g, "direct conv (implicit GEMM)");
  }
}

TEST(DirectConv, ConvTransposeRandomShapes) {
  std::mt19937 rng(17);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t c = pick(1, 12), m = pick(6, 14), n = pick(1, 2);
    const ints k = {pick(1, 5), pick(1, 5)}, s = {pick(1, 3), pick(1, 3)}, d = {pick(1, 2), pick(1, 2)};
    const ints p = {pick(0, k[0] - 1), pick(0, k[1] - 1), pick(0, k[0] - 1), pick(0, k[1] - 1)};
    // output_padding up to the end pad (beyond it the linear spec has a
    // negative end pad, which oneDNN refuses: the group is not linear then).
    const ints op = {pick(0, std::min(std::max(s[0], d[0]) - 1, p[2])), pick(0, std::min(std::max(s[1], d[1]) - 1, p[3]))};
    const Shape x = {n, c, pick(1, 20), pick(1, 40)};
    Shape out = {n, m};
    for (size_t i = 0; i < 2; ++i) out.push_back((x[2 + i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 - p[i] - p[i + 2] + op[i]);
    if (out[2] < 1 || out[3] < 1) continue;
    SCOPED_TRACE("trial " + std::to_string(trial));
    GraphBuilder b;
    b.seed = uint32_t(700 + trial);
    std::vector<ValueId> inputs = {b.input("x", x), b.constant({c, m, k[0], k[1]})};
    if (trial % 2) inputs.push_back(b.constant({m}));
    ValueId v = b.op("ConvTranspose", inputs,
                     attrs({{"strides", s}, {"dilations", d}, {"pads", p}, {"output_padding", op}, {"kernel_shape", k}}));
    Graph g = b.finish(add_conv_epilogue(b, v, trial % 6, m, out));
    expect_direct(g, "direct deconv (phases)");
  }
  // U-Net's 2x2 stride-2 up-sampling: no padding (the input read in place), several channel blocks, rows
  // split into tasks, odd plane sizes; and a 3x3 stride-2 one with output_padding (odd output columns).
  for (const auto& [k, p, op] : {std::tuple<int64_t, int64_t, int64_t>{2, 0, 0}, {3, 1, 1}}) {
    GraphBuilder b;
    ValueId v = b.op("ConvTranspose", {b.input("x", {1, 40, 37, 45}), b.constant({40, 20, k, k}), b.constant({20})},
                     attrs({{"strides", ints{2, 2}}, {"pads", ints{p, p, p, p}}, {"output_padding", ints{op, op}},
                            {"kernel_shape", ints{k, k}}}));
    expect_direct(b.finish(b.op("Relu", {v})), "direct deconv (phases)");
  }
}

TEST(DirectConv, OtherConvsHaveNoDirectVariant) {
  GraphBuilder b;
  // A strided grouped conv, a strided dense one, and one whose sum is too long.
  ValueId v = b.op("Conv", {b.input("x", {1, 4, 8, 8}), b.constant({6, 2, 1, 1})},
                   attrs({{"group", int64_t(2)}, {"strides", ints{2, 2}}}));
  v = b.op("Conv", {v, b.constant({6, 6, 3, 3})}, attrs({{"strides", ints{2, 2}}}));
  v = b.op("Conv", {b.op("Concat", std::vector<ValueId>(40, v), attrs({{"axis", int64_t(1)}})), b.constant({4, 240, 3, 3})},
           attrs({{"pads", ints{1, 1, 1, 1}}}));
  Graph g = b.finish(v);
  for (size_t node = 0; node < g.nodes().size(); ++node) {
    if (g.nodes()[node].op != "Conv") continue;
    EXPECT_TRUE(cpu::linear_variants(g, make_group(g, {node})).empty()) << "node " << node;
  }
}

}  // namespace
}  // namespace orchid::runtime

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT

// Median seconds of kernel `k` over `runs` runs after a warm-up.
double median_seconds(Executable& e, const std::map<std::string, Tensor>& feeds, size_t k, int runs = 31) {
  e.run(feeds);
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    std::vector<double> kernel_seconds;
    e.run(feeds, &kernel_seconds);
    times.push_back(kernel_seconds.at(k));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Not a test: the default implementation (oneDNN; GEMM + col2im for
// ConvTranspose) against the direct kernels on the zoo's
// shapes, each one conv + bias + ReLU with NCHW input and output, 2 threads.
// Prints a Markdown row per shape: both times, the bound (input, weights and
// output once at the measured bandwidth, or the flops at the measured GEMM
// peak) and the share of it the faster implementation reaches.
// ORCHID_BENCH_ONLY=text runs the shapes whose names contain it.
// The conv's output is an intermediate (a ReduceMax reads it), so it lives
// in the executable's arena as in a model, not in a new tensor each run.
TEST(DirectConv, DISABLED_Benchmark) {
  set_num_threads(std::getenv("ORCHID_BENCH_THREADS") ? std::atoi(std::getenv("ORCHID_BENCH_THREADS")) : 2);
  struct Shape4 {
    std::string name;
    Shape x;
    int64_t m, k, stride, group;
  };
  const std::vector<Shape4> shapes = {
      {"dw3x3 s2 64x128x128", {1, 64, 128, 128}, 64, 3, 2, 64},
      {"dw3x3 s2 64x256x256", {1, 64, 256, 256}, 64, 3, 2, 64},
      {"dw3x3 s1 128x128x128", {1, 128, 128, 128}, 128, 3, 1, 128},
      {"dw3x3 s1 96x56x56", {1, 96, 56, 56}, 96, 3, 1, 96},
      {"dw5x5 s1 256x32x32", {1, 256, 32, 32}, 256, 5, 1, 256},
      {"dw3x3 s1 512x16x16", {1, 512, 16, 16}, 512, 3, 1, 512},
      {"dw3x3 s1 1024x8x8", {1, 1024, 8, 8}, 1024, 3, 1, 1024},
      {"pw 128->32 64x64", {1, 128, 64, 64}, 32, 1, 1, 1},
      {"pw 16->64 256x256", {1, 16, 256, 256}, 64, 1, 1, 1},
      {"pw 56->12 128x128", {1, 56, 128, 128}, 12, 1, 1, 1},
      {"pw 16->96 128x128", {1, 16, 128, 128}, 96, 1, 1, 1},
      {"pw 64->256 56x56", {1, 64, 56, 56}, 256, 1, 1, 1},
      {"pw 256->256 32x32", {1, 256, 32, 32}, 256, 1, 1, 1},
      {"pw 1024->256 128x128", {1, 1024, 128, 128}, 256, 1, 1, 1},
      {"pw 512->1024 16x16", {1, 512, 16, 16}, 1024, 1, 1, 1},
      {"3x3 12->12 256x256", {1, 12, 256, 256}, 12, 3, 1, 1},
      {"3x3 32->32 128x128", {1, 32, 128, 128}, 32, 3, 1, 1},
      {"3x3 64->64 56x56", {1, 64, 56, 56}, 64, 3, 1, 1},
      {"5x5 1->56 256x256", {1, 1, 256, 256}, 56, 5, 1, 1},
      {"3x3 128->128 28x28", {1, 128, 28, 28}, 128, 3, 1, 1},
      {"3x3 g8 64->64 56x56", {1, 64, 56, 56}, 64, 3, 1, 8},
      {"3x3 g10 160->160 28x28", {1, 160, 28, 28}, 160, 3, 1, 10},
      {"deconv k4 s2 21->21 256x256", {1, 21, 256, 256}, 21, 4, -2, 1},
      {"deconv k4 s2 128->64 16x16", {1, 128, 16, 16}, 64, 4, -2, 1},
      {"deconv k4 s2 64->3 32x32", {1, 64, 32, 32}, 3, 4, -2, 1},
      {"deconv k9 s3 56->1 256x256", {1, 56, 256, 256}, 1, 9, -3, 1},
      {"deconv k2 s2 32->16 128x128", {1, 32, 128, 128}, 16, 2, -2, 1},
      {"deconv k2 s2 64->32 64x64", {1, 64, 64, 64}, 32, 2, -2, 1},
      {"deconv k2 s2 256->128 16x16", {1, 256, 16, 16}, 128, 2, -2, 1},
      {"3x3 32->16 256x256", {1, 32, 256, 256}, 16, 3, 1, 1},
      {"3x3 16->16 256x256", {1, 16, 256, 256}, 16, 3, 1, 1},
  };
  const cost::MachinePeaks peaks = cost::measure_peaks(num_threads());
  std::printf("[bench] peaks: %.0f GFLOP/s, %.1f GB/s\n", peaks.flops_per_second * 1e-9, peaks.bytes_per_second * 1e-9);
  const char* only = std::getenv("ORCHID_BENCH_ONLY");  // a substring of the names to run
  // With ORCHID_BENCH_INTERMEDIATE a Relu makes x an intermediate: the conv is node 1.
  const size_t first = std::getenv("ORCHID_BENCH_INTERMEDIATE") ? 1 : 0;
  for (const Shape4& s : shapes) {
    if (only && s.name.find(only) == std::string::npos) continue;
    GraphBuilder b;
    const bool transpose = s.stride < 0;  // a ConvTranspose of stride -s.stride
    const int64_t stride = transpose ? -s.stride : s.stride;
    const int64_t pad = transpose ? (s.k - stride + 1) / 2 : s.k / 2;
    const ValueId x = first ? b.op("Relu", {b.input("x", s.x)}) : b.input("x", s.x);
    const Shape w = transpose ? Shape{s.x[1], s.m, s.k, s.k} : Shape{s.m, s.x[1] / s.group, s.k, s.k};
    ValueId v = b.op(transpose ? "ConvTranspose" : "Conv", {x, b.constant(w), b.constant({s.m})},
                     attrs({{"group", s.group}, {"strides", ints{stride, stride}}, {"pads", ints{pad, pad, pad, pad}}}));
    const ValueId conv = b.op("Relu", {v});
    Graph g = b.finish(b.op("ReduceMax", {conv}, attrs({{"keepdims", int64_t(0)}})));
    const std::map<std::string, Tensor> feeds = uniform_feeds(g, 1);
    std::vector<double> ms;
    const bool has_direct = !cpu::linear_variants(g, make_group(g, {first, first + 1})).empty();
    for (const char* variant : {"", cpu::kDirectVariant}) {
      if (!has_direct && *variant) {
        ms.push_back(ms[0]);  // no direct kernel for this shape
        continue;
      }
      Program program;
      program.graph = g;
      if (first) program.kernels.push_back(make_group(g, {0}));
      program.kernels.push_back(make_group(g, {first, first + 1}));
      program.kernels.back().variant = variant;
      program.kernels.push_back(make_group(g, {first + 2}));
      Executable e(std::move(program));
      ms.push_back(median_seconds(e, feeds, first) * 1e3);
    }
    const TensorType& out = g.type(conv);
    const double bytes = 4.0 * double(g.type(g.inputs()[0]).numel() + out.numel() + s.m * s.x[1] / s.group * s.k * s.k);
    const double taps = transpose ? double(s.k * s.k) / double(stride * stride) : double(s.k * s.k);
    const double flops = 2.0 * double(out.numel()) * double(s.x[1] / s.group) * taps;
    const double bound = std::max(bytes / peaks.bytes_per_second, flops / peaks.flops_per_second) * 1e3;
    const double best = std::min(ms[0], ms[1]);
    char direct[32] = "-";
    if (has_direct) std::snprintf(direct, sizeof direct, "%.3f", ms[1]);
    std::printf("[bench] | %s | %.3f | %s | %.3f | %s | %.0f%% |\n", s.name.c_str(), ms[0], direct, bound,
                bytes / peaks.bytes_per_second > flops / peaks.flops_per_second ? "bytes" : "flops", bound / best * 100);
  }
}

}  // namespace
}  // namespace orchid::runtime
