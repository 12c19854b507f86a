#include "fission_test_util.h"

namespace orchid::fission {
namespace {

using testing::check_fission;
using testing::count_ops;
using testing::cst;
using testing::one_node_graph;
using testing::random_tensor;
using testing::var;

Attributes attrs(std::initializer_list<std::pair<std::string, AttributeValue>> list) {
  Attributes a;
  for (const auto& [k, v] : list) a.set(k, v);
  return a;
}

Tensor channel(int64_t c, uint32_t seed, double lo = -2, double hi = 2) {
  return random_tensor(DType::Float32, {c}, seed, lo, hi);
}

TEST(NormalizationFission, SoftmaxSubtractsMax) {
  for (int64_t axis : {0, 1, -1}) {
    Graph f = check_fission(one_node_graph("Softmax", {var({3, 4, 5})}, attrs({{"axis", axis}})));
    EXPECT_EQ(count_ops(f, "ReduceMax"), 1);
    EXPECT_EQ(count_ops(f, "Exp"), 1);
  }
}

TEST(NormalizationFission, SoftmaxLegacy2dNormalizesTrailingDims) {
  Graph f = check_fission(one_node_graph("Softmax", {var({2, 3, 4})}, attrs({{"axis", int64_t(1)}, {"_legacy_2d", int64_t(1)}})));
  EXPECT_EQ(count_ops(f, "Reshape"), 2);
  check_fission(one_node_graph("LogSoftmax", {var({2, 3, 4})}, attrs({{"axis", int64_t(0)}, {"_legacy_2d", int64_t(1)}})));
  check_fission(one_node_graph("Hardmax", {var({2, 3, 4})}, attrs({{"axis", int64_t(1)}, {"_legacy_2d", int64_t(1)}})));
}

TEST(NormalizationFission, SoftmaxLargeInputsStayFinite) {
  Graph g = one_node_graph("Softmax", {var({2, 3})});
  Graph f = fission(g);
  Tensor x = Tensor::from_vector(DType::Float32, {2, 3}, std::vector<double>{1000, 1001, 1002, -1000, 0, 3});
  std::vector<Tensor> got = reference::run_graph(f, {{"in0", x}});
  std::vector<Tensor> want = reference::run_graph(g, {{"in0", x}});
  EXPECT_TRUE(reference::compare_tensors(got[0], want[0], 1e-5, 1e-7).ok);
}

TEST(NormalizationFission, LogSoftmaxAndHardmax) {
  check_fission(one_node_graph("LogSoftmax", {var({3, 4})}, attrs({{"axis", int64_t(0)}})));
  Graph f = check_fission(one_node_graph("Hardmax", {var({3, 4, 2})}, attrs({{"axis", int64_t(1)}})));
  EXPECT_EQ(count_ops(f, "ArgMax"), 1);
}

TEST(NormalizationFission, HardmaxTiesPickFirstIndex) {
  Graph g = one_node_graph("Hardmax", {var({1, 4})});
  Tensor x = Tensor::from_vector(DType::Float32, {1, 4}, std::vector<double>{1, 3, 3, 0});
  std::vector<Tensor> got = reference::run_graph(fission(g), {{"in0", x}});
  EXPECT_EQ(got[0].to_f64_vector(), (std::vector<double>{0, 1, 0, 0}));
}

TEST(NormalizationFission, LayerNormWithStatistics) {
  for (int64_t axis : {-1, 1, 0}) {
    Graph g = one_node_graph("LayerNormalization",
                             {var({2, 3, 4}), cst(random_tensor(DType::Float32, {4}, 1)),
                              cst(random_tensor(DType::Float32, {4}, 2))},
                             attrs({{"axis", axis}, {"epsilon", 1e-3}}), 3);
    check_fission(g);
  }
  check_fission(one_node_graph("LayerNormalization", {var({4, 6}), var({6})}));
}

TEST(NormalizationFission, BatchNormFoldsParameters) {
  Graph g = one_node_graph("BatchNormalization",
                           {var({2, 3, 4, 5}), cst(channel(3, 1)), cst(channel(3, 2)), cst(channel(3, 3)),
                            cst(channel(3, 4, 0.5, 2))},
                           attrs({{"epsilon", 1e-3}}));
  Graph f = check_fission(g);
  EXPECT_EQ(f.nodes().size(), 2u);  // one Mul, one Add: the parameters fold
  check_fission(one_node_graph("BatchNormalization", {var({2, 3}), cst(channel(3, 1)), cst(channel(3, 2)),
                                                      cst(channel(3, 3)), cst(channel(3, 4, 0.5, 2))}));
}

TEST(NormalizationFission, InstanceAndGroupNorm) {
  check_fission(one_node_graph("InstanceNormalization", {var({2, 3, 4, 5}), cst(channel(3, 1)), cst(channel(3, 2))}));
  check_fission(one_node_graph("GroupNormalization", {var({2, 6, 3, 2}), cst(channel(6, 1)), cst(channel(6, 2))},
                               attrs({{"num_groups", int64_t(3)}})));
  check_fission(one_node_graph("GroupNormalization", {var({2, 6, 5}), cst(channel(2, 1)), cst(channel(2, 2))},
                               attrs({{"num_groups", int64_t(2)}, {"_per_group_affine", int64_t(1)}})));
}

TEST(NormalizationFission, HalfInputsNormalizeInFloat32) {
  Graph f = check_fission(one_node_graph("Softmax", {var({4, 64}, DType::Float16)}));
  EXPECT_EQ(count_ops(f, "Cast"), 2);
  check_fission(one_node_graph("LayerNormalization", {var({4, 64}, DType::Float16), var({64}, DType::Float16)}));
  check_fission(one_node_graph("LpNormalization", {var({4, 64}, DType::Float16)}));
}

TEST(NormalizationFission, LpNormHandlesZeroRows) {
  check_fission(one_node_graph("LpNormalization", {var({3, 4})}, attrs({{"p", int64_t(1)}, {"axis", int64_t(0)}})));
  Graph g = one_node_graph("LpNormalization", {var({2, 2})});
  Tensor x = Tensor::from_vector(DType::Float32, {2, 2}, std::vector<double>{0, 0, 3, 4});
  EXPECT_EQ(reference::run_graph(fission(g), {{"in0", x}})[0].to_f64_vector(), (std::vector<double>{0, 0, 0.6f, 0.8f}));
}

TEST(NormalizationFission, LrnAndMvn) {
  for (int64_t size : {1, 2, 3, 5}) {
    check_fission(one_node_graph("LRN", {var({2, 6, 3, 3})}, attrs({{"size", size}, {"alpha", 0.1}})));
  }
  check_fission(one_node_graph("MeanVarianceNormalization", {var({2, 3, 4, 5})}));
  check_fission(one_node_graph("MeanVarianceNormalization", {var({2, 3, 4})}, attrs({{"axes", std::vector<int64_t>{1}}})));
}

}  // namespace
}  // namespace orchid::fission
