// Attribute handling shared by the recurrent layers RNN, GRU and LSTM: the
// reference operators (recurrent.cc) and their fission rule
// (src/fission/sequence_rules.cc) read the attributes through this one copy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace orchid::reference {

enum class RecurrentCell { Rnn, Gru, Lstm };

int64_t recurrent_num_gates(RecurrentCell cell);
size_t recurrent_num_activations(RecurrentCell cell);

struct RecurrentActivation {
  std::string name;  // lower case
  double alpha = 0;
  double beta = 0;

  double operator()(double x) const;
};

struct RecurrentConfig {
  RecurrentCell cell = RecurrentCell::Rnn;
  int64_t hidden = 0;
  int64_t dirs = 1;
  bool reverse_only = false;  // direction == "reverse"
  int64_t layout = 0;
  bool has_clip = false;
  double clip = 0;
  bool linear_before_reset = false;
  bool input_forget = false;
  std::vector<std::vector<RecurrentActivation>> activations;  // per direction
};

// Parses and checks the attributes. `r_hidden` is R's last dimension (0 when
// R is not of rank 3), the hidden size when `hidden_size` is absent.
// `activations` lists f (RNN), f, g (GRU) or f, g, h (LSTM) per direction;
// `activation_alpha`/`activation_beta` are consumed in order by the functions
// that take them (ONNX defaults when the lists run out).
RecurrentConfig parse_recurrent_config(const Attributes& attrs, RecurrentCell cell, int64_t r_hidden);

}  // namespace orchid::reference
