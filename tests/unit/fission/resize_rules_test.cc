// Fission of Resize into constant index maps: Gathers for nearest, weighted
// Gathers for linear/cubic, MatMul for antialias downsampling; compared with
// the reference on random inputs.
#include <gtest/gtest.h>

#include <random>

#include "fission/fission.h"
#include "fission/primitive.h"
#include "reference/compare.h"
#include "reference/interpreter.h"
#include "reference/op_registry.h"
#include "support/error.h"

namespace orchid {
namespace {

struct ResizeCase {
  Shape shape;
  std::vector<double> scales;  // empty: sizes
  std::vector<int64_t> sizes;
  std::vector<double> roi;  // empty: none
  Attributes attrs;
  bool roi_input = false;        // roi is a graph input (known at run time only)
  DType dtype = DType::Float32;  // of X
};

Graph resize_graph(const ResizeCase& c) {
  Graph g;
  g.name = "resize";
  ValueId x = g.add_value("x", {c.dtype, c.shape});
  g.inputs() = {x};
  ValueId roi = kNoValue, scales = kNoValue, sizes = kNoValue;
  if (c.roi_input) {
    roi = g.add_value("roi", {DType::Float32, {int64_t(c.roi.size())}});
    g.inputs().push_back(roi);
  } else if (!c.roi.empty()) {
    roi = g.add_constant("roi", Tensor::from_vector(DType::Float32, {int64_t(c.roi.size())}, c.roi));
  }
  if (!c.scales.empty()) {
    scales = g.add_constant("scales", Tensor::from_vector(DType::Float32, {int64_t(c.scales.size())}, c.scales));
  } else {
    sizes = g.add_constant("sizes", Tensor::vector_i64(c.sizes));
  }
  Node node{"resize", "Resize", "", {x, roi, scales, sizes}, {kNoValue}, c.attrs};
  std::vector<const TensorType*> types;
  std::vector<const Tensor*> values;
  for (ValueId id : node.inputs) {
    types.push_back(id == kNoValue ? nullptr : &g.type(id));
    values.push_back(id == kNoValue || !g.value(id).constant ? nullptr : &*g.value(id).constant);
  }
  node.outputs[0] = g.add_value("y", reference::infer_node(node, types, values)[0]);
  g.outputs() = node.outputs;
  g.add_node(std::move(node));
  return g;
}

size_t count_op(const Graph& g, const std::string& op) {
  size_t n = 0;
  for (const Node& node : g.nodes()) n += node.op == op;
  return n;
}

Graph check_fission(const ResizeCase& c) {
  Graph g = resize_graph(c);
  Graph f = fission::fission(g);
  for (const Node& node : f.nodes()) EXPECT_TRUE(fission::primitive_kind(node, f)) << node.describe();
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  Tensor x(c.dtype, c.shape);
  for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, dist(rng));
  std::map<std::string, Tensor> feeds = {{"x", x}};
  if (c.roi_input) feeds["roi"] = Tensor::from_vector(DType::Float32, {int64_t(c.roi.size())}, c.roi);
  std::vector<Tensor> expected = reference::run_graph(g, feeds);
  std::vector<Tensor> actual = reference::run_graph(f, feeds);
  auto cmp = reference::compare_tensors(actual[0], expected[0], 1e-5, 1e-6);
  EXPECT_TRUE(cmp.ok) << cmp.mismatch;
  return f;
}

Attributes attrs_of(std::initializer_list<std::pair<const char*, AttributeValue>> list) {
  Attributes a;
  for (const auto& [name, value] : list) a.set(name, value);
  return a;
}

TEST(ResizeFission, NearestIsOneGatherPerResizedAxis) {
  ResizeCase c{{1, 2, 3, 4}, {1, 1, 2, 1.5}, {}, {}, attrs_of({{"mode", std::string("nearest")}})};
  Graph f = check_fission(c);
  EXPECT_EQ(count_op(f, "Gather"), 2u);
  EXPECT_EQ(f.nodes().size(), 2u);
  for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
    for (const char* coord : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn",
                              "half_pixel_symmetric"}) {
      check_fission({{1, 1, 5, 4},
                     {},
                     {1, 1, 3, 9},
                     {},
                     attrs_of({{"mode", std::string("nearest")},
                               {"nearest_mode", std::string(nearest)},
                               {"coordinate_transformation_mode", std::string(coord)}})});
    }
  }
}

TEST(ResizeFission, LinearAndCubicAreWeightedGathers) {
  for (const char* coord :
       {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "half_pixel_symmetric"}) {
    Graph f = check_fission(
        {{1, 2, 4, 5},
         {1, 1, 1.7, 0.6},
         {},
         {},
         attrs_of({{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string(coord)}})});
    EXPECT_EQ(count_op(f, "MatMul"), 0u);
    check_fission({{1, 1, 6, 5},
                   {},
                   {1, 1, 9, 3},
                   {},
                   attrs_of({{"mode", std::string("cubic")}, {"coordinate_transformation_mode", std::string(coord)}})});
  }
  check_fission({{1, 1, 6, 5},
                 {1, 1, 0.8, 2},
                 {},
                 {},
                 attrs_of({{"mode", std::string("cubic")}, {"exclude_outside", int64_t(1)}, {"cubic_coeff_a", -0.5}})});
}

TEST(ResizeFission, AntialiasDownsamplingIsMatMul) {
  for (const char* mode : {"linear", "cubic"}) {
    Graph f = check_fission(
        {{1, 2, 12, 10}, {}, {1, 2, 4, 3}, {}, attrs_of({{"mode", std::string(mode)}, {"antialias", int64_t(1)}})});
    EXPECT_EQ(count_op(f, "MatMul"), 2u);
  }
}

TEST(ResizeFission, CropAndResizeExtrapolates) {
  check_fission({{1, 1, 5, 6},
                 {},
                 {1, 1, 4, 7},
                 {0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3},
                 attrs_of({{"mode", std::string("linear")},
                           {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                           {"extrapolation_value", 7.5}})});
}

TEST(ResizeFission, CropAndResizeWithRuntimeRoi) {
  for (const char* mode : {"linear", "nearest", "floor", "ceil", "round_prefer_ceil"}) {
    bool linear = std::string(mode) == "linear";
    ResizeCase c{
        {1, 2, 5, 6},
        {},
        {1, 2, 4, 7},
        {0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3},
        attrs_of({{"mode", std::string(linear ? "linear" : "nearest")},
                  {"nearest_mode", std::string(linear || std::string(mode) == "nearest" ? "round_prefer_floor" : mode)},
                  {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                  {"extrapolation_value", -3.0}})};
    c.roi_input = true;
    Graph f = check_fission(c);
    EXPECT_EQ(count_op(f, "Where"), 1u);
  }
  ResizeCase cubic{{1, 1, 4, 4},
                   {},
                   {1, 1, 3, 3},
                   {0, 0, 0.1, 0.1, 1, 1, 0.9, 0.9},
                   attrs_of({{"mode", std::string("cubic")},
                             {"coordinate_transformation_mode", std::string("tf_crop_and_resize")}})};
  cubic.roi_input = true;
  EXPECT_THROW(fission::fission(resize_graph(cubic)), Error);
}

TEST(ResizeFission, IntegerNearestIsAGatherOfTheInputType) {
  ResizeCase c{{1, 3, 4, 4}, {1, 1, 2, 0.5}, {}, {}, attrs_of({{"mode", std::string("nearest")}})};
  c.dtype = DType::UInt8;
  Graph f = check_fission(c);
  EXPECT_EQ(count_op(f, "Cast"), 0u);
}

TEST(ResizeFission, AxesAndAspectRatio) {
  check_fission({{1, 2, 5, 6},
                 {},
                 {8, 8},
                 {},
                 attrs_of({{"mode", std::string("linear")},
                           {"axes", std::vector<int64_t>{2, 3}},
                           {"keep_aspect_ratio_policy", std::string("not_larger")}})});
  check_fission(
      {{2, 5, 6}, {}, {9}, {}, attrs_of({{"mode", std::string("nearest")}, {"axes", std::vector<int64_t>{-2}}})});
}

}  // namespace
}  // namespace orchid
