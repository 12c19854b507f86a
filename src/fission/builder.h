// FissionBuilder: what a fission rule uses to emit primitives into the new
// graph. Every node added gets its output types from the reference shape
// inference; a node whose inputs are all constants is folded on the spot, so
// weight-only arithmetic (BatchNorm scale, Gemm's alpha * B) never reaches
// the program.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace orchid::fission {

class FissionBuilder {
 public:
  // New nodes and values are named "<origin>/<op>_<k>" after the node being
  // rewritten, so plans and errors still point at the model's node.
  FissionBuilder(Graph& graph, const Node& origin) : graph_(graph), origin_(origin) {}

  const Node& origin() const { return origin_; }
  // By value: adding nodes may reallocate the graph's value table.
  TensorType type(ValueId id) const { return graph_.type(id); }
  DType dtype(ValueId id) const { return graph_.type(id).dtype; }
  Shape shape(ValueId id) const { return graph_.type(id).shape; }
  size_t rank(ValueId id) const { return graph_.type(id).shape.size(); }
  // The value's data when it is a constant, else nullptr (valid until the
  // next add: copy the Tensor, which shares its storage, to keep it).
  const Tensor* constant_value(ValueId id) const;

  // Adds one operator node (a primitive, or an operator that a later rule
  // rewrites) and returns its outputs. `domain`: "" for ONNX's default
  // domain, "ai.orchid" for Orchid's own primitives (G2BMM, GBMM).
  std::vector<ValueId> add(const std::string& op, const std::vector<ValueId>& inputs, Attributes attrs = {},
                           size_t num_outputs = 1, const std::string& domain = "");
  ValueId add1(const std::string& op, const std::vector<ValueId>& inputs, Attributes attrs = {});

  ValueId constant(Tensor value);
  ValueId scalar(double value, DType dtype);  // a rank-0 constant
  ValueId ints(const std::vector<int64_t>& values);

  // Shorthands for the common primitives.
  ValueId unary(const std::string& op, ValueId x) { return add1(op, {x}); }
  ValueId binary(const std::string& op, ValueId a, ValueId b) { return add1(op, {a, b}); }
  ValueId reduce(const std::string& op, ValueId x, const std::vector<int64_t>& axes, bool keepdims);
  ValueId reshape(ValueId x, const Shape& shape);
  ValueId transpose(ValueId x, const std::vector<int64_t>& perm);
  ValueId slice(ValueId x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                const std::vector<int64_t>& axes, const std::vector<int64_t>& steps = {});
  ValueId concat(const std::vector<ValueId>& xs, int64_t axis);
  ValueId cast(ValueId x, DType dtype);

 private:
  std::string fresh_name(const std::string& op);

  Graph& graph_;
  const Node& origin_;
  int counter_ = 0;
};

}  // namespace orchid::fission
