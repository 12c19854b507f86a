#include <gtest/gtest.h>

#include <cmath>

#include "reference/op_registry.h"
#include "support/error.h"

#include "op_test_util.h"

namespace orchid::reference {
namespace {

using namespace testing;

// A recurrent node (RNN, GRU, LSTM) with the given hidden_size.
Node rnn_node(const std::string& op, int64_t hidden) { return make_node(op, {{"hidden_size", hidden}}); }

TEST(RecurrentOps, RnnForwardReverseBidirectional) {
  // seq 2, batch 1, input 1; W = 1, R = 1: h1 = tanh(x1), h2 = tanh(x2 + h1).
  Tensor x = f32({2, 1, 1}, {1, 2});
  Tensor w = f32({1, 1, 1}, {1});
  Tensor r = f32({1, 1, 1}, {1});
  auto out = evaluate_node(rnn_node("RNN", 1), {&x, &w, &r});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 1, 1, 1}));
  EXPECT_EQ(out[1].shape(), (Shape{1, 1, 1}));
  double h1 = std::tanh(1.0), h2 = std::tanh(2.0 + h1);
  EXPECT_NEAR(values_of(out[0])[0], h1, 1e-6);
  EXPECT_NEAR(values_of(out[0])[1], h2, 1e-6);
  EXPECT_NEAR(values_of(out[1])[0], h2, 1e-6);

  Node reverse = rnn_node("RNN", 1);
  reverse.attrs.set("direction", std::string("reverse"));
  out = evaluate_node(reverse, {&x, &w, &r});
  double r2 = std::tanh(2.0), r1 = std::tanh(1.0 + r2);
  EXPECT_NEAR(values_of(out[0])[0], r1, 1e-6);
  EXPECT_NEAR(values_of(out[0])[1], r2, 1e-6);
  EXPECT_NEAR(values_of(out[1])[0], r1, 1e-6);

  Node bi = rnn_node("RNN", 1);
  bi.attrs.set("direction", std::string("bidirectional"));
  Tensor w2 = f32({2, 1, 1}, {1, 1});
  Tensor r2t = f32({2, 1, 1}, {1, 1});
  out = evaluate_node(bi, {&x, &w2, &r2t});
  EXPECT_EQ(out[0].shape(), (Shape{2, 2, 1, 1}));
  EXPECT_NEAR(values_of(out[0])[0], h1, 1e-6);  // t0 forward
  EXPECT_NEAR(values_of(out[0])[1], r1, 1e-6);  // t0 reverse
  EXPECT_NEAR(values_of(out[1])[0], h2, 1e-6);
  EXPECT_NEAR(values_of(out[1])[1], r1, 1e-6);

  // sequence_lens 1: step 1 is skipped (Y = 0), Y_h is the state after t = 0.
  Tensor lens = Tensor::from_vector(DType::Int32, {1}, std::vector<int>{1});
  out = evaluate_node(rnn_node("RNN", 1), {&x, &w, &r, nullptr, &lens});
  EXPECT_NEAR(values_of(out[0])[1], 0.0, 1e-12);
  EXPECT_NEAR(values_of(out[1])[0], h1, 1e-6);

  // Activation with alpha/beta: Affine(2, 1) on the pre-activation.
  Node affine = rnn_node("RNN", 1);
  affine.attrs.set("activations", std::vector<std::string>{"Affine"});
  affine.attrs.set("activation_alpha", std::vector<double>{2.0});
  affine.attrs.set("activation_beta", std::vector<double>{1.0});
  out = evaluate_node(affine, {&x, &w, &r});
  EXPECT_NEAR(values_of(out[0])[0], 3.0, 1e-6);
  EXPECT_NEAR(values_of(out[0])[1], 2 * (2 + 3) + 1, 1e-6);
}

TEST(RecurrentOps, GruLinearBeforeReset) {
  // W = R = 0, only R's h-bias is 1, h0 = 0.5: z = r = 0.5.
  Tensor x = f32({1, 1, 1}, {7});
  Tensor w = f32({1, 3, 1}, {0, 0, 0});
  Tensor r = f32({1, 3, 1}, {0, 0, 0});
  Tensor b = f32({1, 6}, {0, 0, 0, 0, 0, 1});
  Tensor h0 = f32({1, 1, 1}, {0.5f});
  auto out = evaluate_node(rnn_node("GRU", 1), {&x, &w, &r, &b, nullptr, &h0});
  EXPECT_NEAR(values_of(out[1])[0], 0.5 * std::tanh(1.0) + 0.25, 1e-6);
  Node lbr = rnn_node("GRU", 1);
  lbr.attrs.set("linear_before_reset", int64_t(1));
  out = evaluate_node(lbr, {&x, &w, &r, &b, nullptr, &h0});
  EXPECT_NEAR(values_of(out[1])[0], 0.5 * std::tanh(0.5) + 0.25, 1e-6);
}

TEST(RecurrentOps, LstmCellAndLayout) {
  // W = R = B = 0: i = f = o = 0.5 and the candidate is 0, so C = 0.5 c0.
  Tensor x = f32({1, 2, 1}, {3, 4});
  Tensor w = f32({1, 4, 1}, {0, 0, 0, 0});
  Tensor r = f32({1, 4, 1}, {0, 0, 0, 0});
  Tensor h0 = f32({1, 2, 1}, {0, 0});
  Tensor c0 = f32({1, 2, 1}, {2, 4});
  auto out = evaluate_node(rnn_node("LSTM", 1), {&x, &w, &r, nullptr, nullptr, &h0, &c0});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_NEAR(values_of(out[2])[0], 1.0, 1e-6);
  EXPECT_NEAR(values_of(out[2])[1], 2.0, 1e-6);
  EXPECT_NEAR(values_of(out[1])[0], 0.5 * std::tanh(1.0), 1e-6);
  // Peepholes: Pf = 1 makes f = sigmoid(c0).
  Tensor p = f32({1, 3}, {0, 0, 1});
  out = evaluate_node(rnn_node("LSTM", 1), {&x, &w, &r, nullptr, nullptr, &h0, &c0, &p});
  EXPECT_NEAR(values_of(out[2])[0], 2.0 / (1 + std::exp(-2.0)), 1e-6);

  // layout 1 (batch first) gives the transposed outputs.
  Node batch_first = rnn_node("LSTM", 1);
  batch_first.attrs.set("layout", int64_t(1));
  Tensor xb = f32({2, 1, 1}, {3, 4});
  Tensor h0b = f32({2, 1, 1}, {0, 0});
  Tensor c0b = f32({2, 1, 1}, {2, 4});
  auto outb = evaluate_node(batch_first, {&xb, &w, &r, nullptr, nullptr, &h0b, &c0b});
  EXPECT_EQ(outb[0].shape(), (Shape{2, 1, 1, 1}));
  EXPECT_EQ(outb[1].shape(), (Shape{2, 1, 1}));
  EXPECT_NEAR(values_of(outb[2])[1], 2.0, 1e-6);

  Tensor bad_w = f32({1, 3, 1}, {0, 0, 0});
  EXPECT_THROW(evaluate_node(rnn_node("LSTM", 1), {&x, &bad_w, &r}), Error);
}

}  // namespace
}  // namespace orchid::reference
