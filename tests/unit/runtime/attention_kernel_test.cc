// The attention kernel (attention_kernel.h) against the reference
// interpreter: random batch dims, query and key lengths and head sizes
// (sizes off the vector width and the 32-row blocks), each scale form (none,
// Mul either side, Div) and each mask (none, Where either branch order with a
// causal or random condition, an additive mask), and which node sets
// find_attention refuses.
#include "runtime/kernels/cpu/attention_kernel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <random>

#include "runtime/kernels/cpu/registry.h"
#include "runtime_test_util.h"

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT

struct AttentionForm {
  Shape batch;  // the leading dims
  int64_t lq = 1, lk = 1, d = 1, dv = 1;
  int scale = 0;  // 0 none, 1 Mul(s, c), 2 Mul(c, s), 3 Div(s, c)
  int mask = 0;   // 0 none, 1 Where(cond, fill, s), 2 Where(cond, s, fill), 3 Add(s, mask)
  bool causal = false;
};

Shape with_batch(const Shape& batch, std::initializer_list<int64_t> last) {
  Shape s = batch;
  s.insert(s.end(), last);
  return s;
}

// q K^T, the scale, the mask, fission's softmax over the last axis, times v.
Graph attention_graph(const AttentionForm& f, uint32_t seed) {
  GraphBuilder b;
  b.seed = seed;
  const ValueId q = b.input("q", with_batch(f.batch, {f.lq, f.d}));
  const ValueId kt = b.input("kt", with_batch(f.batch, {f.d, f.lk}));
  const ValueId v = b.input("v", with_batch(f.batch, {f.lk, f.dv}));
  ValueId s = b.op("MatMul", {q, kt});
  const float c = 0.125f + 0.5f * float(seed % 3);
  if (f.scale == 1) s = b.op("Mul", {s, b.scalar(c)});
  if (f.scale == 2) s = b.op("Mul", {b.scalar(c, {1}), s});
  if (f.scale == 3) s = b.op("Div", {s, b.scalar(c)});
  if (f.mask == 1 || f.mask == 2) {
    std::mt19937 rng(seed);
    std::vector<float> cond(size_t(f.lq * f.lk));
    for (int64_t i = 0; i < f.lq; ++i) {
      for (int64_t j = 0; j < f.lk; ++j) {
        // Filled: above the diagonal, or at random; key 0 always visible.
        const bool filled = j > 0 && (f.causal ? j > i : rng() % 4 == 0);
        // Where fills where the condition holds (mask 1) or where it does not (mask 2).
        cond[size_t(i * f.lk + j)] = float(f.mask == 1 ? filled : !filled);
      }
    }
    const ValueId condition = b.g.add_constant("cond", Tensor::from_vector(DType::Bool, {f.lq, f.lk}, cond));
    const ValueId fill = b.scalar(f.causal ? -std::numeric_limits<float>::infinity() : -1e4f);
    s = f.mask == 1 ? b.op("Where", {condition, fill, s}) : b.op("Where", {condition, s, fill});
  }
  if (f.mask == 3) s = b.op("Add", {s, b.constant(f.batch.empty() ? Shape{f.lq, f.lk} : Shape{1, f.lq, f.lk}, -3, 0)});
  Attributes keep;
  keep.set("keepdims", int64_t(1));
  const ValueId axes = b.g.add_constant("axes", Tensor::vector_i64({-1}));
  const ValueId e = b.op("Exp", {b.op("Sub", {s, b.op("ReduceMax", {s, axes}, keep)})});
  const ValueId p = b.op("Div", {e, b.op("ReduceSum", {e, axes}, keep)});
  return b.finish(b.op("MatMul", {p, v}));
}

std::vector<size_t> all_nodes(const Graph& graph) {
  std::vector<size_t> all(graph.nodes().size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

TEST(AttentionKernel, RandomShapesScalesAndMasks) {
  std::mt19937 rng(23);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 40; ++trial) {
    AttentionForm f;
    for (int64_t i = 0, n = pick(0, 2); i < n; ++i) f.batch.push_back(pick(1, 3));
    f.lq = pick(1, 70), f.lk = pick(1, 70), f.d = pick(1, 40), f.dv = pick(1, 40);
    f.scale = trial % 4, f.mask = (trial / 4) % 4, f.causal = trial % 3 == 0;
    if (f.causal) f.lk = f.lq;
    SCOPED_TRACE("trial " + std::to_string(trial));
    const Graph g = attention_graph(f, uint32_t(100 + trial));
    ASSERT_EQ(cpu::find_attention(g, 0), std::optional<std::vector<size_t>>(all_nodes(g)));
    for (int run = 0; run < 2; ++run) {
      const std::vector<std::string> impl = expect_runtime_matches(g, uniform_feeds(g, 5 + run, -2, 2), {all_nodes(g)});
      EXPECT_EQ(impl, std::vector<std::string>{"attention (scores in cache)"});
    }
  }
}

TEST(AttentionKernel, FindRefusesOtherForms) {
  AttentionForm f{{2}, 5, 6, 4, 3};
  {  // The scores are a graph output too.
    Graph g = attention_graph(f, 1);
    g.outputs().push_back(g.nodes()[0].outputs[0]);
    EXPECT_FALSE(cpu::find_attention(g, 0));
  }
  {  // The softmax over another axis.
    Graph g = attention_graph(f, 1);
    for (Node& node : g.nodes()) {
      if (node.op == "ReduceMax") node.inputs[1] = g.add_constant("axis0", Tensor::vector_i64({0}));
    }
    EXPECT_FALSE(cpu::find_attention(g, 0));
  }
  {  // The second product reads the probabilities as its right operand.
    Graph g = attention_graph(f, 1);
    Node& last = g.nodes().back();
    std::swap(last.inputs[0], last.inputs[1]);
    EXPECT_FALSE(cpu::find_attention(g, 0));
  }
  {  // A group that is not the whole attention gets no attention kernel.
    Graph g = attention_graph(f, 1);
    std::vector<size_t> some = all_nodes(g);
    some.pop_back();
    EXPECT_EQ(cpu::make_attention_kernel(g, make_group(g, some)), nullptr);
  }
}

// GPT-sized (8 heads, 256 x 256, head 64, causal): the kernel against the
// separate kernels (one per node), median of 31 runs. Prints, asserts only
// that both ran.
TEST(AttentionKernel, DISABLED_Benchmark) {
  for (const AttentionForm& f : {AttentionForm{{1, 8}, 256, 256, 64, 64, 1, 1, true},
                                 AttentionForm{{1, 12}, 128, 128, 64, 64, 1, 0, false},
                                 AttentionForm{{1, 6}, 197, 197, 64, 64, 1, 0, false},
                                 AttentionForm{{1, 1}, 16384, 256, 32, 32, 1, 0, false}}) {
    const Graph g = attention_graph(f, 3);
    const std::map<std::string, Tensor> feeds = uniform_feeds(g, 1, -2, 2);
    std::vector<double> ms;
    for (bool fused : {false, true}) {
      Program program;
      program.graph = g;
      if (fused) {
        program.kernels.push_back(make_group(g, all_nodes(g)));
      } else {
        for (size_t i = 0; i < g.nodes().size(); ++i) program.kernels.push_back(make_group(g, {i}));
      }
      Executable executable(std::move(program));
      std::vector<double> t;
      for (int run = 0; run < 34; ++run) {
        const auto start = std::chrono::steady_clock::now();
        executable.run(feeds);
        if (run >= 3) t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      }
      std::sort(t.begin(), t.end());
      ms.push_back(t[t.size() / 2]);
    }
    std::printf("[bench] | attention %lld heads x %lldx%lld, head %lld%s | %.3f | %.3f |\n", (long long)f.batch.back(),
                (long long)f.lq, (long long)f.lk, (long long)f.d, f.causal ? ", causal" : "", ms[0], ms[1]);
    EXPECT_EQ(ms.size(), 2u);
  }
}

}  // namespace
}  // namespace orchid::runtime
