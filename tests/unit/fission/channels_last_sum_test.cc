#include "fission/channels_last_sum.h"

#include "fission_test_util.h"

namespace orchid::fission {
namespace {

using testing::add_op;
using testing::count_ops;
using testing::expect_same_outputs;

// A token map t [1, h*w, C] made an image [1, C, h, w].
ValueId image(Graph& g, const std::string& name, int64_t h, int64_t w, int64_t c) {
  ValueId t = g.add_value(name, {DType::Float32, {1, h * w, c}});
  g.inputs().push_back(t);
  Attributes perm;
  perm.set("perm", std::vector<int64_t>{0, 2, 1});
  ValueId x = add_op(g, "Transpose", {t}, perm)[0];
  return add_op(g, "Reshape", {x, g.add_constant(name + "_shape", Tensor::vector_i64({1, c, h, w}))})[0];
}

ValueId upsample(Graph& g, ValueId x, const std::string& mode, bool by_sizes, const Shape& to) {
  Attributes a;
  a.set("mode", mode);
  if (by_sizes)
    return add_op(g, "Resize", {x, kNoValue, kNoValue, g.add_constant("sizes", Tensor::vector_i64(to))}, a)[0];
  const Shape& from = g.type(x).shape;
  std::vector<float> scales = {1, 1, float(to[2]) / float(from[2]), float(to[3]) / float(from[3])};
  return add_op(g, "Resize", {x, kNoValue, g.add_constant("scales", Tensor::from_vector(DType::Float32, {4}, scales))},
                a)[0];
}

// Relu(a + up_linear(b) + up_nearest(c)): 7 channels, maps 6x8, 3x4, 2x2.
Graph decoder_sum() {
  Graph g;
  g.name = "decoder_sum";
  ValueId a = image(g, "a", 6, 8, 7);
  ValueId b = upsample(g, image(g, "b", 3, 4, 7), "linear", true, {1, 7, 6, 8});
  ValueId c = upsample(g, image(g, "c", 2, 2, 7), "nearest", false, {1, 7, 6, 8});
  ValueId s = add_op(g, "Add", {a, add_op(g, "Add", {b, c})[0]})[0];
  g.outputs() = {add_op(g, "Relu", {s})[0]};
  return g;
}

TEST(ChannelsLastSum, SumsTokenMapsChannelsLastAndTransposesOnce) {
  Graph g = decoder_sum();
  Graph rewritten = sum_token_maps_channels_last(g);
  EXPECT_EQ(count_ops(rewritten, "Transpose"), 1);
  EXPECT_EQ(count_ops(rewritten, "Resize"), 2);
  EXPECT_EQ(count_ops(rewritten, "Add"), 2);
  for (const Node& node : rewritten.nodes()) {
    if (node.op == "Resize") {
      EXPECT_EQ(rewritten.type(node.outputs[0]).shape, (Shape{1, 6, 8, 7})) << node.describe();
    }
  }
  expect_same_outputs(g, rewritten);
}

TEST(ChannelsLastSum, KeepsSumsOfOtherMaps) {
  // One leaf is an ordinary image.
  {
    Graph g;
    ValueId a = image(g, "a", 2, 3, 4);
    ValueId x = g.add_value("x", {DType::Float32, {1, 4, 2, 3}});
    g.inputs().push_back(x);
    g.outputs() = {add_op(g, "Add", {a, x})[0]};
    EXPECT_EQ(count_ops(sum_token_maps_channels_last(g), "Transpose"), 1);
    EXPECT_EQ(count_ops(sum_token_maps_channels_last(g), "Reshape"), 1);
  }
  // A token map is read elsewhere too: only the sum of the other two runs
  // channels-last.
  {
    Graph g = decoder_sum();
    g.outputs().push_back(g.nodes()[1].outputs[0]);  // a's image
    Graph rewritten = sum_token_maps_channels_last(g);
    EXPECT_EQ(count_ops(rewritten, "Transpose"), 2);
    expect_same_outputs(g, rewritten);
  }
}

TEST(ChannelsLastSum, FissionLeavesPrimitives) {
  Graph f = fission(decoder_sum());
  for (const Node& node : f.nodes()) EXPECT_TRUE(primitive_kind(node, f).has_value()) << node.describe();
}

}  // namespace
}  // namespace orchid::fission
