// Attribute handling of RNN, GRU and LSTM (see recurrent_attrs.h).
#include "reference/ops/recurrent_attrs.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "reference/ops/extra_utils.h"
#include "support/error.h"

namespace orchid::reference {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Activation names, how many of alpha/beta each takes, and their ONNX defaults.
struct ActivationInfo {
  const char* name;
  int takes;  // 0: none, 1: alpha, 2: alpha and beta
  double alpha, beta;
};
constexpr ActivationInfo kActivations[] = {
    {"sigmoid", 0, 0, 0},       {"tanh", 0, 0, 0},           {"relu", 0, 0, 0},
    {"softsign", 0, 0, 0},      {"softplus", 0, 0, 0},       {"affine", 2, 1.0, 0.0},
    {"leakyrelu", 1, 0.01, 0},  {"thresholdedrelu", 1, 1.0, 0}, {"scaledtanh", 2, 1.0, 1.0},
    {"hardsigmoid", 2, 0.2, 0.5}, {"elu", 1, 1.0, 0},
};

}  // namespace

int64_t recurrent_num_gates(RecurrentCell cell) {
  return cell == RecurrentCell::Rnn ? 1 : cell == RecurrentCell::Gru ? 3 : 4;
}

size_t recurrent_num_activations(RecurrentCell cell) {
  return cell == RecurrentCell::Rnn ? 1 : cell == RecurrentCell::Gru ? 2 : 3;
}

double RecurrentActivation::operator()(double x) const {
  if (name == "sigmoid") return 1 / (1 + std::exp(-x));
  if (name == "tanh") return std::tanh(x);
  if (name == "relu") return std::max(x, 0.0);
  if (name == "affine") return alpha * x + beta;
  if (name == "leakyrelu") return x >= 0 ? x : alpha * x;
  if (name == "thresholdedrelu") return x > alpha ? x : 0;
  if (name == "scaledtanh") return alpha * std::tanh(beta * x);
  if (name == "hardsigmoid") return std::clamp(alpha * x + beta, 0.0, 1.0);
  if (name == "elu") return x >= 0 ? x : alpha * (std::exp(x) - 1);
  if (name == "softsign") return x / (1 + std::abs(x));
  if (name == "softplus") return std::log1p(std::exp(-std::abs(x))) + std::max(x, 0.0);
  ORCHID_CHECK(false) << "unchecked activation " << name;
  return 0;
}

RecurrentConfig parse_recurrent_config(const Attributes& attrs, RecurrentCell cell, int64_t r_hidden) {
  RecurrentConfig cfg;
  cfg.cell = cell;
  std::string direction = extra::string_choice(attrs, "direction", "forward", {"forward", "reverse", "bidirectional"});
  cfg.dirs = direction == "bidirectional" ? 2 : 1;
  cfg.reverse_only = direction == "reverse";
  cfg.layout = attrs.get_int("layout", 0);
  if (cfg.layout != 0 && cfg.layout != 1) ORCHID_FAIL() << "attribute 'layout' must be 0 or 1, got " << cfg.layout;
  cfg.hidden = attrs.has("hidden_size") ? attrs.get_int("hidden_size", 0) : r_hidden;
  if (cfg.hidden <= 0) ORCHID_FAIL() << "attribute 'hidden_size' must be positive, got " << cfg.hidden;
  cfg.has_clip = attrs.has("clip");
  cfg.clip = attrs.get_float("clip", 0);
  if (cfg.has_clip && !(cfg.clip > 0)) ORCHID_FAIL() << "attribute 'clip' must be positive, got " << cfg.clip;
  cfg.linear_before_reset = attrs.get_int("linear_before_reset", 0) != 0;
  cfg.input_forget = attrs.get_int("input_forget", 0) != 0;

  size_t per_dir = recurrent_num_activations(cell);
  std::vector<std::string> names = attrs.get_strings("activations");
  if (names.empty()) {
    names = cell == RecurrentCell::Rnn   ? std::vector<std::string>{"tanh"}
            : cell == RecurrentCell::Gru ? std::vector<std::string>{"sigmoid", "tanh"}
                                         : std::vector<std::string>{"sigmoid", "tanh", "tanh"};
  }
  if (names.size() == per_dir && cfg.dirs == 2) {
    std::vector<std::string> forward = names;  // the same functions for both directions
    names.insert(names.end(), forward.begin(), forward.end());
  } else if (names.size() != per_dir * size_t(cfg.dirs)) {
    ORCHID_FAIL() << "attribute 'activations' must list " << per_dir * size_t(cfg.dirs) << " functions, got "
                  << names.size();
  }
  std::vector<double> alphas = attrs.get_floats("activation_alpha");
  std::vector<double> betas = attrs.get_floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  cfg.activations.resize(size_t(cfg.dirs));
  for (size_t i = 0; i < names.size(); ++i) {
    RecurrentActivation act;
    act.name = lower(names[i]);
    const ActivationInfo* info = nullptr;
    for (const auto& candidate : kActivations) {
      if (act.name == candidate.name) info = &candidate;
    }
    if (!info) ORCHID_FAIL() << "unsupported activation function '" << names[i] << "'";
    act.alpha = info->alpha;
    act.beta = info->beta;
    if (info->takes >= 1 && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (info->takes >= 2 && next_beta < betas.size()) act.beta = betas[next_beta++];
    cfg.activations[i / per_dir].push_back(act);
  }
  return cfg;
}

}  // namespace orchid::reference
