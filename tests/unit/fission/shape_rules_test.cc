// Shape fission rules: each operator becomes layout primitives (or masks over
// constants) and agrees with the reference on random inputs.
#include "fission_test_util.h"

namespace orchid::fission {
namespace {

using namespace testing;

TEST(ShapeRules, IdentityDisappears) {
  Graph f = check_fission(one_node("Identity", {var({2, 3})}));
  EXPECT_TRUE(f.nodes().empty());
}

TEST(ShapeRules, DropoutPassesDataAndGivesAllTrueMask) {
  Graph f = check_fission(one_node("Dropout", {var({2, 3})}, {}, 2));
  EXPECT_TRUE(f.nodes().empty());
  const Value& mask = f.value(f.outputs()[1]);
  ASSERT_TRUE(mask.is_constant());
  EXPECT_EQ(mask.constant->to_f64_vector(), std::vector<double>(6, 1.0));
  check_fission(one_node("Dropout", {var({4}), cst(Tensor::scalar_f32(0.3f))}, {}, 2, {1}));
}

TEST(ShapeRules, SqueezeUnsqueezeFlattenBecomeReshape) {
  Graph f = check_fission(one_node("Squeeze", {var({2, 1, 3, 1}), ints({1, -1})}));
  EXPECT_EQ(count_ops(f, "Reshape"), 1);
  check_fission(one_node("Squeeze", {var({1, 3, 1})}));
  f = check_fission(one_node("Unsqueeze", {var({2, 3}), ints({0, -1})}));
  EXPECT_EQ(count_ops(f, "Reshape"), 1);
  f = check_fission(one_node("Flatten", {var({2, 3, 4, 5})}, attrs({{"axis", int64_t(-2)}})));
  EXPECT_EQ(count_ops(f, "Reshape"), 1);
  check_fission(one_node("Flatten", {var({2, 3})}, attrs({{"axis", int64_t(0)}})));
}

TEST(ShapeRules, SplitBecomesOneSlicePerOutput) {
  Graph f = check_fission(one_node("Split", {var({2, 7}), ints({2, 4, 1})}, attrs({{"axis", int64_t(1)}}), 3));
  EXPECT_EQ(count_ops(f, "Slice"), 3);
  // Equal chunks with a smaller last one; an unused output gets no Slice.
  f = check_fission(one_node("Split", {var({7, 2})}, {}, 3, {1}));
  EXPECT_EQ(count_ops(f, "Slice"), 2);
}

TEST(ShapeRules, TileBecomesExpandAndReshape) {
  Graph f = check_fission(one_node("Tile", {var({2, 1, 3}), ints({2, 3, 1})}));
  EXPECT_EQ(count_ops(f, "Expand"), 1);
  check_fission(one_node("Tile", {var({3}), ints({1})}));
  check_fission(one_node("Tile", {var({2, 3}), ints({0, 2})}));
}

TEST(ShapeRules, DepthToSpaceAndSpaceToDepthBothModes) {
  for (const char* mode : {"DCR", "CRD"}) {
    Attributes a = attrs({{"blocksize", int64_t(2)}, {"mode", std::string(mode)}});
    Graph f = check_fission(one_node("DepthToSpace", {var({2, 8, 3, 2})}, a));
    EXPECT_EQ(count_ops(f, "Transpose"), 1) << mode;
    f = check_fission(one_node("SpaceToDepth", {var({1, 3, 4, 6})}, a));
    EXPECT_EQ(count_ops(f, "Transpose"), 1) << mode;
  }
}

TEST(ShapeRules, PadModesBecomeGathers) {
  for (const char* mode : {"edge", "reflect", "wrap"}) {
    Attributes a = attrs({{"mode", std::string(mode)}});
    Graph f = check_fission(one_node("Pad", {var({3, 4}), ints({2, 0, 1, 3})}, a));
    EXPECT_EQ(count_ops(f, "Gather"), 2) << mode;  // only padded axes
    // Negative pads crop first; axes select the padded dimensions.
    check_fission(one_node("Pad", {var({2, 5, 4}), ints({-1, 5, 2, -2}), none(), ints({2, -2})}, a));
  }
}

TEST(ShapeRules, ConstantPadWithRuntimeValueSelectsIt) {
  Graph f = check_fission(one_node("Pad", {var({2, 3}), ints({1, 0, 0, 2}), var({})}));
  EXPECT_EQ(count_ops(f, "Where"), 1);
}

TEST(ShapeRules, TriluKeepsTriangleWithWhere) {
  for (int64_t upper : {0, 1}) {
    Attributes a = attrs({{"upper", upper}});
    Graph f = check_fission(one_node("Trilu", {var({2, 3, 5})}, a));
    EXPECT_EQ(count_ops(f, "Where"), 1);
    check_fission(one_node("Trilu", {var({4, 3}), cst(Tensor::scalar_i64(-1))}, a));
    check_fission(one_node("Trilu", {var({3, 4}), var({}, DType::Int64, -4, 4)}, a), 11);
  }
}

TEST(ShapeRules, OneHotComparesWithIota) {
  Input values = cst(DType::Float32, {2}, std::vector<float>{-1, 5});
  Input depth = cst(Tensor::scalar_i64(5));
  // Indices in [-7, 7): negative ones wrap, out-of-range ones give all-off.
  Graph f = check_fission(one_node("OneHot", {var({3, 4}, DType::Int64, -7, 7), depth, values}));
  EXPECT_EQ(count_ops(f, "Equal"), 1);
  check_fission(one_node("OneHot", {var({3, 4}, DType::Float32, -6, 6), depth, values},
                         attrs({{"axis", int64_t(1)}})));
  check_fission(one_node("OneHot", {var({3}, DType::Int32, 0, 5), depth, var({2})},
                         attrs({{"axis", int64_t(0)}})));
}

TEST(ShapeRules, CastLikeBecomesCast) {
  Graph f = check_fission(one_node("CastLike", {var({2, 3}), cst(Tensor::scalar_i64(0))}));
  EXPECT_EQ(count_ops(f, "Cast"), 1);
}

}  // namespace
}  // namespace orchid::fission
