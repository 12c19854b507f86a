// DFT and STFT fission: one MatMul with a constant transform matrix (STFT adds
// a constant-index Gather for the frames). primitive.cc keeps both operators
// whole for now, so the tests apply the rules directly.
#include <gtest/gtest.h>

#include <tuple>

#include "fission_test_util.h"

namespace orchid::fission {
namespace {

using namespace testing;

Graph dft_graph(const Shape& shape, int64_t axis, std::optional<int64_t> length, bool inverse, bool onesided) {
  Attributes attrs;
  attrs.set("inverse", int64_t(inverse));
  attrs.set("onesided", int64_t(onesided));
  std::vector<Input> inputs = {var(shape), length ? cst(Tensor::scalar_i64(*length)) : none(),
                               cst(Tensor::scalar_i64(axis))};
  return one_node_graph("DFT", inputs, attrs, 1);
}

void check_dft(const Shape& shape, int64_t axis, std::optional<int64_t> length, bool inverse, bool onesided) {
  Graph g = dft_graph(shape, axis, length, inverse, onesided);
  Graph f = force_rule(g);
  expect_all_primitive(f);
  EXPECT_EQ(count_ops(f, "DFT"), 0);
  EXPECT_EQ(count_ops(f, "MatMul"), 1);
  expect_same_outputs(g, f, random_feeds(g, 11));
}

TEST(SignalFission, DftRealAndComplex) {
  check_dft({2, 8, 1}, 1, std::nullopt, false, false);
  check_dft({2, 8, 2}, 1, std::nullopt, false, false);
  check_dft({3, 5, 4, 2}, 1, std::nullopt, false, false);
  check_dft({3, 5, 4, 2}, -2, std::nullopt, false, false);
  check_dft({3, 5, 4, 1}, 0, std::nullopt, false, false);
}

TEST(SignalFission, DftOnesidedInverseAndLength) {
  check_dft({2, 9, 1}, 1, std::nullopt, false, true);
  check_dft({2, 8, 2}, 1, std::nullopt, true, false);
  check_dft({2, 8, 1}, 1, int64_t(12), false, false);
  check_dft({2, 8, 2}, 1, int64_t(5), false, true);
  check_dft({2, 8, 2}, 1, int64_t(6), true, false);
}

Graph stft_graph(const Shape& signal, int64_t step, bool window, int64_t frame_length, bool onesided) {
  Attributes attrs;
  attrs.set("onesided", int64_t(onesided));
  std::vector<Input> inputs = {var(signal), cst(Tensor::scalar_i64(step)),
                               window ? var({frame_length}) : none(),
                               cst(Tensor::scalar_i64(frame_length))};
  return one_node_graph("STFT", inputs, attrs, 1);
}

TEST(SignalFission, StftFramesWindowsAndTransforms) {
  for (bool window : {false, true}) {
    for (bool onesided : {false, true}) {
      Graph g = stft_graph({2, 20, 1}, 3, window, 8, onesided);
      Graph f = force_rule(g);
      expect_all_primitive(f);
      EXPECT_EQ(count_ops(f, "Gather"), 1);
      EXPECT_EQ(count_ops(f, "MatMul"), 1);
      expect_same_outputs(g, f, random_feeds(g, 5));
    }
  }
  Graph g = stft_graph({1, 16, 2}, 4, true, 6, false);
  expect_same_outputs(g, force_rule(g), random_feeds(g, 9));
}

TEST(SignalFission, ConstantWindowFoldsIntoTheMatrix) {
  Attributes attrs;
  Graph g = one_node_graph("STFT",
                           {var({1, 32, 1}), cst(Tensor::scalar_i64(8)), cst(random_tensor(DType::Float32, {16}, 2, 0, 1)),
                            none()},
                           attrs, 1);
  Graph f = force_rule(g);
  EXPECT_EQ(count_ops(f, "Mul"), 0);
  expect_same_outputs(g, f, random_feeds(g, 4));
}

TEST(SignalFission, DftAxisAttribute) {
  Attributes attrs;
  attrs.set("axis", int64_t(2));
  Graph g = one_node_graph("DFT", {var({2, 3, 6, 2})}, attrs, 1);
  Graph f = force_rule(g);
  expect_all_primitive(f);
  expect_same_outputs(g, f, random_feeds(g, 8));
}

TEST(SignalFission, EyeLikeIsAConstant) {
  Attributes attrs;
  attrs.set("k", int64_t(1));
  attrs.set("dtype", int64_t(7));  // int64
  Graph g = one_node_graph("EyeLike", {var({3, 4})}, attrs, 1);
  Graph f = fission(g);
  EXPECT_EQ(f.nodes().size(), 0u);
  expect_same_outputs(g, f, random_feeds(g, 1));
}

TEST(SignalFission, MelWeightMatrixWithRuntimeRates) {
  Graph g = one_node_graph("MelWeightMatrix",
                           {cst(Tensor::scalar_i64(8)), cst(Tensor::scalar_i64(64)), var({}, DType::Int64),
                            var({}, DType::Float32), var({}, DType::Float32)},
                           {}, 1);
  Graph f = fission(g);
  expect_all_primitive(f);
  EXPECT_EQ(count_ops(f, "MelWeightMatrix"), 0);
  std::map<std::string, Tensor> feeds;
  for (auto [rate, low, high] : {std::tuple{8000, 0.0, 4000.0}, {16000, 100.0, 7000.0}, {44100, 20.0, 11025.0}}) {
    feeds["in2"] = Tensor::scalar_i64(rate);
    feeds["in3"] = Tensor::scalar_f32(float(low));
    feeds["in4"] = Tensor::scalar_f32(float(high));
    expect_same_outputs(g, f, feeds);
  }
}

}  // namespace
}  // namespace orchid::fission
