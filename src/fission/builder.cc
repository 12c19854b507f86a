#include "fission/builder.h"

#include "reference/op_registry.h"
#include "support/error.h"

namespace orchid::fission {

const Tensor* FissionBuilder::constant_value(ValueId id) const {
  const Value& value = graph_.value(id);
  return value.constant ? &*value.constant : nullptr;
}

std::string FissionBuilder::fresh_name(const std::string& op) {
  return origin_.name + "/" + op + "_" + std::to_string(counter_++);
}

std::vector<ValueId> FissionBuilder::add(const std::string& op, const std::vector<ValueId>& inputs,
                                         Attributes attrs, size_t num_outputs, const std::string& domain) {
  Node node;
  node.op = op;
  node.domain = domain;
  node.name = fresh_name(op);
  node.inputs = inputs;
  node.attrs = std::move(attrs);
  node.outputs.assign(num_outputs, kNoValue);
  std::vector<const TensorType*> types;
  std::vector<const Tensor*> values;
  bool all_constant = true;
  for (ValueId id : inputs) {
    types.push_back(id == kNoValue ? nullptr : &graph_.type(id));
    values.push_back(id == kNoValue ? nullptr : constant_value(id));
    all_constant &= id == kNoValue || values.back() != nullptr;
  }
  std::vector<ValueId> outputs;
  if (all_constant) {
    std::vector<Tensor> folded = reference::evaluate_node(node, values);
    ORCHID_CHECK(folded.size() >= num_outputs) << node.describe() << " folded to too few outputs";
    for (size_t i = 0; i < num_outputs; ++i) outputs.push_back(graph_.add_constant(node.name + ":" + std::to_string(i), folded[i]));
    return outputs;
  }
  std::vector<TensorType> out_types = reference::infer_node(node, types, values);
  ORCHID_CHECK(out_types.size() >= num_outputs) << node.describe() << " infers too few outputs";
  for (size_t i = 0; i < num_outputs; ++i) {
    node.outputs[i] = graph_.add_value(node.name + ":" + std::to_string(i), out_types[i]);
    outputs.push_back(node.outputs[i]);
  }
  graph_.add_node(std::move(node));
  return outputs;
}

ValueId FissionBuilder::add1(const std::string& op, const std::vector<ValueId>& inputs, Attributes attrs) {
  return add(op, inputs, std::move(attrs), 1)[0];
}

ValueId FissionBuilder::constant(Tensor value) { return graph_.add_constant(fresh_name("const"), std::move(value)); }

ValueId FissionBuilder::scalar(double value, DType dtype) {
  Tensor t(dtype, {});
  t.set_f64(0, value);
  return constant(std::move(t));
}

ValueId FissionBuilder::ints(const std::vector<int64_t>& values) { return constant(Tensor::vector_i64(values)); }

ValueId FissionBuilder::reduce(const std::string& op, ValueId x, const std::vector<int64_t>& axes, bool keepdims) {
  Attributes attrs;
  attrs.set("keepdims", int64_t(keepdims));
  return add1(op, {x, ints(axes)}, std::move(attrs));
}

ValueId FissionBuilder::reshape(ValueId x, const Shape& shape) {
  if (this->shape(x) == shape) return x;
  return add1("Reshape", {x, ints(shape)});
}

ValueId FissionBuilder::transpose(ValueId x, const std::vector<int64_t>& perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == int64_t(i);
  if (identity) return x;
  Attributes attrs;
  attrs.set("perm", perm);
  return add1("Transpose", {x}, std::move(attrs));
}

ValueId FissionBuilder::slice(ValueId x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                              const std::vector<int64_t>& axes, const std::vector<int64_t>& steps) {
  std::vector<ValueId> inputs = {x, ints(starts), ints(ends), ints(axes)};
  if (!steps.empty()) inputs.push_back(ints(steps));
  return add1("Slice", inputs);
}

ValueId FissionBuilder::concat(const std::vector<ValueId>& xs, int64_t axis) {
  if (xs.size() == 1) return xs[0];
  Attributes attrs;
  attrs.set("axis", axis);
  return add1("Concat", xs, std::move(attrs));
}

ValueId FissionBuilder::cast(ValueId x, DType dtype) {
  if (this->dtype(x) == dtype) return x;
  Attributes attrs;
  attrs.set("to", int64_t(dtype_to_onnx(dtype)));
  return add1("Cast", {x}, std::move(attrs));
}

}  // namespace orchid::fission
