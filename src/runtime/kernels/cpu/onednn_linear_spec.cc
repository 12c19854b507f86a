#include "runtime/kernels/cpu/onednn_linear_spec.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "reference/ops/conv_utils.h"
#include "runtime/kernels/cpu/layout_strided_copy.h"
#include "support/error.h"

namespace orchid::runtime::cpu::onednn {

using dnnl::algorithm;
using dims = dnnl::memory::dims;

namespace {

bool has_input(const Node& node, size_t i) { return node.inputs.size() > i && node.inputs[i] != kNoValue; }

int64_t product(const dims& d, size_t begin) {
  int64_t n = 1;
  for (size_t i = begin; i < d.size(); ++i) n *= d[i];
  return n;
}

// The ONNX weight layouts as strides over oneDNN's logical weight dims:
// Conv W [M, C/G, k...] is already oneDNN's (g)oi order; ConvTranspose W
// [C, M/G, k...] is (g)io, so o and i swap their strides.
dims weight_strides(const dims& weights, bool grouped, bool transpose) {
  dims strides = dense_strides(weights);
  if (!transpose) return strides;
  const size_t o = grouped ? 1 : 0, i = o + 1;
  const int64_t taps = product(weights, i + 1);
  strides[o] = taps;
  strides[i] = weights[o] * taps;
  return strides;
}

std::optional<LinearAnchor> analyze_conv(const Graph& graph, const Node& node, bool transpose) {
  const Shape& x = graph.type(node.inputs[0]).shape;
  const Shape& w = graph.type(node.inputs[1]).shape;
  const Shape& y = graph.type(node.outputs[0]).shape;
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size() || y.size() != x.size()) return std::nullopt;
  LinearAnchor a;
  a.kind = transpose ? LinearKind::ConvTranspose : LinearKind::Conv;
  a.groups = node.attrs.get_int("group", 1);
  const int64_t g = a.groups, in_c = x[1], out_c = y[1];
  if (g < 1 || in_c % g != 0 || out_c % g != 0) return std::nullopt;
  const Shape in(x.begin() + 2, x.end()), kernel(w.begin() + 2, w.end());
  reference::WindowGeometry geometry;
  try {
    const Shape k = reference::kernel_shape_attr(node.attrs, kernel);
    geometry = transpose ? reference::conv_transpose_geometry(node.attrs, in, k)
                         : reference::window_geometry(node.attrs, in, k, false);
  } catch (const Error&) {
    return std::nullopt;
  }
  if (geometry.kernel != kernel || geometry.out != Shape(y.begin() + 2, y.end())) return std::nullopt;
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t extent = (kernel[i] - 1) * geometry.dilations[i] + 1;
    a.strides.push_back(geometry.strides[i]);
    a.dilations.push_back(geometry.dilations[i] - 1);
    a.pad_l.push_back(geometry.pad_begin[i]);
    // oneDNN has no output_padding: the end pad that yields the output size.
    a.pad_r.push_back(transpose ? (in[i] - 1) * geometry.strides[i] + extent - geometry.pad_begin[i] - geometry.out[i]
                                : geometry.pad_end[i]);
    if (a.pad_l.back() < 0 || a.pad_r.back() < 0 || geometry.dilations[i] < 1) return std::nullopt;
  }
  a.src = dims(x.begin(), x.end());
  a.dst = dims(y.begin(), y.end());
  a.weights = g > 1 ? dims{g, out_c / g, in_c / g} : dims{out_c, in_c};
  a.weights.insert(a.weights.end(), kernel.begin(), kernel.end());
  a.weights_strides = weight_strides(a.weights, g > 1, transpose);
  if (product(a.weights, 0) != shape_numel(w)) return std::nullopt;
  a.channel_axis = 1;
  a.channels = out_c;
  return a;
}

// numpy matmul: 1-D operands become [1, K] / [K, 1]; ranks are padded with
// leading 1s, which oneDNN's matmul broadcasts.
std::optional<LinearAnchor> analyze_matmul(const Graph& graph, const Node& node) {
  Shape a = graph.type(node.inputs[0]).shape, b = graph.type(node.inputs[1]).shape;
  if (a.empty() || b.empty()) return std::nullopt;
  const bool column = b.size() == 1;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  const size_t rank = std::max(a.size(), b.size());
  if (rank > size_t(DNNL_MAX_NDIMS)) return std::nullopt;
  a.insert(a.begin(), rank - a.size(), 1);
  b.insert(b.begin(), rank - b.size(), 1);
  // The canonical product: when B has no batch (a plain [K, N] matrix, the
  // weights of a projection), A's batch folds into its rows, one GEMM of
  // all rows (same memory). PyTorch's MultiheadAttention projects [L, 1, D]
  // by [D, 3D]: as L batches of one row each, the weights were read L times.
  // Constant weights make it a rank-2 product: oneDNN 2.6's matmul blocks
  // weights asked for as `any` only at rank 2; with leading unit dims it
  // keeps them row-major and ran BERT's 128x768 by 768x3072 product in 7.8 ms
  // instead of 3.4 at 1 thread (bench/onednn_compare/matmul_rank.cc). A
  // runtime B keeps its rank (a Transpose prologue reads it at that rank).
  if (rank > 2 && std::all_of(b.begin(), b.end() - 2, [](int64_t d) { return d == 1; })) {
    const int64_t rows = product(dims(a.begin(), a.end() - 1), 0);
    if (graph.value(node.inputs[1]).is_constant()) {
      a = {rows, a.back()};
      b.erase(b.begin(), b.end() - 2);
    } else {
      std::fill(a.begin(), a.end() - 2, 1);
      a[rank - 2] = rows;
    }
  }
  LinearAnchor m;
  m.kind = LinearKind::MatMul;
  m.src = dims(a.begin(), a.end());
  m.weights = dims(b.begin(), b.end());
  m.dst = m.src;
  for (size_t i = 0; i + 2 < a.size(); ++i) m.dst[i] = std::max(a[i], b[i]);
  m.dst.back() = b.back();
  m.weights_strides = dense_strides(m.weights);
  if (product(m.dst, 0) != graph.type(node.outputs[0]).numel()) return std::nullopt;
  m.channel_axis = graph.type(node.outputs[0]).rank() - 1;
  m.channels = column ? 0 : b.back();
  return m;
}

// Whether `c` broadcast against the output `out` varies only along the
// output channel axis with exactly `channels` entries.
bool is_per_channel(const Shape& c, const Shape& out, const LinearAnchor& anchor) {
  if (anchor.channels <= 1 || c.size() > out.size() || anchor.channel_axis >= out.size()) return false;
  const size_t offset = out.size() - c.size();
  for (size_t i = 0; i < c.size(); ++i) {
    const bool channel = offset + i == anchor.channel_axis;
    if (c[i] != (channel ? anchor.channels : 1)) return false;
  }
  return anchor.channel_axis >= offset;
}

std::optional<algorithm> unary_algorithm(const std::string& op) {
  if (op == "Relu") return algorithm::eltwise_relu;
  if (op == "Sigmoid") return algorithm::eltwise_logistic;
  if (op == "Tanh") return algorithm::eltwise_tanh;
  if (op == "Abs") return algorithm::eltwise_abs;
  if (op == "Sqrt") return algorithm::eltwise_sqrt;
  if (op == "Exp") return algorithm::eltwise_exp;
  if (op == "Log") return algorithm::eltwise_log;
  if (op == "Elu") return algorithm::eltwise_elu;
  if (op == "LeakyRelu") return algorithm::eltwise_relu;
  return std::nullopt;
}

std::optional<Epilogue> unary_epilogue(const Node& node) {
  Epilogue e;
  if (node.op == "Neg" || node.op == "Reciprocal") {
    // -x as linear(-1, 0); 1/x as pow(1, -1).
    e.algorithm = node.op == "Neg" ? algorithm::eltwise_linear : algorithm::eltwise_pow;
    e.alpha = node.op == "Neg" ? -1.f : 1.f;
    e.beta = node.op == "Neg" ? 0.f : -1.f;
    return e;
  }
  std::optional<algorithm> alg = unary_algorithm(node.op);
  if (!alg) return std::nullopt;
  e.algorithm = *alg;
  if (node.op == "Elu") e.alpha = float(node.attrs.get_float("alpha", 1.0));
  if (node.op == "LeakyRelu") e.alpha = float(node.attrs.get_float("alpha", 0.01));
  return e;
}

Epilogue eltwise(algorithm alg, float alpha, float beta) {
  Epilogue e;
  e.algorithm = alg;
  e.alpha = alpha;
  e.beta = beta;
  return e;
}

// x op c, or c op x when `swapped`, for a scalar constant c.
std::optional<Epilogue> scalar_epilogue(const std::string& op, float c, bool swapped) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  if (op == "Add") return eltwise(algorithm::eltwise_linear, 1.f, c);
  if (op == "Mul") return eltwise(algorithm::eltwise_linear, c, 0.f);
  if (op == "Sub") {
    return swapped ? eltwise(algorithm::eltwise_linear, -1.f, c) : eltwise(algorithm::eltwise_linear, 1.f, -c);
  }
  if (op == "Div") {  // c / x as c * x^-1
    return swapped ? eltwise(algorithm::eltwise_pow, c, -1.f) : eltwise(algorithm::eltwise_linear, 1.f / c, 0.f);
  }
  // Clip's bounds after fission: Max with the lower one, Min with the upper.
  if (op == "Max") return eltwise(algorithm::eltwise_clip, c, inf);
  if (op == "Min") return eltwise(algorithm::eltwise_clip, -inf, c);
  return std::nullopt;
}

// x op t for a tensor t (the order matters for Sub and Div only).
std::optional<algorithm> binary_algorithm(const std::string& op, bool swapped) {
  if (op == "Add") return algorithm::binary_add;
  if (op == "Mul") return algorithm::binary_mul;
  if (op == "Max") return algorithm::binary_max;
  if (op == "Min") return algorithm::binary_min;
  if (swapped) return std::nullopt;
  if (op == "Sub") return algorithm::binary_sub;
  if (op == "Div") return algorithm::binary_div;
  return std::nullopt;
}

// dst's dims with 1 everywhere but the channel axis (oneDNN's per-channel
// broadcast of a binary post-op operand).
dims channel_broadcast(const LinearAnchor& anchor) {
  dims d(anchor.dst.size(), 1);
  d[anchor.kind == LinearKind::MatMul ? d.size() - 1 : 1] = anchor.channels;
  return d;
}

std::optional<Epilogue> binary_epilogue(const Graph& graph, const LinearAnchor& anchor, ValueId current,
                                        const Node& node, bool bias_allowed) {
  const bool swapped = node.inputs[1] == current;
  const ValueId other = node.inputs[swapped ? 0 : 1];
  if (!is_f32(graph, other) || other == current) return std::nullopt;
  const Value& value = graph.value(other);
  const Shape& out = graph.type(current).shape;
  if (value.constant && value.constant->numel() == 1 && value.type.rank() <= out.size()) {
    const float c = float(value.constant->at_f64(0));
    const bool bias = bias_allowed && anchor.channels > 0 && (node.op == "Add" || (node.op == "Sub" && !swapped));
    if (!bias) return scalar_epilogue(node.op, c, swapped);
    Epilogue e;
    e.kind = EpilogueKind::Bias;
    e.values.assign(size_t(anchor.channels), node.op == "Sub" ? -c : c);
    return e;
  }
  std::optional<algorithm> alg = binary_algorithm(node.op, swapped);
  if (!alg) return std::nullopt;
  Epilogue e;
  e.kind = EpilogueKind::Binary;
  e.algorithm = *alg;
  if (!value.constant) {
    if (value.type != graph.type(current)) return std::nullopt;
    e.tensor = other;
    return e;
  }
  if (!is_per_channel(value.type.shape, out, anchor)) return std::nullopt;
  e.values = constant_values(*value.constant);
  if (bias_allowed && (*alg == algorithm::binary_add || *alg == algorithm::binary_sub)) {
    // A per-channel Add before any post-op is the primitive's bias.
    if (*alg == algorithm::binary_sub) {
      for (float& v : e.values) v = -v;
    }
    e.kind = EpilogueKind::Bias;
    return e;
  }
  e.broadcast = channel_broadcast(anchor);
  return e;
}

bool is_eltwise(const Epilogue& e, algorithm alg) { return e.kind == EpilogueKind::Eltwise && e.algorithm == alg; }

// next(prev(x)) as one eltwise, when both are affine maps or both clamps.
std::optional<Epilogue> fold(const Epilogue& prev, const Epilogue& next) {
  if (is_eltwise(prev, algorithm::eltwise_linear) && is_eltwise(next, algorithm::eltwise_linear)) {
    return eltwise(algorithm::eltwise_linear, next.alpha * prev.alpha, next.alpha * prev.beta + next.beta);
  }
  if (is_eltwise(prev, algorithm::eltwise_clip) && is_eltwise(next, algorithm::eltwise_clip)) {
    // A clamp of a clamp is the clamp to the image of the first one's bounds.
    auto clamp = [&](float v) { return std::min(next.beta, std::max(next.alpha, v)); };
    return eltwise(algorithm::eltwise_clip, clamp(prev.alpha), clamp(prev.beta));
  }
  return std::nullopt;
}

}  // namespace

bool append_epilogue(std::vector<Epilogue>& epilogues, Epilogue e) {
  size_t kept = epilogues.size();
  if (!epilogues.empty()) {
    if (std::optional<Epilogue> folded = fold(epilogues.back(), e)) {
      e = *folded;
      --kept;
    }
  }
  if (e.kind == EpilogueKind::Eltwise) {
    for (size_t i = 0; i < kept; ++i) {
      const Epilogue& other = epilogues[i];
      if (is_eltwise(other, e.algorithm) && (other.alpha != e.alpha || other.beta != e.beta)) return false;
    }
  }
  epilogues.resize(kept);
  epilogues.push_back(std::move(e));
  return true;
}

dims dense_strides(const dims& d) {
  dims strides(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;) strides[i - 1] = strides[i] * d[i];
  return strides;
}

std::optional<LinearAnchor> analyze_anchor(const Graph& graph, const Node& node) {
  const bool conv = node.op == "Conv", transpose = node.op == "ConvTranspose", matmul = node.op == "MatMul";
  if (!conv && !transpose && !matmul) return std::nullopt;
  if (node.outputs.size() != 1 || !is_f32(graph, node.outputs[0])) return std::nullopt;
  if (node.inputs.size() < 2 || node.inputs.size() > (matmul ? 2u : 3u)) return std::nullopt;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!is_f32(graph, node.inputs[i]) && !(i == 2 && node.inputs[i] == kNoValue)) return std::nullopt;
  }
  std::optional<LinearAnchor> anchor = matmul ? analyze_matmul(graph, node) : analyze_conv(graph, node, transpose);
  if (!anchor) return std::nullopt;
  anchor->x = node.inputs[0];
  anchor->w = node.inputs[1];
  if (has_input(node, 2)) {
    if (graph.type(node.inputs[2]).numel() != anchor->channels) return std::nullopt;
    anchor->b = node.inputs[2];
  }
  return anchor;
}

std::optional<Epilogue> analyze_epilogue(const Graph& graph, const LinearAnchor& anchor, ValueId current,
                                         const Node& node, bool bias_allowed) {
  if (node.outputs.size() != 1 || node.outputs[0] == kNoValue) return std::nullopt;
  if (graph.type(node.outputs[0]) != graph.type(current)) return std::nullopt;
  if (std::count(node.inputs.begin(), node.inputs.end(), current) != 1) return std::nullopt;
  if (node.inputs.size() == 1) return unary_epilogue(node);
  if (node.inputs.size() == 2) return binary_epilogue(graph, anchor, current, node, bias_allowed);
  return std::nullopt;
}

namespace {

// SiLU as fission writes it, x * Sigmoid(x): `sigmoid` reads `current` and
// `mul` multiplies `current` by its output (either order). One oneDNN swish
// post-op (alpha 1) computes both nodes.
bool is_swish_pair(const Node& sigmoid, const Node& mul, ValueId current) {
  if (sigmoid.op != "Sigmoid" || !sigmoid.domain.empty() || sigmoid.inputs.size() != 1 ||
      sigmoid.inputs[0] != current || mul.op != "Mul" || !mul.domain.empty() || mul.inputs.size() != 2) {
    return false;
  }
  const ValueId s = sigmoid.outputs[0];
  return (mul.inputs[0] == current && mul.inputs[1] == s) || (mul.inputs[0] == s && mul.inputs[1] == current);
}

// Whether `node` is `op` of `x` (first, or either side when `either_side`)
// and a constant whose every element is `value`, of x's type.
bool is_op_with_scalar(const Graph& graph, const Node& node, const char* op, ValueId x, float value,
                       bool either_side) {
  if (node.op != op || !node.domain.empty() || node.inputs.size() != 2 || node.outputs.size() != 1) return false;
  if (node.outputs[0] == kNoValue || graph.type(node.outputs[0]) != graph.type(x)) return false;
  ValueId other = node.inputs[1];
  if (node.inputs[0] != x) {
    if (!either_side || node.inputs[1] != x) return false;
    other = node.inputs[0];
  }
  return uniform_constant(graph, other) == value;
}

// HardSwish as fission writes it (elementwise_rules.cc), x * Min(Max(x / 6 +
// 0.5, 0), 1), in nodes[0..5) with x = `current`: one oneDNN hardswish
// post-op computes all five (x * ReLU6(x + 3) / 6, equal in real arithmetic).
bool is_hard_swish(const Graph& graph, const std::vector<const Node*>& nodes, ValueId current) {
  if (nodes.size() < 5) return false;
  ValueId gate = current;
  const std::pair<const char*, float> steps[] = {{"Div", 6.f}, {"Add", 0.5f}, {"Max", 0.f}, {"Min", 1.f}};
  for (size_t i = 0; i < 4; ++i) {
    if (!is_op_with_scalar(graph, *nodes[i], steps[i].first, gate, steps[i].second, i > 0)) return false;
    gate = nodes[i]->outputs[0];
  }
  const Node& mul = *nodes[4];
  if (mul.op != "Mul" || !mul.domain.empty() || mul.inputs.size() != 2 || mul.outputs.size() != 1) return false;
  return (mul.inputs[0] == current && mul.inputs[1] == gate) || (mul.inputs[0] == gate && mul.inputs[1] == current);
}

// Mish as fission writes it (elementwise_rules.cc), x * Tanh(Max(x, 0) +
// Log(Exp(Neg(Abs(x))) + 1)), in nodes[0..9) (Abs, Neg, Exp, Add, Log, Max,
// Add, Tanh, Mul) with x = `current`: one oneDNN mish post-op computes all
// nine.
bool is_mish(const Graph& graph, const std::vector<const Node*>& nodes, ValueId current) {
  if (nodes.size() < 9) return false;
  const auto unary = [&](const Node& node, const char* op, ValueId in) {
    return node.op == op && node.domain.empty() && node.inputs == std::vector<ValueId>{in} && node.outputs.size() == 1;
  };
  const auto reads = [](const Node& node, ValueId a, ValueId b) {
    return node.domain.empty() && node.inputs.size() == 2 && node.outputs.size() == 1 &&
           ((node.inputs[0] == a && node.inputs[1] == b) || (node.inputs[0] == b && node.inputs[1] == a));
  };
  const Node &abs = *nodes[0], &neg = *nodes[1], &exp = *nodes[2], &add_one = *nodes[3], &log = *nodes[4];
  const Node &max = *nodes[5], &softplus = *nodes[6], &tanh = *nodes[7], &mul = *nodes[8];
  return unary(abs, "Abs", current) && unary(neg, "Neg", abs.outputs[0]) && unary(exp, "Exp", neg.outputs[0]) &&
         is_op_with_scalar(graph, add_one, "Add", exp.outputs[0], 1.f, true) &&
         unary(log, "Log", add_one.outputs[0]) && is_op_with_scalar(graph, max, "Max", current, 0.f, true) &&
         softplus.op == "Add" && reads(softplus, max.outputs[0], log.outputs[0]) &&
         unary(tanh, "Tanh", softplus.outputs[0]) && mul.op == "Mul" && reads(mul, current, tanh.outputs[0]);
}

// LeakyReLU as fission writes it, Where(Less(x, 0), Mul(x, alpha), x), in
// nodes[0..3) (Less and Mul in either order, then Where) with x =
// `current`: one oneDNN relu post-op with that alpha (x > 0 ? x : alpha x,
// the same at 0 and for NaN). The alpha, or nullopt for another form.
std::optional<float> leaky_relu_alpha(const Graph& graph, const std::vector<const Node*>& nodes, ValueId current) {
  if (nodes.size() < 3) return std::nullopt;
  const Node* less = nodes[0];
  const Node* mul = nodes[1];
  if (less->op != "Less") std::swap(less, mul);
  const Node& where = *nodes[2];
  const bool less_than_zero = less->op == "Less" && less->domain.empty() && less->inputs.size() == 2 &&
                              less->outputs.size() == 1 && less->inputs[0] == current &&
                              uniform_constant(graph, less->inputs[1]) == 0.f;
  if (!less_than_zero || mul->op != "Mul" || !mul->domain.empty() || mul->inputs.size() != 2 ||
      mul->outputs.size() != 1) {
    return std::nullopt;
  }
  const ValueId slope = mul->inputs[0] == current ? mul->inputs[1] : mul->inputs[0];
  const std::optional<float> alpha = uniform_constant(graph, slope);
  if (!alpha || graph.type(slope).rank() > graph.type(current).rank() || where.op != "Where" ||
      !where.domain.empty() || where.inputs != std::vector<ValueId>{less->outputs[0], mul->outputs[0], current} ||
      where.outputs.size() != 1 || graph.type(mul->outputs[0]) != graph.type(current)) {
    return std::nullopt;
  }
  return alpha;
}

// GELU, 0.5 x (1 + erf(x / sqrt 2)) or 0.5 x (1 + tanh(sqrt(2 / pi) (x +
// 0.044715 x^3))), is written many ways (fission's Gelu rule, PyTorch's
// exports: Div or Mul by the root, the halving first or last, x^3 as a Pow
// or two Muls), so the chain is recognized by what it computes: nodes[0..k)
// that read only `current`, earlier outputs of the chain and scalar
// constants, with arithmetic (Add, Sub, Mul, Div, Pow by 3) and exactly one
// Erf or Tanh, each output but the last read inside the chain, whose last
// output equals the formula at sample points from -6 to 6 to 1e-6
// (relative). Such a chain is a fixed rational expression of x and one
// erf/tanh of a rational expression of x; agreeing at 16 points it is that
// formula up to the rounding of its constants. One oneDNN gelu_erf or
// gelu_tanh post-op computes it; its erf is an approximation within 1.5e-7
// (absolute), as ONNX Runtime's Gelu kernels use.
std::optional<std::pair<dnnl::algorithm, size_t>> gelu_chain(const Graph& graph, const std::vector<const Node*>& nodes,
                                                            ValueId current) {
  static const std::vector<double> xs = {-6.0, -4.1, -3.0, -2.2, -1.5, -1.0, -0.6, -0.25,
                                         0.0,  0.1,  0.37, 0.8,  1.3,  2.0,  3.1,  5.7};
  std::map<ValueId, std::vector<double>> values = {{current, xs}};
  std::map<ValueId, size_t> reads;  // chain values read by chain nodes
  size_t transcendentals = 0;
  std::optional<dnnl::algorithm> kind;
  for (size_t k = 0; k < nodes.size(); ++k) {
    const Node& node = *nodes[k];
    static const std::set<std::string> arithmetic = {"Add", "Sub", "Mul", "Div", "Pow", "Erf", "Tanh"};
    if (!node.domain.empty() || !arithmetic.count(node.op) || node.outputs.size() != 1) return std::nullopt;
    if (graph.type(node.outputs[0]) != graph.type(current)) return std::nullopt;
    std::vector<std::vector<double>> operands;
    for (ValueId in : node.inputs) {
      if (const auto it = values.find(in); it != values.end()) {
        operands.push_back(it->second);
        ++reads[in];
      } else if (const std::optional<float> c = uniform_constant(graph, in)) {
        if (graph.type(in).rank() > graph.type(current).rank()) return std::nullopt;
        operands.push_back(std::vector<double>(xs.size(), double(*c)));
      } else {
        return std::nullopt;
      }
    }
    const bool unary = node.op == "Erf" || node.op == "Tanh";
    if (operands.size() != (unary ? 1u : 2u)) return std::nullopt;
    if (unary) {
      if (++transcendentals > 1) return std::nullopt;
      kind = node.op == "Erf" ? algorithm::eltwise_gelu_erf : algorithm::eltwise_gelu_tanh;
    }
    if (node.op == "Pow" && uniform_constant(graph, node.inputs[1]) != 3.f) return std::nullopt;
    std::vector<double> out(xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const double a = operands[0][i], b = unary ? 0.0 : operands[1][i];
      out[i] = node.op == "Add" ? a + b : node.op == "Sub" ? a - b : node.op == "Mul" ? a * b
               : node.op == "Div" ? a / b : node.op == "Pow" ? a * a * a : node.op == "Erf" ? std::erf(a) : std::tanh(a);
    }
    values[node.outputs[0]] = out;
    if (!kind || k < 4) continue;
    bool all_read = true;
    for (size_t j = 0; j < k; ++j) all_read = all_read && reads.count(nodes[j]->outputs[0]);
    bool equal = all_read;
    for (size_t i = 0; equal && i < xs.size(); ++i) {
      const double x = xs[i];
      const double inner = *kind == algorithm::eltwise_gelu_erf ? std::erf(x / std::sqrt(2.0))
                                                                 : std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x));
      const double gelu = 0.5 * x * (1.0 + inner);
      equal = std::fabs(out[i] - gelu) <= 1e-6 * std::max(1.0, std::fabs(gelu));
    }
    if (equal) return std::pair(*kind, k + 1);
  }
  return std::nullopt;
}

// An activation fission writes as several nodes, starting at nodes[0] and
// reading `current`: its one post-op and how many nodes it takes.
std::optional<std::pair<Epilogue, size_t>> activation_pattern(const Graph& graph, const std::vector<const Node*>& nodes,
                                                              ValueId current) {
  const auto post_op = [](dnnl::algorithm alg, float alpha, size_t count) {
    return std::pair(Epilogue{EpilogueKind::Eltwise, alg, alpha, 0.f, {}, {}, kNoValue}, count);
  };
  if (nodes.size() >= 2 && is_swish_pair(*nodes[0], *nodes[1], current)) {
    return post_op(dnnl::algorithm::eltwise_swish, 1.f, 2);
  }
  if (is_mish(graph, nodes, current)) return post_op(dnnl::algorithm::eltwise_mish, 0.f, 9);
  if (const auto gelu = gelu_chain(graph, nodes, current)) return post_op(gelu->first, 0.f, gelu->second);
  if (std::optional<float> alpha = leaky_relu_alpha(graph, nodes, current)) {
    return post_op(dnnl::algorithm::eltwise_relu, *alpha, 3);
  }
  if (is_hard_swish(graph, nodes, current)) return post_op(dnnl::algorithm::eltwise_hardswish, 0.f, 5);
  return std::nullopt;
}

// A MatMul's second operand computed by `transpose` (a prologue): the
// anchor reads the Transpose's input, a non-constant float32 value, with
// its row-major strides permuted; false for another form.
bool read_through_transpose(const Graph& graph, const Node& transpose, const Node& matmul, LinearAnchor& anchor) {
  if (anchor.kind != LinearKind::MatMul || !transpose.domain.empty() || transpose.inputs.size() != 1 ||
      transpose.outputs.size() != 1 || matmul.inputs[1] != transpose.outputs[0] || matmul.inputs[0] == matmul.inputs[1]) {
    return false;
  }
  const ValueId source = transpose.inputs[0];
  if (!is_f32(graph, source) || graph.value(source).is_constant()) return false;
  const std::optional<std::vector<int64_t>> strides = transpose_read_strides(graph, transpose);
  const size_t rank = anchor.weights.size();
  if (!strides || strides->size() > rank) return false;
  // The MatMul's operand has rank strides->size(), padded with leading 1s to `rank`.
  std::copy(strides->begin(), strides->end(), anchor.weights_strides.end() - int64_t(strides->size()));
  anchor.w = source;
  return true;
}

// Whether one of the group's first `count` nodes computes `value` (a binary
// post-op reads a tensor from outside the kernel only).
bool computed_before(const Graph& graph, const KernelGroup& group, size_t count, ValueId value) {
  if (value == kNoValue) return false;
  for (size_t i = 0; i < count; ++i) {
    const std::vector<ValueId>& outputs = graph.nodes().at(group.nodes[i]).outputs;
    if (std::find(outputs.begin(), outputs.end(), value) != outputs.end()) return true;
  }
  return false;
}

}  // namespace

std::optional<LinearSpec> analyze_group(const Graph& graph, const KernelGroup& group) {
  if (group.nodes.empty()) return std::nullopt;
  const size_t first = graph.nodes().at(group.nodes[0]).op == "Transpose" ? 1 : 0;  // a prologue
  if (group.nodes.size() <= first) return std::nullopt;
  const Node& anchor_node = graph.nodes().at(group.nodes[first]);
  std::optional<LinearAnchor> anchor = analyze_anchor(graph, anchor_node);
  if (!anchor) return std::nullopt;
  if (first == 1 && !read_through_transpose(graph, graph.nodes().at(group.nodes[0]), anchor_node, *anchor)) {
    return std::nullopt;
  }
  LinearSpec spec{*anchor, {}, {}};
  ValueId current = anchor_node.outputs[0];
  bool bias_allowed = true;
  for (size_t i = first + 1; i < group.nodes.size(); ++i) {
    const Node& node = graph.nodes().at(group.nodes[i]);
    std::vector<const Node*> rest;
    for (size_t j = i; j < std::min(group.nodes.size(), i + 12); ++j) rest.push_back(&graph.nodes().at(group.nodes[j]));
    if (std::optional<std::pair<Epilogue, size_t>> activation = activation_pattern(graph, rest, current)) {
      if (!append_epilogue(spec.epilogues, std::move(activation->first))) return std::nullopt;
      bias_allowed = false;
      i += activation->second - 1;
      current = rest[activation->second - 1]->outputs[0];
      continue;
    }
    std::optional<Epilogue> epilogue = analyze_epilogue(graph, spec.anchor, current, node, bias_allowed);
    if (!epilogue || computed_before(graph, group, i, epilogue->tensor)) return std::nullopt;
    bias_allowed = bias_allowed && epilogue->kind == EpilogueKind::Bias;
    if (!append_epilogue(spec.epilogues, std::move(*epilogue))) return std::nullopt;
    current = node.outputs[0];
  }
  if (group.outputs != std::vector<ValueId>{current}) return std::nullopt;
  spec.out_type = graph.type(current);
  return spec;
}

LinearBias::LinearBias(const Graph& graph, const KernelGroup& group, const LinearSpec& spec) {
  const LinearAnchor& a = spec.anchor;
  present_ = a.b != kNoValue;
  constant_.assign(size_t(std::max<int64_t>(a.channels, 1)), 0.f);
  if (a.b != kNoValue && graph.value(a.b).is_constant()) {
    const std::vector<float> b = constant_values(*graph.value(a.b).constant);
    for (size_t c = 0; c < b.size(); ++c) constant_[c] += b[c];
  } else if (a.b != kNoValue) {
    input_ = int(input_slot(group, a.b));
  }
  for (const Epilogue& e : spec.epilogues) {
    if (e.kind != EpilogueKind::Bias) continue;
    present_ = true;
    for (size_t c = 0; c < e.values.size(); ++c) constant_[c] += e.values[c];
  }
  values_ = constant_;
}

void LinearBias::bind(const KernelArgs& args) {
  if (input_ < 0) return;
  const float* b = static_cast<const float*>(args.inputs[size_t(input_)]);
  for (size_t c = 0; c < values_.size(); ++c) values_[c] = constant_[c] + b[c];
}

bool is_f32(const Graph& graph, ValueId id) { return id != kNoValue && graph.type(id).dtype == DType::Float32; }

std::optional<float> uniform_constant(const Graph& graph, ValueId id) {
  if (id == kNoValue || !graph.value(id).is_constant()) return std::nullopt;
  const std::vector<float> values = constant_values(*graph.value(id).constant);
  if (values.empty() || std::any_of(values.begin(), values.end(), [&](float x) { return !(x == values[0]); })) {
    return std::nullopt;
  }
  return values[0];
}

std::vector<float> constant_values(const Tensor& t) {
  std::vector<float> v(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[size_t(i)] = float(t.at_f64(i));
  return v;
}

}  // namespace orchid::runtime::cpu::onednn
