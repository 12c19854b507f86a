#include "fission/fold_batchnorm.h"

#include "fission_test_util.h"

namespace orchid::fission {
namespace {

using testing::add_op;
using testing::count_ops;
using testing::expect_same_outputs;
using testing::random_tensor;

Tensor channel(int64_t c, uint32_t seed, double lo = -2, double hi = 2) {
  return random_tensor(DType::Float32, {c}, seed, lo, hi);
}

// x -> conv (constant W, optional bias) -> BatchNormalization -> Relu.
Graph conv_bn(const std::string& op, const Shape& x_shape, const Shape& w_shape, int64_t out_channels,
              int64_t group, bool bias) {
  Graph g;
  g.name = "conv_bn";
  ValueId x = g.add_value("x", {DType::Float32, x_shape});
  g.inputs() = {x};
  std::vector<ValueId> conv_in = {x, g.add_constant("w", random_tensor(DType::Float32, w_shape, 1))};
  if (bias) conv_in.push_back(g.add_constant("b", channel(out_channels, 2)));
  Attributes conv_attrs;
  conv_attrs.set("group", group);
  conv_attrs.set("pads", std::vector<int64_t>(2 * (x_shape.size() - 2), 1));
  ValueId y = add_op(g, op, conv_in, conv_attrs)[0];
  std::vector<ValueId> bn_in = {y};
  for (uint32_t i = 0; i < 3; ++i) bn_in.push_back(g.add_constant("p" + std::to_string(i), channel(out_channels, 3 + i)));
  bn_in.push_back(g.add_constant("var", channel(out_channels, 9, 0.2, 3)));
  Attributes bn_attrs;
  bn_attrs.set("epsilon", 1e-3);
  ValueId z = add_op(g, "BatchNormalization", bn_in, bn_attrs)[0];
  g.outputs() = {add_op(g, "Relu", {z})[0]};
  return g;
}

void expect_folded(const Graph& g, const std::string& op) {
  Graph folded = fold_batchnorm_into_conv(g);
  EXPECT_EQ(count_ops(folded, "BatchNormalization"), 0);
  EXPECT_EQ(count_ops(folded, op), 1);
  EXPECT_EQ(folded.nodes().size(), 2u);
  expect_same_outputs(g, folded);
}

TEST(FoldBatchNorm, ConvWithAndWithoutBias) {
  expect_folded(conv_bn("Conv", {2, 4, 5, 5}, {6, 4, 3, 3}, 6, 1, true), "Conv");
  expect_folded(conv_bn("Conv", {2, 4, 5, 5}, {6, 4, 3, 3}, 6, 1, false), "Conv");
  expect_folded(conv_bn("Conv", {1, 4, 7}, {6, 2, 3}, 6, 2, true), "Conv");
}

TEST(FoldBatchNorm, ConvTransposeWithGroups) {
  // W [C_in, M/group, k...]: the scaled axis is 1 within each group.
  expect_folded(conv_bn("ConvTranspose", {1, 4, 4, 4}, {4, 3, 3, 3}, 3, 1, true), "ConvTranspose");
  expect_folded(conv_bn("ConvTranspose", {1, 4, 4, 4}, {4, 3, 3, 3}, 6, 2, false), "ConvTranspose");
}

TEST(FoldBatchNorm, KeepsBatchNormWhenConvOutputIsShared) {
  Graph g = conv_bn("Conv", {1, 2, 4, 4}, {3, 2, 3, 3}, 3, 1, true);
  g.outputs().push_back(g.nodes()[0].outputs[0]);  // the conv output is also a graph output
  Graph folded = fold_batchnorm_into_conv(g);
  EXPECT_EQ(count_ops(folded, "BatchNormalization"), 1);
  expect_same_outputs(g, folded);
}

TEST(FoldBatchNorm, FissionAfterFoldingLeavesPrimitives) {
  Graph folded = fold_batchnorm_into_conv(conv_bn("Conv", {1, 2, 4, 4}, {3, 2, 3, 3}, 3, 1, false));
  Graph f = fission(folded);
  for (const Node& node : f.nodes()) EXPECT_TRUE(primitive_kind(node, f).has_value()) << node.describe();
}

}  // namespace
}  // namespace orchid::fission
