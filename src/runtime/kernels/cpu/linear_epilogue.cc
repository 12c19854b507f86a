#include "runtime/kernels/cpu/linear_epilogue.h"

#include <algorithm>
#include <cmath>

#include "runtime/kernels/cpu/elementwise_math.h"
#include "runtime/kernels/cpu/simd_math.h"
#include "support/error.h"

namespace orchid::runtime::cpu {

namespace {

using dnnl::algorithm;
using onednn::Epilogue;
using onednn::EpilogueKind;

bool supported_binary(algorithm alg) {
  switch (alg) {
    case algorithm::binary_add:
    case algorithm::binary_mul:
    case algorithm::binary_max:
    case algorithm::binary_min:
    case algorithm::binary_sub:
    case algorithm::binary_div:
      return true;
    default:
      return false;
  }
}

// y[i] = y[i] op t(i) for t(i) = at(i): a tensor's element or a constant.
template <typename Operand>
void apply_binary(algorithm alg, float* y, int64_t n, Operand at) {
  switch (alg) {
    case algorithm::binary_add:
      for (int64_t i = 0; i < n; ++i) y[i] += at(i);
      break;
    case algorithm::binary_mul:
      for (int64_t i = 0; i < n; ++i) y[i] *= at(i);
      break;
    case algorithm::binary_max:
      for (int64_t i = 0; i < n; ++i) y[i] = std::max(y[i], at(i));
      break;
    case algorithm::binary_min:
      for (int64_t i = 0; i < n; ++i) y[i] = std::min(y[i], at(i));
      break;
    case algorithm::binary_sub:
      for (int64_t i = 0; i < n; ++i) y[i] -= at(i);
      break;
    case algorithm::binary_div:
      for (int64_t i = 0; i < n; ++i) y[i] /= at(i);
      break;
    default:
      ORCHID_FAIL() << "unsupported binary epilogue";
  }
}

}  // namespace

bool epilogue_supported(const Epilogue& e) {
  switch (e.kind) {
    case EpilogueKind::Bias:
      return true;
    case EpilogueKind::Binary:
      return supported_binary(e.algorithm);
    case EpilogueKind::Eltwise:
      break;
  }
  switch (e.algorithm) {
    case algorithm::eltwise_relu:
    case algorithm::eltwise_tanh:
    case algorithm::eltwise_logistic:
    case algorithm::eltwise_linear:
    case algorithm::eltwise_clip:
    case algorithm::eltwise_swish:
    case algorithm::eltwise_hardswish:
    case algorithm::eltwise_abs:
    case algorithm::eltwise_sqrt:
    case algorithm::eltwise_exp:
    case algorithm::eltwise_log:
    case algorithm::eltwise_elu:
    case algorithm::eltwise_pow:
    case algorithm::eltwise_gelu_erf:
    case algorithm::eltwise_gelu_tanh:
    case algorithm::eltwise_mish:
      return true;
    default:
      return false;
  }
}

void apply_eltwise(const Epilogue& e, float* y, int64_t n) {
  const float a = e.alpha, b = e.beta;
  switch (e.algorithm) {
    case algorithm::eltwise_relu:
      if (a == 0.f) {
        for (int64_t i = 0; i < n; ++i) y[i] = std::max(y[i], 0.f);
      } else {
        for (int64_t i = 0; i < n; ++i) y[i] = y[i] > 0.f ? y[i] : a * y[i];
      }
      break;
    case algorithm::eltwise_tanh:
      for (int64_t i = 0; i < n; ++i) y[i] = fast_math::tanh(y[i]);
      break;
    case algorithm::eltwise_logistic:
      simd::map(y, n, [](simd::Vec v) { return simd::sigmoid(v); }, fast_math::sigmoid);
      break;
    case algorithm::eltwise_linear:
      for (int64_t i = 0; i < n; ++i) y[i] = a * y[i] + b;
      break;
    case algorithm::eltwise_clip:
      for (int64_t i = 0; i < n; ++i) y[i] = std::min(b, std::max(a, y[i]));
      break;
    case algorithm::eltwise_swish:
      simd::map(y, n, [a](simd::Vec v) { return simd::swish(v, a); },
                [a](float v) { return v * fast_math::sigmoid(a * v); });
      break;
    case algorithm::eltwise_hardswish:  // as fission's nodes compute it
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] * std::min(std::max(y[i] / 6.f + 0.5f, 0.f), 1.f);
      break;
    case algorithm::eltwise_abs:
      for (int64_t i = 0; i < n; ++i) y[i] = std::fabs(y[i]);
      break;
    case algorithm::eltwise_sqrt:
      for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(y[i]);
      break;
    case algorithm::eltwise_exp:
      for (int64_t i = 0; i < n; ++i) y[i] = fast_math::exp(y[i]);
      break;
    case algorithm::eltwise_log:
      for (int64_t i = 0; i < n; ++i) y[i] = fast_math::log(y[i]);
      break;
    case algorithm::eltwise_elu:
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] > 0.f ? y[i] : a * (fast_math::exp(y[i]) - 1.f);
      break;
    case algorithm::eltwise_pow:
      for (int64_t i = 0; i < n; ++i) y[i] = a * std::pow(y[i], b);
      break;
    case algorithm::eltwise_gelu_erf:  // 0.5 x (1 + erf(x / sqrt 2)), as fission's nodes compute it
      for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * y[i] * (1.0f + fast_math::erf(y[i] * 0.70710678118654752f));
      break;
    case algorithm::eltwise_gelu_tanh:  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
      for (int64_t i = 0; i < n; ++i) {
        const float x = y[i];
        y[i] = 0.5f * x * (1.0f + fast_math::tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
      }
      break;
    case algorithm::eltwise_mish:
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] * fast_math::tanh_softplus(y[i]);
      break;
    default:
      ORCHID_FAIL() << "unsupported eltwise epilogue";
  }
}

LinearEpilogue::LinearEpilogue(const Graph& graph, const KernelGroup& group, const onednn::LinearSpec& spec)
    : bias_(graph, group, spec) {
  for (const Epilogue& e : spec.epilogues) {
    ORCHID_CHECK(epilogue_supported(e)) << "an epilogue the linear kernel cannot apply";
    if (e.kind == EpilogueKind::Bias) continue;  // in bias_
    Step step{e};
    if (e.kind == EpilogueKind::Binary && e.tensor != kNoValue) step.tensor_input = int(input_slot(group, e.tensor));
    tail_.push_back(std::move(step));
  }
}

void LinearEpilogue::bind(const KernelArgs& args) {
  bias_.bind(args);
  for (Step& step : tail_) {
    if (step.tensor_input >= 0) step.tensor = static_cast<const float*>(args.inputs[size_t(step.tensor_input)]);
  }
}

void LinearEpilogue::apply_run(float* y, int64_t offset, int64_t channel, int64_t n, bool columns) const {
  for (const Step& step : tail_) {
    const Epilogue& e = step.epilogue;
    if (e.kind == EpilogueKind::Eltwise) {
      apply_eltwise(e, y, n);
    } else if (step.tensor) {
      const float* t = step.tensor + offset;
      apply_binary(e.algorithm, y, n, [t](int64_t i) { return t[i]; });
    } else if (columns && e.values.size() > 1) {
      const float* v = e.values.data() + channel;
      apply_binary(e.algorithm, y, n, [v](int64_t i) { return v[i]; });
    } else {
      const float v = e.values.size() == 1 ? e.values[0] : e.values[size_t(channel)];
      apply_binary(e.algorithm, y, n, [v](int64_t) { return v; });
    }
  }
}

void LinearEpilogue::rebind_tensor(size_t input, const float* data) {
  for (Step& step : tail_) {
    if (step.tensor_input == int(input)) step.tensor = data;
  }
}

std::vector<size_t> LinearEpilogue::tensor_inputs() const {
  std::vector<size_t> inputs;
  for (const Step& step : tail_) {
    if (step.tensor_input >= 0 && std::find(inputs.begin(), inputs.end(), size_t(step.tensor_input)) == inputs.end()) {
      inputs.push_back(size_t(step.tensor_input));
    }
  }
  return inputs;
}

bool LinearEpilogue::without_channel_constants() const {
  return std::all_of(tail_.begin(), tail_.end(), [](const Step& s) {
    return s.epilogue.kind == EpilogueKind::Eltwise || s.tensor_input >= 0 || s.epilogue.values.size() == 1;
  });
}

bool LinearEpilogue::reads_input(size_t input) const {
  if (bias_.reads_input(input)) return true;
  return std::any_of(tail_.begin(), tail_.end(), [&](const Step& s) { return s.tensor_input == int(input); });
}

}  // namespace orchid::runtime::cpu
