// G2BMM and GBMM (ai.orchid): the reference operators against naive loops,
// their user errors, the CPU kernel against the reference on 1 and 2
// threads, and whole graphs through orchid::compile (with and without
// fusion) and an artifact round trip, against the interpreter.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "ir/graph_json.h"
#include "ir/graph_verifier.h"
#include "pipeline.h"
#include "reference/ops/banded.h"
#include "reference/verify_types.h"
#include "runtime/artifact.h"
#include "runtime/kernels/cpu/banded_kernel.h"
#include "runtime_test_util.h"
#include "support/parallel.h"
#include "../test_temp_dir.h"

namespace orchid::runtime {
namespace {

using namespace orchid::runtime::testing;
namespace fs = std::filesystem;

struct Case {
  Shape a, b;
  int64_t width, dilation;
};

Node banded_node(const std::string& op, int64_t width, int64_t dilation) {
  Node node;
  node.op = op;
  node.domain = "ai.orchid";
  node.attrs.set("width", width);
  node.attrs.set("dilation", dilation);
  return node;
}

// Adds a banded node to `b`'s graph; the output type from the reference inference.
ValueId add_banded(GraphBuilder& b, const std::string& op, ValueId x, ValueId y, int64_t width, int64_t dilation) {
  Node node = banded_node(op, width, dilation);
  node.name = op + std::to_string(b.g.nodes().size());
  node.inputs = {x, y};
  const TensorType out = reference::infer_node(node, {&b.g.type(x), &b.g.type(y)}, {nullptr, nullptr}).at(0);
  node.outputs = {b.g.add_value(node.name + "_out", out)};
  const ValueId id = node.outputs[0];
  b.g.add_node(std::move(node));
  return id;
}

// The definition, as plainly as it can be written, in double.
std::vector<double> naive(const std::string& op, const Case& c, const Tensor& a, const Tensor& b) {
  const std::vector<double> av = a.to_f64_vector(), bv = b.to_f64_vector();
  const int64_t bt = c.a[0], m = c.a[1], n = c.b[1], k = c.b[2], band = 2 * c.width + 1;
  const int64_t cols = op == "G2BMM" ? band : k;
  std::vector<double> out(size_t(bt * m * cols), 0.0);
  for (int64_t i = 0; i < bt; ++i) {
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t w = 0; w < band; ++w) {
        const int64_t row = r + c.dilation * (w - c.width);
        if (row < 0 || row >= n) continue;
        for (int64_t j = 0; j < k; ++j) {
          const double bval = bv[size_t((i * n + row) * k + j)];
          if (op == "G2BMM") {
            out[size_t((i * m + r) * band + w)] += av[size_t((i * m + r) * k + j)] * bval;
          } else {
            out[size_t((i * m + r) * k + j)] += av[size_t((i * m + r) * band + w)] * bval;
          }
        }
      }
    }
  }
  return out;
}

Shape a_shape(const std::string& op, const Case& c) {
  return op == "G2BMM" ? c.a : Shape{c.a[0], c.a[1], 2 * c.width + 1};
}

// Shapes with W = 0, dilation 2 and 3, N != M both ways, bands wider than
// N (windows off both ends), and sizes around the kernel's vector widths.
std::vector<Case> cases() {
  return {{{2, 7, 5}, {2, 7, 5}, 2, 1},   {{1, 6, 3}, {1, 6, 3}, 0, 1},    {{2, 9, 4}, {2, 9, 4}, 2, 2},
          {{1, 5, 3}, {1, 8, 3}, 3, 1},   {{3, 8, 2}, {3, 4, 2}, 2, 3},    {{1, 4, 6}, {1, 4, 6}, 6, 1},
          {{2, 40, 17}, {2, 37, 17}, 9, 2}, {{1, 70, 33}, {1, 70, 33}, 40, 1}, {{2, 33, 130}, {2, 33, 130}, 8, 1},
          {{1, 3, 4}, {1, 3, 4}, 5, 7},   {{1, 80, 32}, {1, 75, 32}, 20, 2},
          // Blocks of 16 rows whose taps all lie inside B (one GEMM each in
          // G2BMM's kernel), with and without dilation, between edge rows.
          {{2, 100, 24}, {2, 100, 24}, 5, 1}, {{1, 150, 20}, {1, 150, 20}, 4, 2}};
}

TEST(BandedReference, MatchesNaiveLoops) {
  for (const std::string op : {"G2BMM", "GBMM"}) {
    for (const Case& c : cases()) {
      SCOPED_TRACE(op + " " + shape_to_string(c.a) + " " + shape_to_string(c.b) + " W=" + std::to_string(c.width) +
                   " d=" + std::to_string(c.dilation));
      const Tensor a = random_tensor(DType::Float32, a_shape(op, c), 1);
      const Tensor b = random_tensor(DType::Float32, c.b, 2);
      Node node = banded_node(op, c.width, c.dilation);
      const Tensor got = reference::evaluate_node(node, {&a, &b}).at(0);
      const std::vector<double> want = naive(op, c, a, b);
      EXPECT_EQ(got.shape(), (Shape{c.a[0], c.a[1], op == "G2BMM" ? 2 * c.width + 1 : c.b[2]}));
      const std::vector<double> g = got.to_f64_vector();
      ASSERT_EQ(g.size(), want.size());
      for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], want[i], 1e-5 * std::max(1.0, std::abs(want[i]))) << i;
    }
  }
}

TEST(BandedReference, DilationDefaultsToOne) {
  Node node = banded_node("G2BMM", 1, 1);
  Node no_dilation = node;
  no_dilation.attrs = Attributes();
  no_dilation.attrs.set("width", int64_t(1));
  const Tensor a = random_tensor(DType::Float32, {1, 4, 3}, 3), b = random_tensor(DType::Float32, {1, 4, 3}, 4);
  EXPECT_EQ(reference::evaluate_node(node, {&a, &b}).at(0).to_f64_vector(),
            reference::evaluate_node(no_dilation, {&a, &b}).at(0).to_f64_vector());
}

// Shape and attribute errors are orchid::Error naming the node.
TEST(BandedReference, UserErrorsNameTheNode) {
  struct Bad {
    std::string op;
    Shape a, b;
    int64_t width, dilation;
    std::string reason;
  };
  for (const Bad& bad : std::vector<Bad>{{"G2BMM", {2, 4, 3}, {2, 4, 5}, 1, 1, "row lengths"},
                                         {"G2BMM", {2, 4, 3}, {3, 4, 3}, 1, 1, "batch"},
                                         {"G2BMM", {4, 3}, {4, 3}, 1, 1, "rank 3"},
                                         {"GBMM", {2, 4, 4}, {2, 4, 5}, 1, 1, "2 * width + 1"},
                                         {"G2BMM", {2, 4, 3}, {2, 4, 3}, -1, 1, "width"},
                                         {"GBMM", {2, 4, 3}, {2, 4, 5}, 1, 0, "dilation"}}) {
    Node node = banded_node(bad.op, bad.width, bad.dilation);
    node.name = "band";
    const TensorType ta{DType::Float32, bad.a}, tb{DType::Float32, bad.b};
    try {
      reference::infer_node(node, {&ta, &tb}, {nullptr, nullptr});
      ADD_FAILURE() << "expected orchid::Error: " << bad.reason;
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("node 'band' (ai.orchid." + bad.op + ")"), std::string::npos) << what;
      EXPECT_NE(what.find(bad.reason), std::string::npos) << what;
    }
  }
  Node node = banded_node("G2BMM", 1, 1);
  node.attrs = Attributes();
  const TensorType t{DType::Float32, {1, 4, 3}}, i{DType::Int64, {1, 4, 3}};
  EXPECT_THROW(reference::infer_node(node, {&t, &t}, {nullptr, nullptr}), Error);  // no width
  EXPECT_THROW(reference::infer_node(banded_node("G2BMM", 1, 1), {&i, &i}, {nullptr, nullptr}), Error);
}

class ThreadCount {
 public:
  explicit ThreadCount(int n) : before_(num_threads()) { set_num_threads(n); }
  ~ThreadCount() { set_num_threads(before_); }

 private:
  int before_;
};

TEST(BandedKernel, MatchesTheReferenceOnOneAndTwoThreads) {
  for (int threads : {1, 2}) {
    ThreadCount count(threads);
    for (const std::string op : {"G2BMM", "GBMM"}) {
      for (const Case& c : cases()) {
        SCOPED_TRACE(op + " threads " + std::to_string(threads) + " " + shape_to_string(c.a) + " " +
                     shape_to_string(c.b) + " W=" + std::to_string(c.width) + " d=" + std::to_string(c.dilation));
        GraphBuilder b;
        const ValueId x = b.input("a", a_shape(op, c)), y = b.input("b", c.b);
        const Graph g = b.finish(add_banded(b, op, x, y, c.width, c.dilation));
        const std::vector<std::string> kinds = expect_runtime_matches(g, 5);
        EXPECT_EQ(kinds, std::vector<std::string>{op == "G2BMM" ? "banded g2bmm" : "banded gbmm"});
      }
    }
  }
}

TEST(BandedKernel, ReadsOneValueAsBothOperands) {
  GraphBuilder b;
  const ValueId x = b.input("x", {2, 19, 21});
  const Graph g = b.finish(add_banded(b, "G2BMM", x, x, 4, 1));
  EXPECT_EQ(expect_runtime_matches(g, 6), std::vector<std::string>{"banded g2bmm"});
}

TEST(BandedKernel, OtherDtypesRunOnTheReferenceKernel) {
  Graph g;
  Node node = banded_node("GBMM", 1, 1);
  node.name = "gbmm";
  node.inputs = {g.add_value("a", {DType::Float64, {1, 5, 3}}), g.add_value("b", {DType::Float64, {1, 5, 2}})};
  g.inputs() = node.inputs;
  node.outputs = {g.add_value("c", {DType::Float64, {1, 5, 2}})};
  g.outputs() = node.outputs;
  g.add_node(std::move(node));
  EXPECT_EQ(expect_runtime_matches(g, 7), std::vector<std::string>{"reference"});
}

// Longformer-style attention: scores = G2BMM(Q, K), softmax over the band,
// out = GBMM(probs, V), with elementwise neighbours that must not be fused
// into the banded kernels.
Graph attention_graph() {
  GraphBuilder b;
  const ValueId q = b.input("q", {2, 24, 8}), k = b.input("k", {2, 24, 8}), v = b.input("v", {2, 24, 6});
  const ValueId scaled = b.op("Mul", {q, b.scalar(0.5f)});
  const ValueId scores = add_banded(b, "G2BMM", scaled, k, 3, 2);
  Attributes axis;
  axis.set("axis", int64_t(-1));
  const ValueId probs = b.op("Softmax", {b.op("Relu", {scores})}, axis);
  const ValueId out = add_banded(b, "GBMM", probs, v, 3, 2);
  return b.finish(b.op("Tanh", {out}));
}

std::string test_cache_dir() { return orchid::testing::process_temp_dir("orchid-banded-test").string(); }

PipelineOptions compile_options(bool fusion) {
  PipelineOptions options;
  options.fusion = fusion;
  options.orchestration.profile = false;
  options.orchestration.cache_dir = test_cache_dir();
  return options;
}

size_t count_kernels(const std::vector<std::string>& kinds, const std::string& kind) {
  return size_t(std::count(kinds.begin(), kinds.end(), kind));
}

TEST(BandedPipeline, CompilesWithAndWithoutFusion) {
  const Graph g = attention_graph();
  verify_graph(g);
  reference::verify_types(g);
  for (bool fusion : {false, true}) {
    SCOPED_TRACE(fusion ? "fusion" : "no fusion");
    Program program = compile(g, compile_options(fusion));
    for (const KernelGroup& group : program.kernels) {
      const bool banded = std::any_of(group.nodes.begin(), group.nodes.end(), [&](size_t n) {
        return reference::is_banded_op(program.graph.nodes()[n]);
      });
      if (banded) {
        EXPECT_EQ(group.nodes.size(), 1u) << group.name;  // never fused with neighbours
      }
    }
    const std::vector<std::string> kinds = expect_program_matches(g, std::move(program), uniform_feeds(g, 8));
    EXPECT_EQ(count_kernels(kinds, "banded g2bmm"), 1u);
    EXPECT_EQ(count_kernels(kinds, "banded gbmm"), 1u);
  }
}

TEST(BandedPipeline, ArtifactRoundTripKeepsTheDomain) {
  const Graph g = attention_graph();
  const fs::path dir = fs::path(test_cache_dir()) / "artifact";
  ArtifactInfo info;
  info.source_model = "attention.onnx";
  save_artifact(compile(g, compile_options(true)), info, dir.string());
  Program loaded = load_artifact(dir.string());
  size_t banded = 0;
  for (const Node& node : loaded.graph.nodes()) banded += reference::is_banded_op(node);
  EXPECT_EQ(banded, 2u);
  const std::vector<std::string> kinds = expect_program_matches(g, std::move(loaded), uniform_feeds(g, 9));
  EXPECT_EQ(count_kernels(kinds, "banded g2bmm"), 1u);
  EXPECT_EQ(count_kernels(kinds, "banded gbmm"), 1u);
  fs::remove_all(dir);
}

// Micro benchmark, not part of the default run (--gtest_also_run_disabled_tests):
// the kernels against the reference operator, Bt=8, M=N=1024, K=64, W=64.
TEST(BandedKernel, DISABLED_Timing) {
  const reference::BandedDims d{true, 8, 1024, 1024, 64, 64, 1};
  const Tensor a = random_tensor(DType::Float32, {8, 1024, 64}, 1), b = random_tensor(DType::Float32, {8, 1024, 64}, 2);
  const Tensor p = random_tensor(DType::Float32, {8, 1024, 129}, 3);
  std::vector<float> c(8 * 1024 * 129), scratch;
  std::vector<float> c2(8 * 1024 * 64);
  auto best = [](auto&& f, int reps) {
    double best = 1e9;
    for (int r = 0; r < reps; ++r) {
      const auto start = std::chrono::steady_clock::now();
      f();
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best * 1e3;
  };
  const double flops = 2.0 * 8 * 1024 * 129 * 64;
  for (int threads : {1, 2}) {
    ThreadCount count(threads);
    const double g2 = best([&] { cpu::g2bmm_f32(d, a.data<float>(), b.data<float>(), c.data(), scratch); }, 20);
    reference::BandedDims dg = d;
    dg.g2bmm = false;
    const double g = best([&] { cpu::gbmm_f32(dg, p.data<float>(), b.data<float>(), c2.data()); }, 20);
    std::cout << "threads " << threads << ": g2bmm " << g2 << " ms (" << flops / g2 * 1e-6 << " GFLOP/s), gbmm " << g
              << " ms (" << flops / g * 1e-6 << " GFLOP/s)\n";
  }
  Node g2node = banded_node("G2BMM", 64, 1), gnode = banded_node("GBMM", 64, 1);
  std::cout << "reference: g2bmm " << best([&] { reference::evaluate_node(g2node, {&a, &b}); }, 1) << " ms, gbmm "
            << best([&] { reference::evaluate_node(gnode, {&p, &b}); }, 1) << " ms\n";
}

}  // namespace
}  // namespace orchid::runtime
