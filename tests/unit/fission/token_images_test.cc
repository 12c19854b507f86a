#include "fission/token_images.h"

#include "fission/activations_before_layout.h"
#include "fission/fission.h"
#include "fission_test_util.h"

namespace orchid::fission {
namespace {

using testing::add_op;
using testing::count_ops;
using testing::expect_same_outputs;

Attributes perm(std::vector<int64_t> p) {
  Attributes a;
  a.set("perm", std::move(p));
  return a;
}

// SegFormer's Mix-FFN shape: tokens [1, h*w, C] -> image -> depthwise conv
// -> tokens again -> Relu.
Graph mix_ffn(int64_t h, int64_t w, int64_t c) {
  Graph g;
  g.name = "mix_ffn";
  ValueId t = g.add_value("t", {DType::Float32, {1, h * w, c}});
  g.inputs().push_back(t);
  ValueId x = add_op(g, "Transpose", {t}, perm({0, 2, 1}))[0];
  x = add_op(g, "Reshape", {x, g.add_constant("image_shape", Tensor::vector_i64({1, c, h, w}))})[0];
  Attributes conv;
  conv.set("group", c);
  conv.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  x = add_op(g, "Conv", {x, g.add_constant("w", testing::random_tensor(DType::Float32, {c, 1, 3, 3}, 3))}, conv)[0];
  x = add_op(g, "Reshape", {x, g.add_constant("tokens_shape", Tensor::vector_i64({1, c, h * w}))})[0];
  x = add_op(g, "Transpose", {x}, perm({0, 2, 1}))[0];
  g.outputs() = {add_op(g, "Relu", {x})[0]};
  return g;
}

// Both directions become Transposes between channels-last and
// channels-first images, the Reshapes on the channels-last side.
TEST(TokenImages, TransposesBetweenChannelsLastAndChannelsFirstImages) {
  const Graph g = mix_ffn(5, 6, 4);
  const Graph rewritten = token_maps_as_images(g);
  std::vector<std::vector<int64_t>> perms;
  for (const Node& node : rewritten.nodes()) {
    if (node.op == "Transpose") perms.push_back(node.attrs.get_ints("perm"));
    if (node.op == "Reshape") {
      const Shape& in = rewritten.type(node.inputs[0]).shape;
      const Shape& out = rewritten.type(node.outputs[0]).shape;
      EXPECT_TRUE(in == Shape({1, 30, 4}) || in == Shape({1, 5, 6, 4})) << node.describe();
      EXPECT_TRUE(out == Shape({1, 30, 4}) || out == Shape({1, 5, 6, 4})) << node.describe();
    }
  }
  EXPECT_EQ(perms, (std::vector<std::vector<int64_t>>{{0, 3, 1, 2}, {0, 2, 3, 1}}));
  expect_same_outputs(g, rewritten);
  expect_same_outputs(g, fission(g));
}

// Images of other shapes, and token maps read twice, are left alone.
TEST(TokenImages, KeepsOtherTransposes) {
  {  // the Transpose's output is read by the Reshape and a graph output
    Graph g = mix_ffn(2, 3, 4);
    g.outputs().push_back(g.nodes()[0].outputs[0]);
    const Graph rewritten = token_maps_as_images(g);
    EXPECT_EQ(count_ops(rewritten, "Transpose"), 2);
    bool kept = false;
    for (const Node& node : rewritten.nodes()) kept = kept || node.attrs.get_ints("perm") == std::vector<int64_t>{0, 2, 1};
    EXPECT_TRUE(kept);
    expect_same_outputs(g, rewritten);
  }
  {  // a Reshape that is not to [N, C, spatial...] of the tokens
    Graph g;
    ValueId t = g.add_value("t", {DType::Float32, {1, 6, 4}});
    g.inputs().push_back(t);
    ValueId x = add_op(g, "Transpose", {t}, perm({0, 2, 1}))[0];
    g.outputs() = {add_op(g, "Reshape", {x, g.add_constant("s", Tensor::vector_i64({1, 2, 2, 6}))})[0]};
    EXPECT_EQ(token_maps_as_images(g).nodes()[0].attrs.get_ints("perm"), (std::vector<int64_t>{0, 2, 1}));
  }
}

// GELU as PyTorch exports it (x * 0.5 * (1 + erf(x / sqrt 2))) after the
// image is made tokens again: it moves to the conv's output, the layout
// steps after it.
TEST(ActivationsBeforeLayout, GeluMovesToTheConv) {
  Graph g = mix_ffn(4, 5, 8);
  // Replace the final Relu by a GELU region.
  const ValueId tokens = g.nodes()[g.nodes().size() - 1].inputs[0];
  g.nodes().pop_back();
  auto scalar = [&](const std::string& name, float v) {
    return g.add_constant(name, Tensor::from_vector(DType::Float32, {}, std::vector<float>{v}));
  };
  ValueId e = add_op(g, "Erf", {add_op(g, "Div", {tokens, scalar("sqrt2", 1.4142135f)})[0]})[0];
  e = add_op(g, "Add", {e, scalar("one", 1.f)})[0];
  e = add_op(g, "Mul", {tokens, e})[0];
  g.outputs() = {add_op(g, "Mul", {e, scalar("half", 0.5f)})[0]};
  const Graph images = token_maps_as_images(g);
  const Graph rewritten = activations_before_layout(images);
  // Conv, then the five GELU nodes, then the Transpose and Reshape.
  std::vector<std::string> after_conv;
  bool seen_conv = false;
  for (const Node& node : rewritten.nodes()) {
    if (seen_conv) after_conv.push_back(node.op);
    seen_conv = seen_conv || node.op == "Conv";
  }
  EXPECT_EQ(after_conv, (std::vector<std::string>{"Div", "Erf", "Add", "Mul", "Mul", "Transpose", "Reshape"}));
  for (const Node& node : rewritten.nodes()) {
    if (node.op == "Erf") {
      EXPECT_EQ(rewritten.type(node.outputs[0]).shape, (Shape{1, 8, 4, 5}));
    }
  }
  expect_same_outputs(g, rewritten);
  expect_same_outputs(g, fission(g));
}

// A region with another tensor operand (a residual Add), or whose value
// before the activation is read elsewhere too, stays where it is.
TEST(ActivationsBeforeLayout, KeepsRegionsWithOtherOperands) {
  Graph g = token_maps_as_images(mix_ffn(3, 3, 4));
  const ValueId tokens = g.nodes()[g.nodes().size() - 1].inputs[0];
  g.nodes().pop_back();
  ValueId r = g.add_value("r", {DType::Float32, {1, 9, 4}});
  g.inputs().push_back(r);
  g.outputs() = {add_op(g, "Relu", {add_op(g, "Add", {tokens, r})[0]})[0]};
  const Graph kept = activations_before_layout(g);
  EXPECT_EQ(kept.nodes().back().op, "Relu");
  EXPECT_EQ(kept.nodes().size(), g.nodes().size());
  Graph read_twice = token_maps_as_images(mix_ffn(3, 3, 4));  // ends in Relu(tokens)
  EXPECT_EQ(activations_before_layout(read_twice).nodes().back().op, "Reshape");  // the Relu moved
  read_twice.outputs().push_back(read_twice.nodes().back().inputs[0]);
  EXPECT_EQ(activations_before_layout(read_twice).nodes().back().op, "Relu");
}

}  // namespace
}  // namespace orchid::fission
