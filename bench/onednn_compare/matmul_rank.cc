// oneDNN 2.6's matmul on the zoo's projection shapes (M rows by a constant
// K x N weight), three ways: rank 3 with a unit batch and row-major weights
// (what Orchid handed it before), rank 2 with weights in the layout oneDNN
// picks (`any`, what it hands it now), and inner_product. Eight weight copies
// are cycled so that the weights come from memory as in a model; median of
// 40 runs. Threads from OMP_NUM_THREADS.
//
//   g++ -O2 -std=c++17 bench/onednn_compare/matmul_rank.cc -o /tmp/matmul_rank -ldnnl
//   OMP_NUM_THREADS=1 /tmp/matmul_rank
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <tuple>
#include <vector>

using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;

namespace {

std::mt19937 rng(1);

void fill_random(memory& m) {
  std::normal_distribution<float> normal(0, 0.05f);
  float* p = static_cast<float*>(m.get_data_handle());
  for (size_t i = 0; i < m.get_desc().get_size() / sizeof(float); ++i) p[i] = normal(rng);
}

double median_ms(stream& s, const std::function<void(int)>& run) {
  std::vector<double> t;
  for (int i = 0; i < 40; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run(i);
    s.wait();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main() {
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  const int copies = 8;
  const std::vector<std::tuple<int, int, int>> shapes = {{128, 768, 3072}, {128, 3072, 768}, {128, 768, 2304},
                                                         {128, 768, 768},  {197, 384, 1536}, {197, 1536, 384}};
  std::printf(
      "| M x K x N | rank 3, row-major weights | rank 2, oneDNN's weights | inner_product |\n|---|---:|---:|---:|\n");
  for (const auto& [M, K, N] : shapes) {
    std::printf("| %dx%dx%d |", M, K, N);
    for (int variant = 0; variant < 3; ++variant) {
      std::vector<memory> weights;
      memory src, dst;
      primitive prim;
      if (variant < 2) {
        const bool two = variant == 1;
        const memory::desc a =
            two ? memory::desc({M, K}, dt::f32, tag::ab) : memory::desc({1, M, K}, dt::f32, tag::abc);
        const memory::desc c =
            two ? memory::desc({M, N}, dt::f32, tag::ab) : memory::desc({1, M, N}, dt::f32, tag::abc);
        const memory::desc b =
            two ? memory::desc({K, N}, dt::f32, tag::any) : memory::desc({1, K, N}, dt::f32, tag::abc);
        matmul::primitive_desc pd(matmul::desc(a, b, c), eng);
        src = memory(a, eng), dst = memory(c, eng);
        for (int i = 0; i < copies; ++i) weights.emplace_back(pd.weights_desc(), eng), fill_random(weights.back());
        prim = matmul(pd);
      } else {
        const memory::desc a({M, K}, dt::f32, tag::ab), c({M, N}, dt::f32, tag::ab), w({N, K}, dt::f32, tag::any);
        inner_product_forward::primitive_desc pd(inner_product_forward::desc(prop_kind::forward_inference, a, w, c),
                                                 eng);
        src = memory(a, eng), dst = memory(c, eng);
        for (int i = 0; i < copies; ++i) weights.emplace_back(pd.weights_desc(), eng), fill_random(weights.back());
        prim = inner_product_forward(pd);
      }
      fill_random(src);
      const double ms = median_ms(s, [&](int i) {
        prim.execute(s, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights[size_t(i % copies)]}, {DNNL_ARG_DST, dst}});
      });
      std::printf(" %.3f ms, %.0f GFLOP/s |", ms, 2.0 * M * K * N / ms / 1e6);
    }
    std::printf("\n");
  }
}
