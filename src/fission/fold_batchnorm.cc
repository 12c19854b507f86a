#include "fission/fold_batchnorm.h"

#include <cmath>
#include <optional>

#include "ir/graph_utils.h"

namespace orchid::fission {

namespace {

// The BatchNormalization as a per-channel affine map y = x * scale + shift,
// computed in double; nullopt when it is not a foldable inference BN.
struct ChannelAffine {
  std::vector<double> scale, shift;
};

std::optional<ChannelAffine> batch_norm_affine(const Graph& graph, const Node& bn) {
  if (bn.attrs.get_int("training_mode", 0) != 0 || bn.attrs.get_int("spatial", 1) == 0) return std::nullopt;
  for (size_t i = 1; i < bn.outputs.size(); ++i) {
    if (bn.outputs[i] != kNoValue) return std::nullopt;
  }
  std::vector<std::vector<double>> p;
  for (size_t i = 1; i <= 4; ++i) {
    const Tensor* t = constant_input(graph, bn, i);
    if (!t || !is_float(t->dtype())) return std::nullopt;
    p.push_back(t->to_f64_vector());
  }
  double epsilon = bn.attrs.get_float("epsilon", 1e-5);
  ChannelAffine a;
  for (size_t c = 0; c < p[0].size(); ++c) {
    double s = p[0][c] / std::sqrt(p[3][c] + epsilon);
    a.scale.push_back(s);
    a.shift.push_back(p[1][c] - p[2][c] * s);
  }
  return a;
}

// The output channel that weight element i scales: Conv W [M, C/g, k...]
// has it on axis 0; ConvTranspose W [C, M/g, k...] has channel
// (c / (C/g)) * (M/g) + j for element (c, j, ...).
int64_t output_channel(const Node& conv, const Shape& w, int64_t i) {
  int64_t kernel = 1;
  for (size_t d = 2; d < w.size(); ++d) kernel *= w[d];
  int64_t row = i / kernel;  // (w0, w1) flattened
  if (conv.op == "Conv") return row / w[1];
  int64_t groups = conv.attrs.get_int("group", 1);
  int64_t c = row / w[1], j = row % w[1];
  return (c / (w[0] / groups)) * w[1] + j;
}

// Rewrites `conv` in place to compute BN(conv(x)) and write `bn_output`.
void fold(Graph& graph, Node& conv, const ChannelAffine& a, ValueId bn_output) {
  const Tensor& w = *constant_input(graph, conv, 1);
  Tensor new_w(w.dtype(), w.shape());
  for (int64_t i = 0; i < w.numel(); ++i) {
    new_w.set_f64(i, w.at_f64(i) * a.scale[size_t(output_channel(conv, w.shape(), i))]);
  }
  const Tensor* bias = constant_input(graph, conv, 2);
  int64_t channels = int64_t(a.scale.size());
  Tensor new_b(w.dtype(), {channels});
  for (int64_t c = 0; c < channels; ++c) {
    double b = bias ? bias->at_f64(c) : 0.0;
    new_b.set_f64(c, b * a.scale[size_t(c)] + a.shift[size_t(c)]);
  }
  ValueId w_id = graph.add_constant(conv.name + "/bn_folded_W", std::move(new_w));
  ValueId b_id = graph.add_constant(conv.name + "/bn_folded_B", std::move(new_b));
  conv.inputs.resize(3, kNoValue);
  conv.inputs[1] = w_id;
  conv.inputs[2] = b_id;
  conv.outputs = {bn_output};
}

bool foldable_conv(const Graph& graph, const Node& conv, const std::vector<int>& uses) {
  if ((conv.op != "Conv" && conv.op != "ConvTranspose") || !conv.domain.empty()) return false;
  if (conv.outputs.size() != 1 || uses[size_t(conv.outputs[0])] != 1) return false;
  const Tensor* w = constant_input(graph, conv, 1);
  if (!w || !is_float(w->dtype()) || w->rank() < 3) return false;
  bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != kNoValue;
  return !has_bias || constant_input(graph, conv, 2);
}

}  // namespace

Graph fold_batchnorm_into_conv(const Graph& graph) {
  Graph out = graph;
  std::vector<int> uses = use_counts(graph);
  std::vector<size_t> producer = producer_nodes(graph);
  std::vector<bool> drop(graph.nodes().size(), false);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& bn = graph.nodes()[n];
    if (bn.op != "BatchNormalization" || !bn.domain.empty()) continue;
    size_t p = producer[size_t(bn.inputs[0])];
    if (p == kNoNode || !foldable_conv(graph, graph.nodes()[p], uses)) continue;
    std::optional<ChannelAffine> affine = batch_norm_affine(graph, bn);
    if (!affine) continue;
    fold(out, out.nodes()[p], *affine, bn.outputs[0]);
    drop[n] = true;
  }
  std::vector<Node> kept;
  for (size_t n = 0; n < out.nodes().size(); ++n) {
    if (!drop[n]) kept.push_back(std::move(out.nodes()[n]));
  }
  out.nodes() = std::move(kept);
  return remove_unused_values(out);
}

}  // namespace orchid::fission
