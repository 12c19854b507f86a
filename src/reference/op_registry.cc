#include "reference/op_registry.h"

#include <algorithm>

#include "reference/ops/ops.h"
#include "support/error.h"

namespace orchid::reference {

const TensorType& InferContext::input(size_t i) const {
  if (!has_input(i)) {
    ORCHID_FAIL() << node_.describe() << ": input " << i << " is required but missing";
  }
  return *types_[i];
}

const Tensor& InferContext::require_value(size_t i, const char* what) const {
  input(i);  // errors when missing
  if (!value(i)) {
    if (specialization_ && i < specialization_->offered.size() && specialization_->offered[i]) {
      specialization_->used.push_back(i);
      return *specialization_->offered[i];
    }
    ORCHID_FAIL() << node_.describe() << ": input " << i << " (" << what
                  << ") must be known when the model is loaded (a constant or computable from "
                     "constants); Orchid needs static shapes";
  }
  return *values_[i];
}

const Tensor& EvalContext::input(size_t i) const {
  if (!has_input(i)) {
    ORCHID_FAIL() << node.describe() << ": input " << i << " is required but missing";
  }
  return *inputs[i];
}

const OpRegistry& OpRegistry::global() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_elementwise_ops(r);
    register_activation_ops(r);
    register_reduce_ops(r);
    register_normalization_ops(r);
    register_linear_ops(r);
    register_pool_ops(r);
    register_layout_ops(r);
    register_index_ops(r);
    register_resize_ops(r);
    register_misc_ops(r);
    register_loss_ops(r);
    register_recurrent_ops(r);
    register_quantize_ops(r);
    register_signal_ops(r);
    register_detection_ops(r);
    register_banded_ops(r);
    return r;
  }();
  return registry;
}

void OpRegistry::add(OpSchema schema) {
  ORCHID_CHECK(find(schema.domain, schema.op) == nullptr) << "operator registered twice: " << schema.op;
  ORCHID_CHECK(schema.infer && schema.eval) << "operator without infer/eval: " << schema.op;
  schemas_.push_back(std::move(schema));
}

const OpSchema* OpRegistry::find(const std::string& domain, const std::string& op) const {
  const std::string& d = domain == "ai.onnx" ? std::string() : domain;
  for (const auto& schema : schemas_) {
    if (schema.op == op && schema.domain == d) return &schema;
  }
  return nullptr;
}

std::vector<std::string> OpRegistry::op_names() const {
  std::vector<std::string> names;
  for (const auto& schema : schemas_) {
    names.push_back(schema.domain.empty() ? schema.op : schema.domain + "." + schema.op);
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

const OpSchema& schema_for(const Node& node) {
  const OpSchema* schema = OpRegistry::global().find(node.domain, node.op);
  if (!schema) ORCHID_FAIL() << node.describe() << ": unsupported operator";
  return *schema;
}

}  // namespace

std::vector<TensorType> infer_node(const Node& node, const std::vector<const TensorType*>& types,
                                   const std::vector<const Tensor*>& values,
                                   const Specialization* specialization) {
  const OpSchema& schema = schema_for(node);
  if (types.size() < schema.min_inputs || types.size() > schema.max_inputs) {
    ORCHID_FAIL() << node.describe() << ": expected " << schema.min_inputs
                  << (schema.max_inputs == schema.min_inputs
                          ? std::string()
                          : " to " + (schema.max_inputs == SIZE_MAX ? std::string("any number")
                                                                    : std::to_string(schema.max_inputs)))
                  << " inputs, got " << types.size();
  }
  try {
    return schema.infer(InferContext(node, types, values, specialization));
  } catch (const Error& error) {
    std::string message = error.what();
    if (message.rfind("node '", 0) == 0) throw;
    throw Error(node.describe() + ": " + message);
  }
}

std::vector<Tensor> evaluate_node(const Node& node, const std::vector<const Tensor*>& inputs) {
  std::vector<const TensorType*> types;
  for (const Tensor* input : inputs) types.push_back(input ? &input->type() : nullptr);
  std::vector<TensorType> output_types = infer_node(node, types, inputs);
  const OpSchema& schema = schema_for(node);
  try {
    return schema.eval(EvalContext{node, inputs, std::move(output_types)});
  } catch (const Error& error) {
    std::string message = error.what();
    if (message.rfind("node '", 0) == 0) throw;
    throw Error(node.describe() + ": " + message);
  }
}

}  // namespace orchid::reference
