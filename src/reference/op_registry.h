// The operator registry: for every supported operator, its shape inference
// (used by the importer and the verifier) and its reference implementation
// (the interpreter, Orchid's oracle).
//
// Operators are registered in the canonical form of graph.h (newest opset;
// attributes that became inputs are inputs). One family per file under
// reference/ops/, each exposing a register_*_ops function listed in ops.h.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace orchid::reference {

// Values a caller is willing to specialize a graph on (for example a test's
// input that feeds Reshape's shape): per node input, nullptr or a value.
// Inference records which of them it really needed in `used`.
struct Specialization {
  std::vector<const Tensor*> offered;
  mutable std::vector<size_t> used;
};

// What shape inference sees of one node.
class InferContext {
 public:
  InferContext(const Node& node, std::vector<const TensorType*> types,
               std::vector<const Tensor*> values, const Specialization* specialization = nullptr)
      : node_(node), types_(std::move(types)), values_(std::move(values)),
        specialization_(specialization) {}

  const Node& node() const { return node_; }
  const Attributes& attrs() const { return node_.attrs; }
  size_t num_inputs() const { return types_.size(); }
  // False for an omitted optional input (or one past the end).
  bool has_input(size_t i) const { return i < types_.size() && types_[i] != nullptr; }
  // The input's type; orchid::Error when the input is missing.
  const TensorType& input(size_t i) const;
  // The input's value when it is a constant at import time, else nullptr.
  const Tensor* value(size_t i) const { return i < values_.size() ? values_[i] : nullptr; }
  // The input's value, which this operator needs to know its output shape
  // (Reshape's shape, Slice's starts, ...). When it is not a constant but the
  // caller offered a value to specialize on, that value is used and recorded.
  // orchid::Error naming `what` otherwise.
  const Tensor& require_value(size_t i, const char* what) const;

 private:
  const Node& node_;
  std::vector<const TensorType*> types_;
  std::vector<const Tensor*> values_;
  const Specialization* specialization_;
};

// What the reference implementation sees of one node: its inputs (nullptr for
// omitted optional ones) and the output types that inference computed.
struct EvalContext {
  const Node& node;
  std::vector<const Tensor*> inputs;
  std::vector<TensorType> output_types;

  const Attributes& attrs() const { return node.attrs; }
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  const Tensor& input(size_t i) const;
};

using InferFn = std::function<std::vector<TensorType>(const InferContext&)>;
using EvalFn = std::function<std::vector<Tensor>(const EvalContext&)>;

struct OpSchema {
  std::string op;
  std::string domain;  // "" = the default ONNX domain
  InferFn infer;
  EvalFn eval;
  size_t min_inputs = 0;
  size_t max_inputs = SIZE_MAX;
};

class OpRegistry {
 public:
  // The registry with every operator of ops.h registered.
  static const OpRegistry& global();

  void add(OpSchema schema);
  const OpSchema* find(const std::string& domain, const std::string& op) const;
  std::vector<std::string> op_names() const;  // sorted, "domain.op" outside the default domain

 private:
  std::vector<OpSchema> schemas_;
};

// Runs shape inference for a node; checks the input count; the error names
// the node. `values` may hold nullptr for non-constant inputs.
std::vector<TensorType> infer_node(const Node& node, const std::vector<const TensorType*>& types,
                                   const std::vector<const Tensor*>& values,
                                   const Specialization* specialization = nullptr);

// Evaluates one node with its reference implementation. Output types are
// inferred from the inputs' types and values.
std::vector<Tensor> evaluate_node(const Node& node, const std::vector<const Tensor*>& inputs);

}  // namespace orchid::reference
