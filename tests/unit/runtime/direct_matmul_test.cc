// The direct kernel of few-row matrix products (direct_matmul.cc) against the
// reference interpreter: random row counts (1 to 16, every row tile), depths
// and widths off the vector width and the 64-column panel, X of rank 2 or 3
// (leading dimensions folded into rows), and each kind of epilogue; and the
// groups it must leave to oneDNN.
#include "runtime/kernels/cpu/direct_matmul.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "runtime/kernels/cpu/direct_conv.h"
#include "runtime/kernels/cpu/registry.h"
#include "cost/machine.h"
#include "direct_test_util.h"
#include "support/parallel.h"

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT

// Epilogues after the product `v` of shape `out` (n columns).
ValueId add_epilogue(GraphBuilder& b, ValueId v, int kind, int64_t n, const Shape& out) {
  switch (kind) {
    case 1:  // bias + ReLU
      return b.op("Relu", {b.op("Add", {v, b.constant({n})})});
    case 2:  // a recurrent step's input projection added, then a sigmoid
      return b.op("Sigmoid", {b.op("Add", {b.input("xw", out), v})});
    case 3:  // a per-column scale after tanh (a binary post-op of constants), then a clip
      return b.op("Max", {b.op("Mul", {b.op("Tanh", {v}), b.constant({1, n})}), b.scalar(-0.5f)});
    default:
      return v;
  }
}

TEST(DirectMatMul, RandomShapes) {
  std::mt19937 rng(21);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t m = pick(1, cpu::kDirectMatMulMaxRows), k = pick(1, 300), n = pick(1, 200);
    // Rank 3: [L, 1, K] as PyTorch's MultiheadAttention projects (L rows).
    const Shape x = trial % 3 == 2 ? Shape{m, 1, k} : Shape{m, k};
    const Shape out = trial % 3 == 2 ? Shape{m, 1, n} : Shape{m, n};
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(m) + "x" + std::to_string(k) + " by " +
                 std::to_string(k) + "x" + std::to_string(n));
    GraphBuilder b;
    b.seed = uint32_t(500 + trial);
    ValueId v = b.op("MatMul", {b.input("x", x), b.constant({k, n})});
    expect_direct(b.finish(add_epilogue(b, v, trial % 4, n, out)), "direct matmul (few rows)");
  }
}

// Several threads' panels (1 MB of B: the recurrent weights of an LSTM of hidden 256).
TEST(DirectMatMul, ManyPanelsOnEveryThread) {
  const int threads = num_threads();
  for (int t : {1, 2, 3}) {
    set_num_threads(t);
    GraphBuilder b;
    ValueId v = b.op("MatMul", {b.input("h", {1, 256}), b.constant({256, 1024}, -0.1, 0.1)});
    expect_direct(b.finish(add_epilogue(b, v, 2, 1024, {1, 1024})), "direct matmul (few rows)");
  }
  set_num_threads(threads);
}

// Batched products by a transposed runtime operand (q k^T; Longformer's
// banded keys), the Transpose the group's prologue: random batch shapes
// (rank 3 to 5), 1 to 16 rows, depths off the vector width, epilogues.
TEST(DirectMatMul, DotRowsOfATransposedOperand) {
  std::mt19937 rng(33);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 30; ++trial) {
    const int64_t m = pick(1, cpu::kDirectMatMulMaxRows), k = pick(1, 150), n = pick(1, 140);
    Shape batch = {pick(1, 3)};
    for (int extra = trial % 3; extra > 0; --extra) batch.push_back(pick(1, 4));
    Shape x = batch, y = batch, out = batch;
    x.insert(x.end(), {m, k});
    y.insert(y.end(), {n, k});
    out.insert(out.end(), {m, n});
    std::vector<int64_t> perm;
    for (size_t i = 0; i < y.size(); ++i) perm.push_back(int64_t(i));
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    SCOPED_TRACE("trial " + std::to_string(trial));
    GraphBuilder b;
    b.seed = uint32_t(900 + trial);
    ValueId t = b.op("Transpose", {b.input("y", y)}, attrs({{"perm", perm}}));
    ValueId v = b.op("MatMul", {b.input("x", x), t});
    expect_direct(b.finish(add_epilogue(b, v, trial % 4, n, out)), "direct matmul (dot rows)");
  }
}

TEST(DirectMatMul, OtherProductsHaveNoDirectVariant) {
  auto variants = [](Graph g) { return cpu::linear_variants(g, make_group(g, {0})); };
  {  // 17 rows
    GraphBuilder b;
    EXPECT_TRUE(variants(b.finish(b.op("MatMul", {b.input("x", {17, 32}), b.constant({32, 8})}))).empty());
  }
  {  // B not constant
    GraphBuilder b;
    EXPECT_TRUE(variants(b.finish(b.op("MatMul", {b.input("x", {2, 32}), b.input("y", {32, 8})}))).empty());
  }
  {  // B with a batch
    GraphBuilder b;
    EXPECT_TRUE(variants(b.finish(b.op("MatMul", {b.input("x", {2, 1, 4}), b.constant({2, 4, 8})}))).empty());
  }
  {  // the first operand broadcast over the transposed one's batch
    GraphBuilder b;
    ValueId t = b.op("Transpose", {b.input("y", {3, 8, 4})}, attrs({{"perm", std::vector<int64_t>{0, 2, 1}}}));
    Graph g = b.finish(b.op("MatMul", {b.input("x", {1, 2, 4}), t}));
    EXPECT_TRUE(cpu::linear_variants(g, make_group(g, {0, 1})).empty());
  }
  {  // a Transpose that moves batch axes: T's rows are not [batch..., n, k]
    GraphBuilder b;
    ValueId t = b.op("Transpose", {b.input("y", {2, 3, 8, 4})}, attrs({{"perm", std::vector<int64_t>{1, 0, 3, 2}}}));
    Graph g = b.finish(b.op("MatMul", {b.input("x", {3, 2, 2, 4}), t}));
    EXPECT_TRUE(cpu::linear_variants(g, make_group(g, {0, 1})).empty());
  }
  {  // B a vector (no output channel)
    GraphBuilder b;
    EXPECT_TRUE(variants(b.finish(b.op("MatMul", {b.input("x", {2, 4}), b.constant({4})}))).empty());
  }
}

}  // namespace
}  // namespace orchid::runtime

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT

// Not a test: oneDNN's matmul against the direct kernel on the zoo's
// few-row shapes (an LSTM step's h R^T, a batch-1 decoder's projections),
// each MatMul + Add of a runtime tensor (the recurrent step's input
// projection) between a Relu that writes X and a ReduceMax that reads Y, so
// both live in the arena as in a model. ORCHID_BENCH_THREADS (default 2).
// Prints a Markdown row per shape: both times (median of 201 runs), the
// bound (B's bytes at the measured bandwidth) and the faster one's share.
TEST(DirectMatMul, DISABLED_Benchmark) {
  set_num_threads(std::getenv("ORCHID_BENCH_THREADS") ? std::atoi(std::getenv("ORCHID_BENCH_THREADS")) : 2);
  struct Case {
    std::string name;
    int64_t m, k, n;
  };
  const std::vector<Case> cases = {
      {"LSTM step h R^T, hidden 256", 1, 256, 1024}, {"LSTM step, hidden 128", 1, 128, 512},
      {"GRU step, hidden 512", 1, 512, 1536},        {"4 rows, 512 -> 2048", 4, 512, 2048},
      {"16 rows, 768 -> 768", 16, 768, 768},          {"LM head row, 512 -> 8192", 1, 512, 8192},
  };
  const cost::MachinePeaks peaks = cost::measure_peaks(num_threads());
  std::printf("[bench] %d threads; peaks: %.0f GFLOP/s, %.1f GB/s\n", num_threads(), peaks.flops_per_second * 1e-9,
              peaks.bytes_per_second * 1e-9);
  for (const Case& c : cases) {
    GraphBuilder b;
    const ValueId x = b.op("Relu", {b.input("x", {c.m, c.k})});
    const ValueId y = b.op("Add", {b.op("MatMul", {x, b.constant({c.k, c.n}, -0.1, 0.1)}), b.input("xw", {c.m, c.n})});
    Graph g = b.finish(b.op("ReduceMax", {y}, attrs({{"keepdims", int64_t(0)}})));
    const std::map<std::string, Tensor> feeds = uniform_feeds(g, 1);
    std::vector<double> ms;
    for (const char* variant : {"", cpu::kDirectVariant}) {
      Program program;
      program.graph = g;
      program.kernels = {make_group(g, {0}), make_group(g, {1, 2}), make_group(g, {3})};
      program.kernels[1].variant = variant;
      Executable e(std::move(program));
      e.run(feeds);
      std::vector<double> times;
      for (int i = 0; i < 201; ++i) {
        std::vector<double> kernel_seconds;
        e.run(feeds, &kernel_seconds);
        times.push_back(kernel_seconds.at(1));
      }
      std::sort(times.begin(), times.end());
      ms.push_back(times[times.size() / 2] * 1e3);
    }
    const double bytes = 4.0 * double(c.k * c.n + 2 * c.m * c.n + c.m * c.k);
    const double flops = 2.0 * double(c.m * c.k * c.n);
    const double bound = std::max(bytes / peaks.bytes_per_second, flops / peaks.flops_per_second) * 1e3;
    std::printf("[bench] | %s | %lldx%lld by %lldx%lld | %.4f | %.4f | %.4f | %.0f%% |\n", c.name.c_str(),
                (long long)c.m, (long long)c.k, (long long)c.k, (long long)c.n, ms[0], ms[1], bound,
                100.0 * bound / std::min(ms[0], ms[1]));
  }
}

}  // namespace
}  // namespace orchid::runtime
