#include "cost/kernel_key.h"

#include <gtest/gtest.h>

#include "../runtime/runtime_test_util.h"

namespace orchid::cost {
namespace {

using runtime::testing::GraphBuilder;

// What may differ between two versions of the same small layer:
// x -> Conv(w) -> Add(bias) -> LeakyRelu(alpha).
struct LayerSpec {
  uint32_t seed = 11;  // constant names and the weight's random data
  Shape input = {1, 3, 8, 8};
  float bias = 0.5f;   // a small constant: hashed by value
  double alpha = 0.1;  // an attribute
  std::string symbol;  // non-empty: a generated kernel
};

struct Layer {
  Graph graph;
  runtime::KernelGroup group;
};

Layer make_layer(const LayerSpec& spec) {
  GraphBuilder b;
  b.seed = spec.seed;
  ValueId x = b.input("x" + std::to_string(spec.seed), spec.input);
  ValueId w = b.constant({4, 3, 3, 3});  // 108 elements: a weight, hashed by shape only
  ValueId y = b.op("Conv", {x, w}, fission::testing::attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  ValueId z = b.op("Add", {y, b.scalar(spec.bias, {1, 4, 1, 1})});
  ValueId out = b.op("LeakyRelu", {z}, fission::testing::attrs({{"alpha", spec.alpha}}));
  Layer layer{b.finish(out), {}};
  layer.group = runtime::make_group(layer.graph, {0, 1, 2});
  layer.group.symbol = spec.symbol;
  return layer;
}

std::string key_of(const LayerSpec& spec) {
  Layer layer = make_layer(spec);
  return kernel_key(layer.graph, layer.group);
}

TEST(CostKernelKey, IsAHexDigest) {
  const std::string key = key_of({});
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos) << key;
  EXPECT_EQ(key, key_of({}));
}

TEST(CostKernelKey, SameStructureInAnotherGraphGivesTheSameKey) {
  // Another seed renames every value and draws other weight data (108
  // elements: above the small-constant limit), which must not matter.
  LayerSpec other;
  other.seed = 50;
  Layer a = make_layer({});
  Layer b = make_layer(other);
  ASSERT_NE(a.graph.value(a.group.inputs[1]).name, b.graph.value(b.group.inputs[1]).name);
  EXPECT_EQ(kernel_key(a.graph, a.group), kernel_key(b.graph, b.group));
}

TEST(CostKernelKey, SameStructureAtAnotherPlaceOfOneGraphGivesTheSameKey) {
  GraphBuilder b;
  ValueId x = b.input("x", {2, 16});
  ValueId first = b.op("Relu", {x});
  ValueId second = b.op("Relu", {first});
  Graph graph = b.finish(second);
  EXPECT_EQ(kernel_key(graph, runtime::make_group(graph, {0})), kernel_key(graph, runtime::make_group(graph, {1})));
}

TEST(CostKernelKey, AttributesShapesSmallConstantsAndImplementationChangeIt) {
  const std::string base = key_of({});
  LayerSpec attribute;
  attribute.alpha = 0.2;
  LayerSpec shape;
  shape.input = {1, 3, 10, 10};
  LayerSpec constant;
  constant.bias = 0.25f;
  LayerSpec generated;
  generated.symbol = "orchid_kernel_0";
  EXPECT_NE(base, key_of(attribute));
  EXPECT_NE(base, key_of(shape));
  EXPECT_NE(base, key_of(constant));
  EXPECT_NE(base, key_of(generated));
}

TEST(CostKernelKey, DifferentOpsDiffer) {
  GraphBuilder b;
  ValueId x = b.input("x", {2, 16});
  ValueId relu = b.op("Relu", {x});
  ValueId sigmoid = b.op("Sigmoid", {x});
  Graph graph = b.finish(relu);
  graph.outputs().push_back(sigmoid);
  EXPECT_NE(kernel_key(graph, runtime::make_group(graph, {0})), kernel_key(graph, runtime::make_group(graph, {1})));
}

}  // namespace
}  // namespace orchid::cost
