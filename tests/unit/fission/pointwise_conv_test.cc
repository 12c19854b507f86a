#include "fission/pointwise_conv.h"

#include "fission_test_util.h"

namespace orchid::fission {
namespace {

using testing::add_op;
using testing::count_ops;
using testing::expect_same_outputs;
using testing::random_tensor;

Attributes resize_attrs(const std::string& mode, const std::string& coordinates = "half_pixel") {
  Attributes a;
  a.set("mode", mode);
  a.set("coordinate_transformation_mode", coordinates);
  return a;
}

// conv1x1(Concat(linear_resize(a), nearest_resize(b), c)) + Relu: a and b
// upsampled to c's size, the Conv with a bias.
struct Decoder {
  Graph graph;
  ValueId concat = kNoValue, resized_a = kNoValue;
};

Decoder decoder(const Shape& a_shape, const Shape& b_shape, const Shape& c_shape, int64_t out_channels, bool bias) {
  Decoder d;
  Graph& g = d.graph;
  g.name = "decoder";
  ValueId a = g.add_value("a", {DType::Float32, a_shape});
  ValueId b = g.add_value("b", {DType::Float32, b_shape});
  ValueId c = g.add_value("c", {DType::Float32, c_shape});
  g.inputs() = {a, b, c};
  // a by sizes (all axes), b by scales.
  Shape a_sizes = {a_shape[0], a_shape[1], c_shape[2], c_shape[3]};
  ValueId sizes = g.add_constant("sizes", Tensor::vector_i64(a_sizes));
  d.resized_a = add_op(g, "Resize", {a, kNoValue, kNoValue, sizes}, resize_attrs("linear"))[0];
  std::vector<float> b_scales = {1, 1, float(c_shape[2] / b_shape[2]), float(c_shape[3] / b_shape[3])};
  ValueId scales = g.add_constant("scales", Tensor::from_vector(DType::Float32, {4}, b_scales));
  ValueId resized_b = add_op(g, "Resize", {b, kNoValue, scales}, resize_attrs("nearest", "asymmetric"))[0];
  Attributes cat;
  cat.set("axis", int64_t(1));
  d.concat = add_op(g, "Concat", {d.resized_a, resized_b, c}, cat)[0];
  int64_t in_channels = a_shape[1] + b_shape[1] + c_shape[1];
  std::vector<ValueId> conv_in = {
      d.concat, g.add_constant("w", random_tensor(DType::Float32, {out_channels, in_channels, 1, 1}, 1))};
  if (bias) conv_in.push_back(g.add_constant("bias", random_tensor(DType::Float32, {out_channels}, 2)));
  Attributes conv;
  conv.set("kernel_shape", std::vector<int64_t>{1, 1});
  ValueId y = add_op(g, "Conv", conv_in, conv)[0];
  g.outputs() = {add_op(g, "Relu", {y})[0]};
  return d;
}

TEST(ConvBeforeResize, SplitsTheConvAndRunsItBeforeUpsampling) {
  for (bool bias : {true, false}) {
    Graph g = decoder({1, 6, 4, 4}, {1, 5, 2, 2}, {1, 3, 8, 8}, 4, bias).graph;
    Graph rewritten = conv_before_upsampling(g);
    EXPECT_EQ(count_ops(rewritten, "Concat"), 0);
    EXPECT_EQ(count_ops(rewritten, "Conv"), 3);
    EXPECT_EQ(count_ops(rewritten, "Resize"), 2);
    EXPECT_EQ(count_ops(rewritten, "Add"), 2);
    // The Resizes now read the Convs' outputs: 4 channels.
    for (const Node& node : rewritten.nodes()) {
      if (node.op == "Resize") {
        EXPECT_EQ(rewritten.type(node.inputs[0]).shape[1], 4) << node.describe();
      }
    }
    expect_same_outputs(g, rewritten);
  }
}

TEST(ConvBeforeResize, BiasGoesThroughAResizeWhenEveryInputIsUpsampled) {
  // c is upsampled too: a nearest Resize by sizes along the `axes` attribute.
  Decoder d = decoder({1, 6, 4, 4}, {1, 5, 2, 2}, {1, 3, 8, 8}, 4, true);
  Graph& g = d.graph;
  ValueId c_small = g.add_value("c_small", {DType::Float32, {1, 3, 2, 4}});
  Attributes a = resize_attrs("nearest");
  a.set("axes", std::vector<int64_t>{2, 3});
  Node resize{"resize_c",
              "Resize",
              "",
              {c_small, kNoValue, kNoValue, g.add_constant("c_sizes", Tensor::vector_i64({8, 8}))},
              {g.add_value("c_up", {DType::Float32, {1, 3, 8, 8}})},
              a};
  Node& concat = g.nodes()[2];
  ASSERT_EQ(concat.op, "Concat");
  concat.inputs[2] = resize.outputs[0];
  g.nodes().insert(g.nodes().begin() + 2, resize);
  g.inputs()[2] = c_small;
  Graph rewritten = conv_before_upsampling(g);
  EXPECT_EQ(count_ops(rewritten, "Concat"), 0);
  EXPECT_EQ(count_ops(rewritten, "Resize"), 3);
  expect_same_outputs(g, rewritten);
}

TEST(ConvBeforeResize, KeepsGraphsItCannotImprove) {
  // Nothing upsampled: splitting the Conv only adds sums.
  {
    Graph g;
    ValueId a = g.add_value("a", {DType::Float32, {1, 3, 4, 4}});
    ValueId b = g.add_value("b", {DType::Float32, {1, 2, 4, 4}});
    g.inputs() = {a, b};
    Attributes cat;
    cat.set("axis", int64_t(1));
    ValueId x = add_op(g, "Concat", {a, b}, cat)[0];
    g.outputs() = {add_op(g, "Conv", {x, g.add_constant("w", random_tensor(DType::Float32, {4, 5, 1, 1}, 1))})[0]};
    EXPECT_EQ(count_ops(conv_before_upsampling(g), "Concat"), 1);
  }
  // The Concat is also a graph output.
  {
    Decoder d = decoder({1, 6, 4, 4}, {1, 5, 2, 2}, {1, 3, 8, 8}, 4, true);
    d.graph.outputs().push_back(d.concat);
    Graph rewritten = conv_before_upsampling(d.graph);
    EXPECT_EQ(count_ops(rewritten, "Concat"), 1);
    EXPECT_EQ(count_ops(rewritten, "Conv"), 1);
  }
  // A 3x3 Conv does not commute with a Resize.
  {
    Decoder d = decoder({1, 6, 4, 4}, {1, 5, 2, 2}, {1, 3, 8, 8}, 4, true);
    for (Node& node : d.graph.nodes()) {
      if (node.op != "Conv") continue;
      Value& w = d.graph.value(node.inputs[1]);
      w.constant = random_tensor(DType::Float32, {4, 14, 3, 3}, 3);
      w.type = w.constant->type();
      node.attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
      node.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    }
    EXPECT_EQ(count_ops(conv_before_upsampling(d.graph), "Concat"), 1);
  }
}

TEST(ConvBeforeResize, AResizeReadElsewhereStaysBeforeItsPart) {
  Decoder d = decoder({1, 6, 4, 4}, {1, 20, 2, 2}, {1, 3, 8, 8}, 4, true);
  d.graph.outputs().push_back(d.resized_a);  // a's Resize is read outside the Concat
  Graph rewritten = conv_before_upsampling(d.graph);
  EXPECT_EQ(count_ops(rewritten, "Concat"), 0);
  EXPECT_EQ(count_ops(rewritten, "Resize"), 2);  // a's at 6 channels, b's moved after its part
  expect_same_outputs(d.graph, rewritten);
}

TEST(ConvBeforeResize, FissionLeavesPrimitives) {
  Graph f = fission(decoder({1, 6, 4, 4}, {1, 5, 2, 2}, {1, 3, 8, 8}, 4, true).graph);
  EXPECT_EQ(count_ops(f, "Concat"), 0);
  for (const Node& node : f.nodes()) EXPECT_TRUE(primitive_kind(node, f).has_value()) << node.describe();
}


// X [1, L, K] -> MatMul(A [K, C]) [+ a] -> Transpose [1, C, L] -> Reshape
// [1, C, h, w] -> 1x1 Conv to M channels [+ b] -> Relu.
Graph token_linear_then_conv(int64_t k, int64_t c, int64_t m, bool linear_bias, bool bias_first, bool conv_bias) {
  Graph g;
  g.name = "token_linear_then_conv";
  ValueId x = g.add_value("x", {DType::Float32, {1, 12, k}});
  g.inputs() = {x};
  ValueId y = add_op(g, "MatMul", {x, g.add_constant("A", random_tensor(DType::Float32, {k, c}, 1))})[0];
  if (linear_bias) {
    ValueId a = g.add_constant("a", random_tensor(DType::Float32, {c}, 2));
    y = add_op(g, "Add", bias_first ? std::vector<ValueId>{a, y} : std::vector<ValueId>{y, a})[0];
  }
  Attributes perm;
  perm.set("perm", std::vector<int64_t>{0, 2, 1});
  y = add_op(g, "Transpose", {y}, perm)[0];
  y = add_op(g, "Reshape", {y, g.add_constant("shape", Tensor::vector_i64({1, c, 3, 4}))})[0];
  std::vector<ValueId> conv_in = {y, g.add_constant("W", random_tensor(DType::Float32, {m, c, 1, 1}, 3))};
  if (conv_bias) conv_in.push_back(g.add_constant("b", random_tensor(DType::Float32, {m}, 4)));
  y = add_op(g, "Conv", conv_in)[0];
  g.outputs() = {add_op(g, "Relu", {y})[0]};
  return g;
}

TEST(FoldLinearIntoPointwiseConv, OneMatMulComputesBothMaps) {
  for (bool linear_bias : {true, false}) {
    for (bool conv_bias : {true, false}) {
      Graph g = token_linear_then_conv(3, 8, 5, linear_bias, !conv_bias, conv_bias);
      Graph folded = fold_linear_into_pointwise_conv(g);
      EXPECT_EQ(count_ops(folded, "Conv"), 0);
      EXPECT_EQ(count_ops(folded, "MatMul"), 1);
      EXPECT_EQ(count_ops(folded, "Add"), linear_bias || conv_bias ? 1 : 0);
      expect_same_outputs(g, folded);
    }
  }
}

TEST(FoldLinearIntoPointwiseConv, KeepsABottleneck) {
  // 16 -> 2 -> 16 channels: 16x16 multiply-adds per pixel folded, 64 apart.
  Graph g = token_linear_then_conv(16, 2, 16, true, false, true);
  EXPECT_EQ(count_ops(fold_linear_into_pointwise_conv(g), "Conv"), 1);
}

TEST(FoldLinearIntoPointwiseConv, KeepsAChainReadElsewhere) {
  Graph g = token_linear_then_conv(3, 8, 5, true, false, true);
  g.outputs().push_back(g.nodes()[1].outputs[0]);  // the biased product is also an output
  EXPECT_EQ(count_ops(fold_linear_into_pointwise_conv(g), "Conv"), 1);
}


// y [1, 3, 4, C] -> Transpose to [1, C, 3, 4] -> Relu -> 1x1 Conv to M channels [+ b].
Graph channels_first_then_conv(int64_t c, int64_t m, bool bias) {
  Graph g;
  g.name = "channels_first_then_conv";
  ValueId y = g.add_value("y", {DType::Float32, {1, 3, 4, c}});
  g.inputs() = {y};
  Attributes perm;
  perm.set("perm", std::vector<int64_t>{0, 3, 1, 2});
  ValueId x = add_op(g, "Relu", {add_op(g, "Transpose", {y}, perm)[0]})[0];
  std::vector<ValueId> conv_in = {x, g.add_constant("W", random_tensor(DType::Float32, {m, c, 1, 1}, 3))};
  if (bias) conv_in.push_back(g.add_constant("b", random_tensor(DType::Float32, {m}, 4)));
  g.outputs() = {add_op(g, "Conv", conv_in)[0]};
  return g;
}

TEST(PointwiseConvChannelsLast, AGemmOnTheChannelsLastInput) {
  for (bool bias : {true, false}) {
    Graph g = channels_first_then_conv(6, 5, bias);
    Graph rewritten = pointwise_conv_channels_last(g);
    EXPECT_EQ(count_ops(rewritten, "Conv"), 0);
    EXPECT_EQ(count_ops(rewritten, "MatMul"), 1);
    EXPECT_EQ(count_ops(rewritten, "Transpose"), 1);
    EXPECT_EQ(count_ops(rewritten, "Relu"), 1);
    expect_same_outputs(g, rewritten);
  }
}

TEST(PointwiseConvChannelsLast, KeepsAConvWithMoreOutputChannels) {
  EXPECT_EQ(count_ops(pointwise_conv_channels_last(channels_first_then_conv(3, 8, true)), "Conv"), 1);
}

}  // namespace
}  // namespace orchid::fission
