#include "fission_test_util.h"

namespace orchid::fission {
namespace {

using testing::check_fission;
using testing::count_ops;
using testing::cst;
using testing::one_node_graph;
using testing::random_tensor;
using testing::var;

Attributes gemm_attrs(int64_t ta, int64_t tb, double alpha, double beta) {
  Attributes a;
  a.set("transA", ta);
  a.set("transB", tb);
  a.set("alpha", alpha);
  a.set("beta", beta);
  return a;
}

TEST(LinearFission, GemmTransposesAndScales) {
  for (int64_t ta : {0, 1}) {
    for (int64_t tb : {0, 1}) {
      Shape a = ta ? Shape{4, 3} : Shape{3, 4};
      Shape w = tb ? Shape{5, 4} : Shape{4, 5};
      check_fission(one_node_graph("Gemm", {var(a), var(w), var({5})}, gemm_attrs(ta, tb, 0.5, 2.0)));
      check_fission(one_node_graph("Gemm", {var(a), var(w), var({3, 1})}, gemm_attrs(ta, tb, 1.0, 1.0)));
    }
  }
}

TEST(LinearFission, GemmFoldsConstantWeight) {
  Graph g = one_node_graph("Gemm",
                           {var({3, 4}), cst(random_tensor(DType::Float32, {5, 4}, 1)),
                            cst(random_tensor(DType::Float32, {5}, 2))},
                           gemm_attrs(0, 1, 0.25, 3.0));
  Graph f = check_fission(g);
  // transB and alpha fold into the weight, beta into C: MatMul + Add remain.
  EXPECT_EQ(f.nodes().size(), 2u);
  EXPECT_EQ(count_ops(f, "MatMul"), 1);
  check_fission(one_node_graph("Gemm", {var({3, 4}), var({4, 5})}));
}

TEST(LinearFission, GemmIntegerAlphaTruncatesLikeReference) {
  check_fission(one_node_graph("Gemm", {var({3, 4}, DType::Int32), var({4, 5}, DType::Int32), var({5}, DType::Int32)},
                               gemm_attrs(0, 0, 0.5, 3.0)));
}

Graph einsum(const std::string& equation, const std::vector<Shape>& shapes) {
  Attributes a;
  a.set("equation", equation);
  std::vector<testing::Input> inputs;
  for (const Shape& s : shapes) inputs.push_back(var(s));
  return one_node_graph("Einsum", inputs, a);
}

TEST(LinearFission, EinsumCommonForms) {
  check_fission(einsum("bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}));
  check_fission(einsum("ij->ji", {{3, 4}}));
  check_fission(einsum("ii->i", {{4, 4}}));
  check_fission(einsum("i,i", {{5}, {5}}));
  check_fission(einsum("...ij,...jk->...ik", {{2, 1, 3, 4}, {3, 4, 5}}));
  check_fission(einsum("ij->", {{3, 4}}));
  check_fission(einsum("ij,jk", {{3, 4}, {4, 2}}));
  check_fission(einsum("bii->bi", {{2, 3, 3}}));
  check_fission(einsum("...ii->...i", {{3, 5, 5}}));
  check_fission(einsum("i,j->ij", {{3}, {4}}));
  check_fission(einsum("ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}));
  check_fission(einsum("bhqd, bhkd -> bhqk", {{1, 2, 3, 4}, {1, 2, 5, 4}}));
  check_fission(einsum("ijk,ik->j", {{2, 3, 4}, {2, 4}}));
  check_fission(einsum("iij,jk->ik", {{3, 3, 2}, {2, 4}}));
  check_fission(einsum("a...b,b...->a...", {{2, 3, 4}, {4, 3}}));
  check_fission(einsum("...ij,...jk", {{2, 3, 4}, {1, 4, 5}}));
  check_fission(einsum("...i,...i->...", {{3, 1, 4}, {2, 4}}));
}

TEST(LinearFission, EinsumOuterProductIsElementwise) {
  Graph f = check_fission(einsum("bi,bj->bij", {{2, 3}, {2, 4}}));
  EXPECT_EQ(count_ops(f, "MatMul"), 0);
  EXPECT_EQ(count_ops(f, "Mul"), 1);
}

TEST(LinearFission, EinsumBatchMatMulIsOneMatMul) {
  Graph f = check_fission(einsum("bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}));
  EXPECT_EQ(count_ops(f, "MatMul"), 1);
  EXPECT_EQ(f.nodes().size(), 1u);
}

}  // namespace
}  // namespace orchid::fission
