// Fission of the loss functions NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss (semantics: src/reference/ops/loss.cc).
//
// Picking input[n, target[n, d], d] is a data-dependent gather along the class
// axis. Instead of GatherElements (opaque), a one-hot mask
// Equal(target, iota over classes) selects the class with Where and a
// ReduceSum over the class axis collects it: all primitives, and exact (the
// sum has one non-zero term; Where, unlike a Mul by the mask, keeps an -inf
// log-probability of another class from turning into NaN).
#include <optional>

#include "fission/rules.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

struct LossConfig {
  std::string reduction;
  std::optional<int64_t> ignore_index;
};

LossConfig loss_config(const Node& node) {
  LossConfig c;
  c.reduction = node.attrs.get_string("reduction", "mean");
  if (c.reduction != "none" && c.reduction != "sum" && c.reduction != "mean") {
    throw Error(node.describe() + ": attribute 'reduction' must be none, sum or mean, got '" + c.reduction + "'");
  }
  if (node.attrs.has("ignore_index")) c.ignore_index = node.attrs.get_int("ignore_index", 0);
  return c;
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = i;
  return v;
}

// Inserts a unit dimension at axis 1: [N, d...] -> [N, 1, d...].
ValueId unsqueeze_class_axis(FissionBuilder& b, ValueId x) {
  Shape shape = b.shape(x);
  shape.insert(shape.begin() + 1, 1);
  return b.reshape(x, shape);
}

// A per-class vector [C] shaped to broadcast against [N, C, d...].
ValueId class_vector(FissionBuilder& b, ValueId v, size_t rank) {
  Shape shape(rank, 1);
  shape[1] = b.shape(v)[0];
  return b.reshape(v, shape);
}

// The loss from log-probabilities `logp` [N, C, d...], targets [N, d...] and
// optional class weights [C], reduced as `config` says.
ValueId nll_from_log_prob(FissionBuilder& b, ValueId logp, ValueId target, ValueId weight, const LossConfig& config) {
  const Shape& x_shape = b.shape(logp);
  DType dtype = b.dtype(logp);
  DType target_dtype = b.dtype(target);
  size_t rank = x_shape.size();
  ValueId classes = class_vector(b, b.cast(b.ints(iota(x_shape[1])), target_dtype), rank);
  ValueId one_hot = b.binary("Equal", unsqueeze_class_axis(b, target), classes);  // [N, C, d...]
  // Positions whose target is ignore_index contribute nothing, and no weight.
  ValueId valid = kNoValue;  // [N, d...]
  if (config.ignore_index) {
    ValueId ignored = b.binary("Equal", target, b.scalar(double(*config.ignore_index), target_dtype));
    valid = b.unary("Not", ignored);
    one_hot = b.binary("And", one_hot, unsqueeze_class_axis(b, valid));
  }
  ValueId zero = b.scalar(0, dtype);
  ValueId picked = b.reduce("ReduceSum", b.add1("Where", {one_hot, logp, zero}), {1}, false);
  ValueId position_weight = kNoValue;  // [N, d...]; kNoValue means all ones
  if (weight != kNoValue) {
    ValueId w = class_vector(b, weight, rank);
    position_weight = b.reduce("ReduceSum", b.add1("Where", {one_hot, w, zero}), {1}, false);
  } else if (valid != kNoValue) {
    position_weight = b.cast(valid, dtype);
  }
  ValueId loss = b.unary("Neg", picked);
  if (weight != kNoValue) loss = b.binary("Mul", loss, position_weight);
  if (config.reduction == "none") return loss;
  std::vector<int64_t> all_axes = iota(int64_t(rank - 1));
  ValueId sum = b.reduce("ReduceSum", loss, all_axes, false);
  if (config.reduction == "sum") return sum;
  // mean: divide by the total weight of the non-ignored positions (NaN when
  // every position is ignored, like the reference).
  ValueId total = position_weight != kNoValue
                      ? b.reduce("ReduceSum", position_weight, all_axes, false)
                      : b.scalar(double(shape_numel(b.shape(target))), dtype);
  return b.binary("Div", sum, total);
}

ValueId optional_input(const Node& node, size_t i) { return i < node.inputs.size() ? node.inputs[i] : kNoValue; }

std::vector<ValueId> nll_rule(const Node& node, FissionBuilder& b) {
  return {nll_from_log_prob(b, node.inputs[0], node.inputs[1], optional_input(node, 2), loss_config(node))};
}

// log_softmax along axis 1, numerically safe: (x - max) - log(sum(exp(x - max))).
ValueId log_softmax_axis1(FissionBuilder& b, ValueId x) {
  ValueId shifted = b.binary("Sub", x, b.reduce("ReduceMax", x, {1}, true));
  ValueId sum = b.reduce("ReduceSum", b.unary("Exp", shifted), {1}, true);
  return b.binary("Sub", shifted, b.unary("Log", sum));
}

std::vector<ValueId> sce_rule(const Node& node, FissionBuilder& b) {
  ValueId logp = log_softmax_axis1(b, node.inputs[0]);
  ValueId loss = nll_from_log_prob(b, logp, node.inputs[1], optional_input(node, 2), loss_config(node));
  bool want_log_prob = node.outputs.size() > 1 && node.outputs[1] != kNoValue;
  return {loss, want_log_prob ? logp : kNoValue};
}

}  // namespace

void add_loss_rules(FissionRuleTable& table) {
  table.add("NegativeLogLikelihoodLoss", nll_rule);
  table.add("SoftmaxCrossEntropyLoss", sce_rule);
}

}  // namespace orchid::fission
