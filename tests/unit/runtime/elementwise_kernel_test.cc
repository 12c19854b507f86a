// The elementwise kernels (src/runtime/kernels/cpu/elementwise*.cc) against
// the interpreter: every operator on float32 with equal shapes, a scalar
// operand and mid-axis broadcasting; integer and bool dtypes; Cast between
// pairs of dtypes; NaN/inf handling; and the float32 Exp/Sigmoid/Tanh/Erf
// approximations (and Mish's tanh of softplus) swept over the float range
// against double-precision <cmath>.
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>

#include "runtime/kernels/cpu/elementwise_math.h"
#include "runtime/kernels/cpu/linear_epilogue.h"
#include "runtime/kernels/cpu/registry.h"
#include "runtime_test_util.h"

namespace orchid::runtime {
namespace {

using namespace testing;  // NOLINT

constexpr double kRtol = 1e-6;
constexpr double kAtol = 1e-7;

// Feeds for every graph input: floats uniform in [lo, hi), integers uniform
// in [int_lo, int_hi) (zero included, so division by zero is exercised),
// bools half true.
std::map<std::string, Tensor> mixed_feeds(const Graph& g, uint32_t seed, double lo = -3, double hi = 3,
                                          int64_t int_lo = -20, int64_t int_hi = 20) {
  std::map<std::string, Tensor> feeds;
  std::mt19937 rng(seed);
  for (ValueId id : g.inputs()) {
    const TensorType& type = g.type(id);
    Tensor t(type);
    std::uniform_real_distribution<double> real(lo, hi);
    const int64_t ilo = is_signed(type.dtype) ? int_lo : std::max<int64_t>(0, int_lo);
    std::uniform_int_distribution<int64_t> integer(ilo, int_hi - 1);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (is_float(type.dtype)) t.set_f64(i, real(rng));
      else if (type.dtype == DType::Bool) t.set_f64(i, double(rng() & 1));
      else t.set_f64(i, double(integer(rng)));
    }
    feeds[g.value(id).name] = t;
  }
  return feeds;
}

// Runs the graph through the runtime, checks it against the interpreter and
// that the elementwise kernel (not the reference one) ran.
void expect_fast(const Graph& g, const std::map<std::string, Tensor>& feeds, double rtol = kRtol,
                 double atol = kAtol) {
  std::vector<std::string> implementations = expect_runtime_matches(g, feeds, {}, rtol, atol);
  ASSERT_EQ(implementations.size(), 1u);
  EXPECT_EQ(implementations[0], "elementwise") << g.nodes()[0].describe();
}

void expect_fast(const Graph& g, uint32_t seed = 5) { expect_fast(g, mixed_feeds(g, seed)); }

// The input range where a unary float operator is defined.
std::pair<double, double> domain(const std::string& op) {
  if (op == "Sqrt" || op == "Log" || op == "Reciprocal") return {0.05, 4};
  if (op == "Acosh") return {1.01, 4};
  if (op == "Asin" || op == "Acos" || op == "Atanh") return {-0.99, 0.99};
  if (op == "Tan") return {-1.4, 1.4};
  return {-6, 6};
}

const char* kFloatUnary[] = {"Abs",  "Neg",  "Floor", "Ceil", "Round",   "Sqrt",  "Reciprocal", "Exp",
                             "Log",  "Sin",  "Cos",   "Tan",  "Asin",    "Acos",  "Atan",       "Sinh",
                             "Cosh", "Asinh", "Acosh", "Atanh", "Erf",   "Sign",  "Tanh",       "Sigmoid",
                             "Relu", "IsNaN", "IsInf"};

TEST(ElementwiseKernel, Float32Unary) {
  for (const char* op : kFloatUnary) {
    SCOPED_TRACE(op);
    auto [lo, hi] = domain(op);
    // Small (one thread) and large enough for several parallel chunks.
    for (Shape shape : {Shape{2, 3, 5}, Shape{70001}}) {
      Graph g = one_node_graph(op, {var(shape)});
      expect_fast(g, mixed_feeds(g, 11, lo, hi));
    }
  }
}

const char* kFloatBinary[] = {"Add",  "Sub",         "Mul",     "Div",           "Max",  "Min", "Equal",
                              "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Pow"};

// Same shape, a scalar on either side, mid-axis broadcasting both ways, and
// a large channel broadcast that runs in parallel chunks.
const std::vector<std::pair<Shape, Shape>> kBinaryShapes = {
    {{2, 3, 5}, {2, 3, 5}}, {{2, 3, 5}, {}},        {{}, {4, 7}},          {{2, 1, 5}, {3, 1}},
    {{3, 1}, {2, 1, 5}},    {{4, 1, 6}, {1, 5, 1}}, {{1, 64, 56, 56}, {1, 64, 1, 1}}, {{70001}, {70001}}};

TEST(ElementwiseKernel, Float32Binary) {
  for (const char* op : kFloatBinary) {
    SCOPED_TRACE(op);
    // Pow's base stays positive so that fractional exponents stay real.
    const double lo = std::string(op) == "Pow" ? 0.1 : -3;
    for (const auto& [a, b] : kBinaryShapes) {
      SCOPED_TRACE(shape_to_string(a) + " op " + shape_to_string(b));
      Graph g = one_node_graph(op, {var(a), var(b)});
      expect_fast(g, mixed_feeds(g, 13, lo, 3));
    }
  }
  Graph fmod = one_node_graph("Mod", {var({2, 1, 5}), var({3, 1})}, attrs({{"fmod", int64_t(1)}}));
  expect_fast(fmod);
}

TEST(ElementwiseKernel, Float32ConstantOperands) {
  // A constant operand arrives as a pointer like any input; Pow by the
  // constant 2 takes the squaring path.
  Tensor two = Tensor::from_vector(DType::Float32, {}, std::vector<float>{2});
  expect_fast(one_node_graph("Pow", {var({3, 70}), cst(two)}));
  expect_fast(one_node_graph("Pow", {var({3, 70}), cst(DType::Int64, {1}, std::vector<int64_t>{2})}));
  expect_fast(one_node_graph("Pow", {var({3, 70}), cst(DType::Float32, {}, std::vector<float>{3})}));
  expect_fast(one_node_graph("Add", {var({2, 3}), cst(DType::Float32, {3}, std::vector<float>{1, 2, 3})}));
}

TEST(ElementwiseKernel, SameValueTwice) {
  Graph g;
  ValueId x = g.add_value("x", {DType::Float32, {4, 5}});
  g.inputs().push_back(x);
  g.outputs().push_back(add_op(g, "Mul", {x, x})[0]);
  expect_fast(g);
}

TEST(ElementwiseKernel, Where) {
  // Condition, X and Y each broadcast along different axes.
  const std::vector<std::array<Shape, 3>> shapes = {
      {Shape{2, 3, 5}, Shape{2, 3, 5}, Shape{2, 3, 5}}, {Shape{}, Shape{4, 7}, Shape{4, 7}},
      {Shape{2, 1, 5}, Shape{3, 1}, Shape{}},           {Shape{3, 1}, Shape{2, 1, 5}, Shape{2, 3, 5}},
      {Shape{4, 1, 6}, Shape{1, 5, 1}, Shape{6}},       {Shape{1, 64, 1, 1}, Shape{1, 64, 56, 56}, Shape{}}};
  for (const auto& [c, x, y] : shapes) {
    SCOPED_TRACE(shape_to_string(c) + " ? " + shape_to_string(x) + " : " + shape_to_string(y));
    expect_fast(one_node_graph("Where", {var(c, DType::Bool), var(x), var(y)}));
  }
  expect_fast(one_node_graph("Where", {var({3, 1}, DType::Bool), var({1, 4}, DType::Int64), var({}, DType::Int64)}));
  expect_fast(one_node_graph("Where", {var({6}, DType::Bool), var({6}, DType::UInt8), var({6}, DType::UInt8)}));
}

TEST(ElementwiseKernel, IntegerArithmetic) {
  for (DType dtype : {DType::Int64, DType::Int32, DType::Int8, DType::UInt8}) {
    SCOPED_TRACE(dtype_name(dtype));
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min", "Equal", "Less", "LessOrEqual", "Greater",
                           "GreaterOrEqual", "BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
      SCOPED_TRACE(op);
      expect_fast(one_node_graph(op, {var({2, 1, 5}, dtype), var({3, 1}, dtype)}));
      expect_fast(one_node_graph(op, {var({40}, dtype), var({}, dtype)}));
    }
    for (int64_t fmod : {0, 1}) {
      expect_fast(one_node_graph("Mod", {var({2, 1, 5}, dtype), var({3, 1}, dtype)}, attrs({{"fmod", fmod}})));
    }
    for (const char* op : {"Abs", "Sign", "BitwiseNot"}) expect_fast(one_node_graph(op, {var({70001}, dtype)}));
    if (is_signed(dtype)) {
      for (const char* op : {"Neg", "Relu"}) expect_fast(one_node_graph(op, {var({3, 7}, dtype)}));
    }
  }
}

TEST(ElementwiseKernel, IntegerOverflowCases) {
  // INT_MIN / -1 and INT_MIN % -1 wrap instead of trapping; Neg and Abs of
  // INT_MIN wrap.
  const int64_t min64 = std::numeric_limits<int64_t>::min();
  Tensor a = Tensor(DType::Int64, {4});
  int64_t* pa = a.data<int64_t>();
  pa[0] = min64, pa[1] = 7, pa[2] = -7, pa[3] = std::numeric_limits<int64_t>::max();
  Tensor b = Tensor(DType::Int64, {4});
  int64_t* pb = b.data<int64_t>();
  pb[0] = -1, pb[1] = 0, pb[2] = 3, pb[3] = 2;
  for (const char* op : {"Div", "Mod", "Add", "Mul", "Sub"}) {
    expect_fast(one_node_graph(op, {var({4}, DType::Int64), var({4}, DType::Int64)}), {{"in0", a}, {"in1", b}});
  }
  for (const char* op : {"Neg", "Abs"}) expect_fast(one_node_graph(op, {var({4}, DType::Int64)}), {{"in0", a}});
}

TEST(ElementwiseKernel, BitShift) {
  for (DType dtype : {DType::UInt8, DType::UInt32, DType::UInt64}) {
    for (const char* direction : {"LEFT", "RIGHT"}) {
      // Shift amounts up to 69 include the bit width and more (result 0).
      Graph g = one_node_graph("BitShift", {var({2, 1, 5}, dtype), var({3, 1}, dtype)},
                               attrs({{"direction", std::string(direction)}}));
      expect_fast(g, mixed_feeds(g, 3, 0, 1, 0, 70));
    }
  }
}

TEST(ElementwiseKernel, BoolOps) {
  for (const char* op : {"And", "Or", "Xor", "Equal"}) {
    SCOPED_TRACE(op);
    expect_fast(one_node_graph(op, {var({2, 1, 5}, DType::Bool), var({3, 1}, DType::Bool)}));
    expect_fast(one_node_graph(op, {var({9}, DType::Bool), var({9}, DType::Bool)}));
  }
  expect_fast(one_node_graph("Not", {var({70001}, DType::Bool)}));
}

TEST(ElementwiseKernel, IntegerPow) {
  for (DType base : {DType::Int64, DType::Int32, DType::Float32}) {
    for (DType exponent : {DType::Int64, DType::Int32, DType::Float32}) {
      Graph g = one_node_graph("Pow", {var({2, 1, 5}, base), var({3, 1}, exponent)});
      expect_fast(g, mixed_feeds(g, 9, 0.1, 3, -3, 6));
    }
  }
}

// A float32 tensor holding `values`.
Tensor floats(const std::vector<float>& values) {
  Tensor t(DType::Float32, {int64_t(values.size())});
  std::memcpy(t.raw(), values.data(), values.size() * sizeof(float));
  return t;
}

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(ElementwiseKernel, Cast) {
  const std::vector<float> specials = {kNaN, kInf, -kInf, 1e10f, -1e10f, 3.7f, -3.7f, 0.0f, -0.0f, 255.5f,
                                       256.0f, -1.0f, 2147483648.0f, -2147483904.0f, 9.3e18f, -9.3e18f, 1.0f};
  const std::vector<DType> dtypes = {DType::Float32, DType::Int64, DType::Int32, DType::Bool, DType::UInt8};
  for (DType from : dtypes) {
    for (DType to : dtypes) {
      SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + dtype_name(to));
      Graph g = one_node_graph("Cast", {var({int64_t(specials.size())}, from)},
                               attrs({{"to", int64_t(dtype_to_onnx(to))}}));
      // The special values converted to the source type first (as a source
      // tensor of that type would hold them).
      expect_fast(g, {{"in0", floats(specials).cast(from)}});
      expect_fast(g, mixed_feeds(g, 21, -300, 300, -300, 300));
    }
  }
}

TEST(ElementwiseKernel, NaNAndInfinity) {
  const std::vector<float> a = {kNaN, 1.0f, kNaN, kInf, -kInf, 2.0f, -0.0f, kInf};
  const std::vector<float> b = {1.0f, kNaN, kNaN, 1.0f, 3.0f, -kInf, 0.0f, kNaN};
  for (const char* op : {"Max", "Min", "Add", "Less", "Equal", "Greater"}) {
    SCOPED_TRACE(op);
    expect_fast(one_node_graph(op, {var({8}), var({8})}), {{"in0", floats(a)}, {"in1", floats(b)}});
  }
  for (const char* op : {"IsNaN", "IsInf", "Exp", "Sigmoid", "Tanh", "Erf", "Relu", "Sign", "Abs", "Floor"}) {
    SCOPED_TRACE(op);
    expect_fast(one_node_graph(op, {var({8})}), {{"in0", floats(a)}});
  }
  for (int64_t negative : {0, 1}) {
    for (int64_t positive : {0, 1}) {
      Graph g = one_node_graph("IsInf", {var({8})},
                               attrs({{"detect_negative", negative}, {"detect_positive", positive}}));
      expect_fast(g, {{"in0", floats(b)}});
    }
  }
}

TEST(ElementwiseKernel, OtherDtypesFallBackOrRun) {
  // float16 arithmetic is left to the reference kernel, Cast handles it.
  Graph add = one_node_graph("Add", {var({4}, DType::Float16), var({4}, DType::Float16)});
  EXPECT_EQ(expect_runtime_matches(add, mixed_feeds(add, 1)), std::vector<std::string>{"reference"});
  Graph cast = one_node_graph("Cast", {var({4}, DType::Float16)}, attrs({{"to", int64_t(1)}}));
  expect_fast(cast);
  // float64 runs through <cmath>.
  for (const char* op : {"Exp", "Sigmoid", "Tanh", "Erf", "Sqrt"}) {
    Graph g = one_node_graph(op, {var({2, 9}, DType::Float64)});
    expect_fast(g, mixed_feeds(g, 2, 0.1, 5));
  }
}

// ---- The float32 approximations over the whole float range -------------------

// Runs the one-node graph's elementwise kernel directly on `x`.
std::vector<float> run_kernel(const std::string& op, const std::vector<float>& x) {
  Graph g = one_node_graph(op, {var({int64_t(x.size())})});
  KernelGroup group = make_group(g, {0});
  std::unique_ptr<Kernel> kernel = cpu::make_elementwise_kernel(g, group);
  EXPECT_NE(kernel, nullptr);
  std::vector<float> y(x.size());
  if (kernel) kernel->run({{x.data()}, {y.data()}});
  return y;
}

double exact(const std::string& op, double x) {
  if (op == "Exp") return std::exp(x);
  if (op == "Sigmoid") return 1 / (1 + std::exp(-x));
  if (op == "Tanh") return std::tanh(x);
  if (op == "Log") return std::log(x);
  return std::erf(x);
}

// Every 509th float bit pattern (8.4 million values: every binade, both
// signs, denormals, infinities, NaNs) and a dense run around the origin.
std::vector<float> sweep() {
  std::vector<float> x;
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 509) {
    float v;
    const uint32_t b = uint32_t(bits);
    std::memcpy(&v, &b, sizeof v);
    x.push_back(v);
  }
  for (int i = -200000; i <= 200000; ++i) x.push_back(float(i) * 5e-5f);
  return x;
}

TEST(ElementwiseKernel, FastMathAccuracySweep) {
  const std::vector<float> x = sweep();
  const double kMinNormal = std::numeric_limits<float>::min();
  const double kDenormalStep = std::numeric_limits<float>::denorm_min();
  for (const char* op : {"Exp", "Log", "Sigmoid", "Tanh", "Erf"}) {
    SCOPED_TRACE(op);
    const std::vector<float> y = run_kernel(op, x);
    double max_relative = 0;
    float worst = 0;
    int64_t failures = 0;
    for (size_t i = 0; i < x.size() && failures < 10; ++i) {
      const double want = exact(op, double(x[i]));
      const double got = y[i];
      if (std::isnan(want)) {
        if (!std::isnan(got)) ++failures, ADD_FAILURE() << "x=" << x[i] << " got " << got << " want NaN";
      } else if (std::fabs(want) > std::numeric_limits<float>::max()) {
        if (got != double(float(want))) ++failures, ADD_FAILURE() << "x=" << x[i] << " got " << got;
      } else if (std::fabs(want) < kMinNormal) {
        // Denormal results: 0 (an exponential below the normal range is
        // flushed) or within one denormal step (correct rounding is half).
        if (got != 0 && std::fabs(got - want) > kDenormalStep) {
          ++failures, ADD_FAILURE() << "x=" << x[i] << " got " << got;
        }
      } else {
        const double relative = std::fabs(got - want) / std::fabs(want);
        if (relative > max_relative) max_relative = relative, worst = x[i];
      }
    }
    // Rounding to float alone costs up to 2^-24 = 5.96e-8; the float
    // functions stay within 2^-22 = 2.38e-7 (a few ulp).
    EXPECT_LT(max_relative, 2.39e-7) << "at x=" << worst;
    std::cout << "[ accuracy ] " << op << ": max relative error " << max_relative << " at x=" << worst << "\n";
  }
}

// Mish's factor tanh(softplus x) as one exponential (generated kernels use
// it for fission's softplus under a tanh): a few ulp over the sweep, 0 for
// x = -inf, 1 for +inf, NaN for NaN.
TEST(ElementwiseKernel, FastMathTanhSoftplusSweep) {
  double max_relative = 0;
  float worst = 0;
  for (float x : sweep()) {
    const double want = std::tanh(std::log1p(std::exp(double(x))));
    const double got = cpu::fast_math::tanh_softplus(x);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "x=" << x;
    } else if (std::fabs(want) < std::numeric_limits<float>::min()) {
      EXPECT_TRUE(got == 0 || std::fabs(got - want) <= std::numeric_limits<float>::denorm_min()) << "x=" << x;
    } else if (const double relative = std::fabs(got - want) / want; relative > max_relative) {
      max_relative = relative, worst = x;
    }
  }
  std::cout << "[ accuracy ] tanh_softplus: max relative error " << max_relative << " at x=" << worst << "\n";
  EXPECT_LT(max_relative, 4.8e-7) << "at x=" << worst;
}

// A softmax's exponential of x - max(x) (generated kernels use it when the
// argument is that): on every x <= 0 of the sweep, equal to exp's result
// within its accuracy, 0 for -inf and below the normal range, NaN for NaN.
TEST(ElementwiseKernel, FastMathExpNonPositiveSweep) {
  double max_relative = 0;
  float worst = 0;
  int64_t checked = 0;
  for (float x : sweep()) {
    if (x > 0) continue;
    ++checked;
    const double want = std::exp(double(x));
    const double got = cpu::fast_math::exp_nonpositive(x);
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(got)) << "x=" << x;
    } else if (want < std::numeric_limits<float>::min()) {
      EXPECT_EQ(got, 0.0) << "x=" << x;
    } else if (const double relative = std::fabs(got - want) / want; relative > max_relative) {
      max_relative = relative, worst = x;
    }
  }
  EXPECT_GT(checked, int64_t(4000000));
  std::cout << "[ accuracy ] exp_nonpositive: max relative error " << max_relative << " at x=" << worst << "\n";
  EXPECT_LT(max_relative, 2.39e-7) << "at x=" << worst;
}

// The linear kernels' Sigmoid and SiLU epilogues (apply_eltwise): over the
// sweep, a few ulp where the sigmoid is a normal float, 0 or a denormal step
// (times x for swish) where it is not, NaN for NaN, the limits at +-inf.
// The vector form (simd_math.h) takes a reciprocal estimate and a Newton
// step in place of the division, and keeps this accuracy.
TEST(ElementwiseKernel, EpilogueSigmoidSweep) {
  const std::vector<float> x = sweep();
  for (const bool swish : {false, true}) {
    SCOPED_TRACE(swish ? "swish" : "logistic");
    cpu::onednn::Epilogue e;
    e.kind = cpu::onednn::EpilogueKind::Eltwise;
    e.algorithm = swish ? dnnl::algorithm::eltwise_swish : dnnl::algorithm::eltwise_logistic;
    e.alpha = 1.f;
    std::vector<float> y = x;
    cpu::apply_eltwise(e, y.data(), int64_t(y.size()));
    double max_relative = 0;
    float worst = 0;
    int64_t failures = 0;
    for (size_t i = 0; i < x.size() && failures < 10; ++i) {
      const double sig = 1 / (1 + std::exp(-double(x[i])));
      const double want = swish ? double(x[i]) * sig : sig;
      const double got = y[i];
      if (std::isnan(want)) {
        if (!std::isnan(got)) ++failures, ADD_FAILURE() << "x=" << x[i] << " got " << got << " want NaN";
      } else if (std::isinf(want)) {
        if (got != want) ++failures, ADD_FAILURE() << "x=" << x[i] << " got " << got;
      } else if (std::fabs(want) < std::numeric_limits<float>::min()) {  // a denormal result
        if (got != 0 && std::fabs(got - want) > std::numeric_limits<float>::denorm_min()) {
          ++failures, ADD_FAILURE() << "x=" << x[i] << " got " << got;
        }
      } else if (sig < std::numeric_limits<float>::min()) {
        // A denormal sigmoid is 0 or within a denormal step (swish: times x).
        const double step = std::numeric_limits<float>::denorm_min() * (swish ? std::fabs(double(x[i])) : 1.0);
        if (got != 0 && std::fabs(got - want) > step) ++failures, ADD_FAILURE() << "x=" << x[i] << " got " << got;
      } else if (const double relative = std::fabs(got - want) / std::fabs(want); relative > max_relative) {
        max_relative = relative, worst = x[i];
      }
    }
    std::cout << "[ accuracy ] epilogue " << (swish ? "swish" : "logistic") << ": max relative error "
              << max_relative << " at x=" << worst << "\n";
    EXPECT_LT(max_relative, 4.8e-7) << "at x=" << worst;
  }
}

// The linear kernels' GELU (erf and tanh forms) and Mish epilogues
// (apply_eltwise) against double precision on a dense run of [-12, 12] and
// the sweep's finite values: within a few float roundings of the output's
// scale, max(1, |x|) (GELU's 1 + erf cancels where x is very negative, as
// fission's Erf-based nodes do), NaN for NaN.
TEST(ElementwiseKernel, EpilogueGeluAndMish) {
  std::vector<float> x;
  for (int i = -120000; i <= 120000; ++i) x.push_back(float(i) * 1e-4f);
  for (float v : sweep()) {
    if (std::isfinite(v) && std::fabs(v) < 1e6f) x.push_back(v);
  }
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  using dnnl::algorithm;
  for (const algorithm alg : {algorithm::eltwise_gelu_erf, algorithm::eltwise_gelu_tanh, algorithm::eltwise_mish}) {
    SCOPED_TRACE(int(alg));
    cpu::onednn::Epilogue e;
    e.kind = cpu::onednn::EpilogueKind::Eltwise;
    e.algorithm = alg;
    ASSERT_TRUE(cpu::epilogue_supported(e));
    std::vector<float> y = x;
    cpu::apply_eltwise(e, y.data(), int64_t(y.size()));
    double worst = 0;
    float at = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      double want = 0;
      if (alg == algorithm::eltwise_gelu_erf) want = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
      if (alg == algorithm::eltwise_gelu_tanh) {
        want = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
      }
      if (alg == algorithm::eltwise_mish) want = v * std::tanh(std::log1p(std::exp(v)));
      if (std::isnan(v)) {
        EXPECT_TRUE(std::isnan(y[i]));
        continue;
      }
      const double error = std::fabs(double(y[i]) - want) / std::max(1.0, std::fabs(v));
      if (error > worst) worst = error, at = x[i];
    }
    std::cout << "[ accuracy ] epilogue " << int(alg) << ": max error " << worst << " of max(1, |x|) at x=" << at
              << "\n";
    EXPECT_LT(worst, 4.8e-7) << "at x=" << at;
  }
}

}  // namespace
}  // namespace orchid::runtime
