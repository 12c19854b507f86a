// RNN, GRU and LSTM fission: unrolled over the static sequence into MatMuls,
// Slices of the fused gates and elementwise activations; sequence_lens masks
// with Where.
#include <gtest/gtest.h>

#include "fission_test_util.h"

namespace orchid::fission {
namespace {

using namespace testing;

struct RnnCase {
  std::string op = "LSTM";
  std::string direction = "forward";
  int64_t layout = 0;
  int64_t seq = 3, batch = 2, input = 4, hidden = 3;
  bool bias = true, initial = true, peephole = false, constant_weights = true;
  int lens = 0;  // 0: none, 1: constant (ragged), 2: graph input
  Attributes extra;
};

int64_t gates(const std::string& op) { return op == "RNN" ? 1 : op == "GRU" ? 3 : 4; }

Input weight(const RnnCase& c, Shape shape, uint32_t seed) {
  Tensor t = random_tensor(DType::Float32, shape, seed, -0.8, 0.8);
  return c.constant_weights ? cst(t) : var(shape);
}

Graph rnn_graph(const RnnCase& c) {
  int64_t dirs = c.direction == "bidirectional" ? 2 : 1, gh = gates(c.op) * c.hidden;
  Shape x = c.layout == 0 ? Shape{c.seq, c.batch, c.input} : Shape{c.batch, c.seq, c.input};
  Shape state = c.layout == 0 ? Shape{dirs, c.batch, c.hidden} : Shape{c.batch, dirs, c.hidden};
  std::vector<Input> in = {var(x), weight(c, {dirs, gh, c.input}, 1), weight(c, {dirs, gh, c.hidden}, 2)};
  in.push_back(c.bias ? weight(c, {dirs, 2 * gh}, 3) : none());
  Tensor lens(DType::Int32, {c.batch});
  for (int64_t b = 0; b < c.batch; ++b) lens.set_f64(b, double(c.seq - b % (c.seq + 1)));
  in.push_back(c.lens == 0 ? none() : c.lens == 1 ? cst(lens) : var({c.batch}, DType::Int32));
  in.push_back(c.initial ? var(state) : none());
  if (c.op == "LSTM") {
    in.push_back(c.initial ? var(state) : none());
    in.push_back(c.peephole ? weight(c, {dirs, 3 * c.hidden}, 4) : none());
  }
  Attributes attrs = c.extra;
  attrs.set("hidden_size", c.hidden);
  attrs.set("direction", c.direction);
  attrs.set("layout", c.layout);
  return one_node_graph(c.op, in, attrs, c.op == "LSTM" ? 3 : 2);
}

void check_rnn(const RnnCase& c) {
  SCOPED_TRACE(c.op + " " + c.direction + " layout " + std::to_string(c.layout));
  Graph g = rnn_graph(c);
  Graph f = fission(g);
  expect_all_primitive(f);
  EXPECT_EQ(count_ops(f, c.op), 0);
  EXPECT_GE(count_ops(f, "MatMul"), 1);
  for (uint32_t seed : {1u, 2u}) expect_same_outputs(g, f, random_feeds(g, seed, 0, c.seq + 1));
}

TEST(SequenceFission, DirectionsAndLayouts) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    for (const char* direction : {"forward", "reverse", "bidirectional"}) {
      for (int64_t layout : {0, 1}) {
        RnnCase c;
        c.op = op;
        c.direction = direction;
        c.layout = layout;
        check_rnn(c);
      }
    }
  }
}

TEST(SequenceFission, DefaultsWithoutOptionalInputs) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    RnnCase c;
    c.op = op;
    c.bias = false;
    c.initial = false;
    check_rnn(c);
    c.constant_weights = false;  // weights as graph inputs
    c.bias = true;
    check_rnn(c);
  }
}

TEST(SequenceFission, GruLinearBeforeReset) {
  for (const char* direction : {"forward", "bidirectional"}) {
    RnnCase c;
    c.op = "GRU";
    c.direction = direction;
    c.extra.set("linear_before_reset", int64_t(1));
    check_rnn(c);
    c.bias = false;
    check_rnn(c);
  }
}

TEST(SequenceFission, LstmPeepholesInputForgetClip) {
  RnnCase c;
  c.peephole = true;
  c.direction = "bidirectional";
  check_rnn(c);
  c.extra.set("input_forget", int64_t(1));
  check_rnn(c);
  c.extra.set("clip", 0.5);
  check_rnn(c);
}

TEST(SequenceFission, ActivationFunctions) {
  const std::vector<std::string> names = {"Relu", "Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh",
                                          "HardSigmoid", "Elu", "Softsign", "Softplus", "Sigmoid", "Tanh"};
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    RnnCase c;
    c.op = "RNN";
    c.direction = "bidirectional";
    c.extra.set("activations", std::vector<std::string>{name, "tanh"});
    c.extra.set("activation_alpha", std::vector<double>{0.7});
    c.extra.set("activation_beta", std::vector<double>{0.3});
    check_rnn(c);
  }
  RnnCase c;
  c.op = "LSTM";
  c.extra.set("activations", std::vector<std::string>{"HardSigmoid", "Softsign", "ScaledTanh"});
  c.extra.set("activation_alpha", std::vector<double>{0.3, 1.5});
  c.extra.set("activation_beta", std::vector<double>{0.4});
  check_rnn(c);
}

TEST(SequenceFission, SequenceLensMaskWithWhere) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    for (int lens : {1, 2}) {
      for (const char* direction : {"forward", "bidirectional"}) {
        RnnCase c;
        c.op = op;
        c.lens = lens;
        c.batch = 4;
        c.direction = direction;
        c.layout = lens == 2 ? 1 : 0;
        check_rnn(c);
        EXPECT_GE(count_ops(fission(rnn_graph(c)), "Where"), 1);
      }
    }
  }
}

TEST(SequenceFission, FullLengthSequenceLensNeedNoMask) {
  RnnCase c;
  c.op = "GRU";
  Graph g = rnn_graph(c);
  Tensor lens(DType::Int32, {c.batch});
  for (int64_t b = 0; b < c.batch; ++b) lens.set_f64(b, double(c.seq));
  g.nodes()[0].inputs[4] = g.add_constant("lens", lens);
  Graph f = fission(g);
  EXPECT_EQ(count_ops(f, "Where"), 0);
  expect_same_outputs(g, f, random_feeds(g, 3));
}

TEST(SequenceFission, UnusedOutputsAreNotBuilt) {
  RnnCase c;
  Graph g = rnn_graph(c);
  g.nodes()[0].outputs[0] = kNoValue;
  g.outputs().erase(g.outputs().begin());
  Graph f = fission(g);
  EXPECT_EQ(count_ops(f, "Concat"), 0);
  expect_same_outputs(g, f, random_feeds(g, 3));
}

TEST(SequenceFission, UnknownActivationIsAUserError) {
  RnnCase c;
  c.op = "RNN";
  Graph g = rnn_graph(c);
  g.nodes()[0].attrs.set("activations", std::vector<std::string>{"Swish"});
  EXPECT_THROW(fission(g), Error);
}

}  // namespace
}  // namespace orchid::fission
