#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ir/graph_printer.h"
#include "ir/graph_verifier.h"
#include "reference/interpreter.h"
#include "reference/verify_types.h"
#include "support/error.h"

namespace orchid {
namespace {

// y = Relu(x + w)
Graph small_graph() {
  Graph g;
  g.name = "small";
  ValueId x = g.add_value("x", {DType::Float32, {2, 3}});
  ValueId w = g.add_constant("w", Tensor::from_vector(DType::Float32, {3}, std::vector<float>{1, -2, 3}));
  ValueId s = g.add_value("s", {DType::Float32, {2, 3}});
  ValueId y = g.add_value("y", {DType::Float32, {2, 3}});
  g.inputs() = {x};
  g.add_node(Node{"add", "Add", "", {x, w}, {s}, {}});
  g.add_node(Node{"relu", "Relu", "", {s}, {y}, {}});
  g.outputs() = {y};
  return g;
}

TEST(GraphPrinter, PrintsInputsConstantsNodesOutputs) {
  EXPECT_EQ(print_graph(small_graph()),
            "graph small\n"
            "  input %x: float32[2x3]\n"
            "  const %w: float32[3]\n"
            "  %s: float32[2x3] = Add(%x, %w)  # add\n"
            "  %y: float32[2x3] = Relu(%s)  # relu\n"
            "  output %y\n");
}

TEST(GraphVerifier, AcceptsWellFormedGraph) {
  Graph g = small_graph();
  EXPECT_NO_THROW(verify_graph(g));
  EXPECT_NO_THROW(reference::verify_types(g));
}

TEST(GraphVerifier, RejectsUseBeforeDefinition) {
  Graph g = small_graph();
  std::swap(g.nodes()[0], g.nodes()[1]);
  EXPECT_THROW(verify_graph(g), InternalError);
}

TEST(GraphVerifier, RejectsDoubleDefinition) {
  Graph g = small_graph();
  g.nodes()[1].outputs = {g.nodes()[0].outputs[0]};
  EXPECT_THROW(verify_graph(g), InternalError);
}

TEST(GraphVerifier, RejectsWrongRecordedType) {
  Graph g = small_graph();
  g.value(g.outputs()[0]).type.shape = {3, 2};
  EXPECT_THROW(reference::verify_types(g), InternalError);
}

TEST(Interpreter, RunsGraphAndChecksFeeds) {
  Graph g = small_graph();
  Tensor x = Tensor::from_vector(DType::Float32, {2, 3}, std::vector<float>{0, 0, 0, -5, 5, -5});
  auto out = reference::run_graph(g, {{"x", x}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to_f64_vector(), (std::vector<double>{1, 0, 3, 0, 3, 0}));
  EXPECT_THROW(reference::run_graph(g, {}), Error);
  EXPECT_THROW(reference::run_graph(g, {{"x", Tensor(DType::Float32, {3, 2})}}), Error);
  EXPECT_THROW(reference::run_graph(g, {{"x", Tensor(DType::Int64, {2, 3})}}), Error);
}

}  // namespace
}  // namespace orchid
