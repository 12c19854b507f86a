#include "reference/interpreter.h"

#include "reference/op_registry.h"
#include "support/error.h"

namespace orchid::reference {

void check_feed(const Value& input, const Tensor& tensor) {
  if (tensor.dtype() != input.type.dtype) {
    ORCHID_FAIL() << "input '" << input.name << "': expected dtype " << dtype_name(input.type.dtype)
                  << ", got " << dtype_name(tensor.dtype());
  }
  if (tensor.shape() != input.type.shape) {
    ORCHID_FAIL() << "input '" << input.name << "': expected shape "
                  << shape_to_string(input.type.shape) << ", got " << shape_to_string(tensor.shape());
  }
}

std::vector<Tensor> run_graph(const Graph& graph, const std::map<std::string, Tensor>& feeds) {
  std::vector<Tensor> values(graph.num_values());
  for (size_t id = 0; id < graph.num_values(); ++id) {
    const Value& value = graph.value(ValueId(id));
    if (value.constant) values[id] = *value.constant;
  }
  for (ValueId input : graph.inputs()) {
    const Value& value = graph.value(input);
    auto it = feeds.find(value.name);
    if (it == feeds.end()) ORCHID_FAIL() << "no tensor given for graph input '" << value.name << "'";
    check_feed(value, it->second);
    values[size_t(input)] = it->second;
  }
  for (const Node& node : graph.nodes()) {
    std::vector<const Tensor*> inputs;
    for (ValueId id : node.inputs) {
      if (id == kNoValue) {
        inputs.push_back(nullptr);
        continue;
      }
      ORCHID_CHECK(values[size_t(id)].defined())
          << node.describe() << " reads '" << graph.value(id).name << "' before it is computed";
      inputs.push_back(&values[size_t(id)]);
    }
    std::vector<Tensor> outputs = evaluate_node(node, inputs);
    for (size_t i = 0; i < node.outputs.size() && i < outputs.size(); ++i) {
      if (node.outputs[i] != kNoValue) values[size_t(node.outputs[i])] = std::move(outputs[i]);
    }
    // Free intermediates no later node reads? Kept simple: all stay alive.
  }
  std::vector<Tensor> results;
  for (ValueId output : graph.outputs()) results.push_back(values[size_t(output)]);
  return results;
}

}  // namespace orchid::reference
