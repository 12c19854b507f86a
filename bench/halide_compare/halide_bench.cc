// Halide 21 (PyPI `halide`, JIT) on the kernel classes of Orchid's generated
// kernels, the shapes of `CodegenCpu.DISABLED_Benchmark`
// (tests/unit/codegen/codegen_cpu_test.cc), each with the plain schedule a
// person writes first: the innermost axis vectorized by 16, the outermost
// parallel, reductions over a row vectorized by rfactor, separable where the
// math is (pools, bilinear). Prints per kernel the JIT compile time, the best
// of 30 runs, and a checksum. Threads: HL_NUM_THREADS (the run script sets it).
//
// Not part of the build: bench/halide_compare/run downloads the wheel into a
// scratch folder and compiles this against it.
#include <Halide.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <string>

using namespace Halide;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Buffer<float> random_buffer(std::vector<int> sizes, uint32_t seed) {
  Buffer<float> b(sizes);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  b.for_each_value([&](float& v) { v = u(rng); });
  return b;
}

// JIT-compiles `out` (timed), then realizes it into `result` 30 times; prints the best.
void run(const std::string& name, Func out, Buffer<float> result) {
  const Target target = get_jit_target_from_environment();
  auto start = std::chrono::steady_clock::now();
  out.compile_jit(target);
  const double compile = seconds_since(start);
  double best = 1e9;
  for (int i = 0; i < 30; ++i) {
    start = std::chrono::steady_clock::now();
    out.realize(result);
    best = std::min(best, seconds_since(start));
  }
  double checksum = 0;
  result.for_each_value([&](float v) { checksum += double(v); });
  std::printf("| %s | %.3f | %.4f | %.6g |\n", name.c_str(), compile, best * 1e3, checksum);
}

// f(y) = term(r) over r in [0, n), combined by `combine` from `init`.
struct RowReduction {
  Func f;
  RDom r;
};
RowReduction row_reduction(const std::string& name, const std::function<Expr(Expr)>& term, int n, Expr init,
                           const std::function<Expr(Expr, Expr)>& combine, Var y) {
  RowReduction red{Func(name), RDom(0, n)};
  red.f(y) = init;
  red.f(y) = combine(red.f(y), term(red.r.x));
  return red;
}

// The reduction computed per row y of `consumer`, vectorized by 16 through
// rfactor (16 partial results, then their combination).
void vectorize_reduction(RowReduction& red, Func consumer, Var y) {
  RVar ro("ro"), ri("ri");
  Var u("u");
  Func partial = red.f.update().split(red.r.x, ro, ri, 16).rfactor(ri, u);
  red.f.compute_at(consumer, y);
  partial.compute_at(consumer, y).vectorize(u);
  partial.update().vectorize(u);
}

void softmax() {
  const int cols = 1000, rows = 1024;
  Buffer<float> in = random_buffer({cols, rows}, 1);
  Var x("x"), y("y");
  RowReduction max_row = row_reduction("max_row", [&](Expr r) { return in(r, y); }, cols,
                               Float(32).min(), [](Expr a, Expr b) { return max(a, b); }, y);
  Func e("e");
  e(x, y) = exp(in(x, y) - max_row.f(y));
  RowReduction sum_row = row_reduction("sum_row", [&](Expr r) { return e(r, y); }, cols, 0.f,
                               [](Expr a, Expr b) { return a + b; }, y);
  Func out("softmax");
  out(x, y) = e(x, y) / sum_row.f(y);
  out.parallel(y).vectorize(x, 16);
  e.compute_at(out, y).vectorize(x, 16);
  vectorize_reduction(max_row, out, y);
  vectorize_reduction(sum_row, out, y);
  run("softmax_1024x1000", out, Buffer<float>(cols, rows));
}

void layernorm() {
  const int cols = 768, rows = 512;
  Buffer<float> in = random_buffer({cols, rows}, 2), gamma = random_buffer({cols}, 3), beta = random_buffer({cols}, 4);
  Var x("x"), y("y");
  RowReduction sum_row = row_reduction("sum_row", [&](Expr r) { return in(r, y); }, cols, 0.f,
                                       [](Expr a, Expr b) { return a + b; }, y);
  Func mean("mean");
  mean(y) = sum_row.f(y) / cols;
  Func centered("centered");
  centered(x, y) = in(x, y) - mean(y);
  RowReduction sq_row = row_reduction("sq_row", [&](Expr r) { return centered(r, y) * centered(r, y); }, cols, 0.f,
                              [](Expr a, Expr b) { return a + b; }, y);
  Func out("layernorm");
  out(x, y) = centered(x, y) / sqrt(sq_row.f(y) / cols + 1e-5f) * gamma(x) + beta(x);
  out.parallel(y).vectorize(x, 16);
  centered.compute_at(out, y).vectorize(x, 16);
  mean.compute_at(out, y);
  vectorize_reduction(sum_row, out, y);
  vectorize_reduction(sq_row, out, y);
  run("layernorm_512x768", out, Buffer<float>(cols, rows));
}

// k x k max pool, stride 1, pad k / 2, over [c][h][w]: the row maxima stored
// per channel, then the column maxima.
void maxpool(const std::string& name, int c, int h, int w, int k) {
  Buffer<float> in = random_buffer({w, h, c}, 5);
  const int pad = k / 2;
  Var x("x"), y("y"), ch("c");
  Func padded = BoundaryConditions::constant_exterior(in, Float(32).min());
  RDom r(-pad, k);
  Func rows("rows");
  rows(x, y, ch) = maximum(padded(x + r, y, ch));
  Func out("maxpool");
  out(x, y, ch) = maximum(rows(x, y + r, ch));
  out.parallel(ch).vectorize(x, 16);
  rows.compute_at(out, ch).vectorize(x, 16);
  run(name, out, Buffer<float>(w, h, c));
}

void silu_affine() {
  Buffer<float> in = random_buffer({56, 56, 64, 2}, 6), a = random_buffer({64}, 7), b = random_buffer({64}, 8);
  Var x("x"), y("y"), c("c"), n("n");
  Func t("t");
  t(x, y, c, n) = in(x, y, c, n) * a(c) + b(c);
  Func out("silu");
  out(x, y, c, n) = t(x, y, c, n) / (1.f + exp(-t(x, y, c, n)));
  Var cn("cn");
  out.fuse(c, n, cn).parallel(cn).vectorize(x, 16);
  run("elementwise_2x64x56x56", out, Buffer<float>(56, 56, 64, 2));
}

// x tanh(softplus(x)) as a rational function of e^x (Orchid's fast_math::tanh_softplus).
void mish() {
  Buffer<float> in = random_buffer({128, 128, 64}, 9);
  Var x("x"), y("y"), c("c");
  Func out("mish");
  Expr v = in(x, y, c);
  Expr e = exp(min(v, 20.f));
  Expr num = e * (e + 2.f);
  out(x, y, c) = select(v > 20.f, v, v * num / (num + 2.f));
  out.parallel(c).vectorize(x, 16);
  run("mish_1x64x128x128", out, Buffer<float>(128, 128, 64));
}

// Resize x4, linear, half-pixel (ONNX's default), 64 x 32 x 32 -> 64 x 128 x 128: separable.
void bilinear_x4() {
  const int w = 32, h = 32, c = 64, s = 4;
  Buffer<float> in = random_buffer({w, h, c}, 10);
  Var x("x"), y("y"), ch("c");
  auto source = [&](Expr o, int size) {
    Expr f = clamp((cast<float>(o) + 0.5f) / s - 0.5f, 0.f, float(size - 1));
    Expr i = min(cast<int>(floor(f)), size - 2);
    return std::make_pair(i, f - cast<float>(i));
  };
  auto [ix, fx] = source(x, w);
  auto [iy, fy] = source(y, h);
  Func horizontal("horizontal");
  horizontal(x, y, ch) = lerp(in(ix, y, ch), in(ix + 1, y, ch), fx);
  Func out("bilinear");
  out(x, y, ch) = lerp(horizontal(x, iy, ch), horizontal(x, iy + 1, ch), fy);
  out.parallel(ch).vectorize(x, 16);
  horizontal.compute_at(out, ch).vectorize(x, 16);
  run("bilinear_x4_1x64x32x32", out, Buffer<float>(w * s, h * s, c));
}

void nearest_x2() {
  Buffer<float> in = random_buffer({64, 64, 64}, 11);
  Var x("x"), y("y"), c("c");
  Func out("nearest");
  out(x, y, c) = in(x / 2, y / 2, c);
  out.parallel(c).vectorize(x, 16);
  run("nearest_x2_1x64x64x64", out, Buffer<float>(128, 128, 64));
}

}  // namespace

int main() {
  std::printf("| kernel | JIT compile s | best of 30 ms | checksum |\n|---|---:|---:|---:|\n");
  softmax();
  layernorm();
  maxpool("maxpool3_1x64x112x112", 64, 112, 112, 3);
  silu_affine();
  mish();
  maxpool("maxpool13_1x128x20x20", 128, 20, 20, 13);
  maxpool("maxpool5_1x64x52x52", 64, 52, 52, 5);
  bilinear_x4();
  nearest_x2();
  return 0;
}
