// Loss functions computed at inference: NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss (opset 13 semantics; opset 12 is identical).
//
// Both gather, for every sample position (n, d1..dk), the input at the
// target class: loss = -input[n, target, d...] * weight[target]. A position
// whose target equals ignore_index contributes 0 and has weight 0.
// reduction: "none" keeps the [N, d1..dk] losses; "sum" adds them; "mean"
// divides the sum by the sum of the weights of the non-ignored positions (the
// count of such positions without a weight input), which is NaN when every
// position is ignored, like the ONNX reference.
#include <algorithm>
#include <cmath>
#include <optional>

#include "reference/ops/extra_utils.h"
#include "reference/ops/op_utils.h"
#include "reference/ops/ops.h"

namespace orchid::reference {
namespace {

using extra::f64;

struct LossAttrs {
  std::string reduction;
  std::optional<int64_t> ignore_index;
};

LossAttrs loss_attrs(const Attributes& attrs) {
  LossAttrs a;
  a.reduction = extra::string_choice(attrs, "reduction", "mean", {"none", "sum", "mean"});
  if (attrs.has("ignore_index")) a.ignore_index = attrs.get_int("ignore_index", 0);
  return a;
}

// Checks input (scores) [N, C, d...], target [N, d...] and weight [C]; returns
// the loss output type.
TensorType infer_loss(const InferContext& ctx, const char* input_name) {
  const TensorType& x = ctx.input(0);
  const TensorType& t = ctx.input(1);
  require_dtype(x.dtype, TypeClass::Float, 0, input_name);
  if (t.dtype != DType::Int32 && t.dtype != DType::Int64) {
    ORCHID_FAIL() << "expected an int32 or int64 tensor for input 1 (target), got " << dtype_name(t.dtype);
  }
  if (x.rank() < 2) {
    ORCHID_FAIL() << "input 0 (" << input_name << ") must have shape [N, C, d1, ...], got "
                  << shape_to_string(x.shape);
  }
  Shape expected_target{x.shape[0]};
  expected_target.insert(expected_target.end(), x.shape.begin() + 2, x.shape.end());
  if (t.shape != expected_target) {
    ORCHID_FAIL() << "input 1 (target) must have shape " << shape_to_string(expected_target) << " for input 0 of shape "
                  << shape_to_string(x.shape) << ", got " << shape_to_string(t.shape);
  }
  if (ctx.has_input(2)) {
    const TensorType& w = ctx.input(2);
    if (w.dtype != x.dtype) {
      ORCHID_FAIL() << "input 2 (weight) must have the dtype of input 0, " << dtype_name(x.dtype) << ", got "
                    << dtype_name(w.dtype);
    }
    if (w.shape != Shape{x.shape[1]}) {
      ORCHID_FAIL() << "input 2 (weight) must have shape [" << x.shape[1] << "], got " << shape_to_string(w.shape);
    }
  }
  LossAttrs attrs = loss_attrs(ctx.attrs());
  return TensorType{x.dtype, attrs.reduction == "none" ? t.shape : Shape{}};
}

// The loss from log-probabilities `logp` laid out as [N, C, D] (D = product of
// the trailing dimensions), targets [N, D] and optional class weights.
std::vector<double> nll(const std::vector<double>& logp, int64_t n, int64_t c, int64_t d, const Tensor& target,
                        const Tensor* weight, const LossAttrs& attrs) {
  std::vector<double> w = weight ? f64(*weight) : std::vector<double>();
  std::vector<double> losses(size_t(n * d), 0.0);
  double weight_sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) {
      int64_t pos = i * d + j;
      int64_t cls = target.at_i64(pos);
      if (attrs.ignore_index && cls == *attrs.ignore_index) continue;
      if (cls < 0 || cls >= c) {
        ORCHID_FAIL() << "target value " << cls << " at position " << pos << " is out of range [0, " << c << ")";
      }
      double wt = weight ? w[size_t(cls)] : 1.0;
      losses[size_t(pos)] = -logp[size_t((i * c + cls) * d + j)] * wt;
      weight_sum += wt;
    }
  }
  if (attrs.reduction == "none") return losses;
  double sum = 0;
  for (double l : losses) sum += l;
  if (attrs.reduction == "sum") return {sum};
  return {sum / weight_sum};
}

int64_t trailing(const Shape& shape) {
  int64_t d = 1;
  for (size_t i = 2; i < shape.size(); ++i) d *= shape[i];
  return d;
}

OpSchema nll_schema() {
  OpSchema s;
  s.op = "NegativeLogLikelihoodLoss";
  s.min_inputs = 2;
  s.max_inputs = 3;
  s.infer = [](const InferContext& ctx) { return std::vector<TensorType>{infer_loss(ctx, "input")}; };
  s.eval = [](const EvalContext& ctx) {
    const Tensor& x = ctx.input(0);
    std::vector<double> loss = nll(f64(x), x.dim(0), x.dim(1), trailing(x.shape()), ctx.input(1),
                                   ctx.has_input(2) ? ctx.inputs[2] : nullptr, loss_attrs(ctx.attrs()));
    return std::vector<Tensor>{extra::make_tensor(ctx.output_types[0], loss)};
  };
  return s;
}

// SoftmaxCrossEntropyLoss(scores, labels, weights?) -> (output, log_prob?):
// log_prob = log_softmax(scores) along axis 1, then the NLL loss above.
OpSchema sce_schema() {
  OpSchema s;
  s.op = "SoftmaxCrossEntropyLoss";
  s.min_inputs = 2;
  s.max_inputs = 3;
  s.infer = [](const InferContext& ctx) {
    TensorType loss = infer_loss(ctx, "scores");
    return std::vector<TensorType>{loss, ctx.input(0)};
  };
  s.eval = [](const EvalContext& ctx) {
    const Tensor& x = ctx.input(0);
    int64_t n = x.dim(0), c = x.dim(1), d = trailing(x.shape());
    std::vector<double> v = f64(x);
    std::vector<double> logp(v.size());
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < d; ++j) {
        auto at = [&](int64_t k) { return size_t((i * c + k) * d + j); };
        double mx = -INFINITY;
        for (int64_t k = 0; k < c; ++k) mx = std::max(mx, v[at(k)]);
        double sum = 0;
        for (int64_t k = 0; k < c; ++k) sum += std::exp(v[at(k)] - mx);
        double lse = mx + std::log(sum);
        for (int64_t k = 0; k < c; ++k) logp[at(k)] = v[at(k)] - lse;
      }
    }
    std::vector<double> loss =
        nll(logp, n, c, d, ctx.input(1), ctx.has_input(2) ? ctx.inputs[2] : nullptr, loss_attrs(ctx.attrs()));
    return std::vector<Tensor>{extra::make_tensor(ctx.output_types[0], loss),
                               extra::make_tensor(ctx.output_types[1], logp)};
  };
  return s;
}

}  // namespace

void register_loss_ops(OpRegistry& registry) {
  registry.add(nll_schema());
  registry.add(sce_schema());
}

}  // namespace orchid::reference
