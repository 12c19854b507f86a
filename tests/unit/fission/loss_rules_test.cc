// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss fission: a one-hot
// mask (Equal against a class iota), Where and ReduceSum replace the gather
// along the class axis; SoftmaxCrossEntropyLoss adds a max-shifted
// log-softmax.
#include <gtest/gtest.h>

#include "fission_test_util.h"

namespace orchid::fission {
namespace {

using namespace testing;

struct LossCase {
  std::string reduction;
  std::optional<int64_t> ignore_index;
  bool weight;
  Shape shape;  // [N, C, d...]
};

Graph loss_graph(const std::string& op, const LossCase& c, DType target_dtype = DType::Int64) {
  Shape target(c.shape);
  target.erase(target.begin() + 1);
  Attributes attrs;
  attrs.set("reduction", c.reduction);
  if (c.ignore_index) attrs.set("ignore_index", *c.ignore_index);
  std::vector<Input> inputs = {var(c.shape), var(target, target_dtype)};
  if (c.weight) inputs.push_back(cst(random_tensor(DType::Float32, {c.shape[1]}, 3, 0.1, 2)));
  return one_node_graph(op, inputs, attrs, op == "SoftmaxCrossEntropyLoss" ? 2 : 1);
}

void check_loss(const std::string& op, const LossCase& c, DType target_dtype = DType::Int64) {
  Graph g = loss_graph(op, c, target_dtype);
  Graph f = fission(g);
  expect_all_primitive(f);
  EXPECT_EQ(count_ops(f, "GatherElements"), 0);
  EXPECT_GE(count_ops(f, "Equal"), 1);
  // Targets cover every class and ignore_index (when it is a class).
  int64_t classes = c.shape[1];
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::map<std::string, Tensor> feeds = random_feeds(g, seed, 0, classes);
    if (c.ignore_index && (*c.ignore_index < 0 || *c.ignore_index >= classes)) {
      // Put the out-of-range ignore_index at some positions.
      Tensor& t = feeds["in1"];
      for (int64_t i = 0; i < t.numel(); i += 3) t.set_f64(i, double(*c.ignore_index));
    }
    expect_same_outputs(g, f, feeds);
  }
}

TEST(LossFission, NllReductions) {
  for (const char* reduction : {"none", "sum", "mean"}) {
    check_loss("NegativeLogLikelihoodLoss", {reduction, std::nullopt, false, {3, 5}});
    check_loss("NegativeLogLikelihoodLoss", {reduction, std::nullopt, true, {2, 4, 3, 2}});
  }
}

TEST(LossFission, NllIgnoreIndex) {
  check_loss("NegativeLogLikelihoodLoss", {"mean", int64_t(1), true, {3, 4, 5}});
  check_loss("NegativeLogLikelihoodLoss", {"mean", int64_t(-1), false, {3, 4, 5}});
  check_loss("NegativeLogLikelihoodLoss", {"sum", int64_t(10), true, {3, 4, 5}}, DType::Int32);
  check_loss("NegativeLogLikelihoodLoss", {"none", int64_t(2), false, {3, 4}});
}

TEST(LossFission, SoftmaxCrossEntropyIsSafeLogSoftmax) {
  for (const char* reduction : {"none", "sum", "mean"}) {
    check_loss("SoftmaxCrossEntropyLoss", {reduction, std::nullopt, true, {3, 5, 2}});
    check_loss("SoftmaxCrossEntropyLoss", {reduction, int64_t(0), false, {3, 5}});
  }
  Graph f = fission(loss_graph("SoftmaxCrossEntropyLoss", {"mean", std::nullopt, false, {2, 3}}));
  EXPECT_EQ(count_ops(f, "ReduceMax"), 1);
  EXPECT_EQ(count_ops(f, "Exp"), 1);
}

TEST(LossFission, SoftmaxCrossEntropyLargeScoresStayFinite) {
  Graph g = loss_graph("SoftmaxCrossEntropyLoss", {"none", std::nullopt, false, {2, 3}});
  Graph f = fission(g);
  std::map<std::string, Tensor> feeds = random_feeds(g, 5, 0, 3);
  Tensor& x = feeds["in0"];
  for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, 1000.0 * double(i % 3));
  expect_same_outputs(g, f, feeds);
}

}  // namespace
}  // namespace orchid::fission
