#include "reference/verify_types.h"

#include "reference/op_registry.h"
#include "support/error.h"

namespace orchid::reference {

void verify_types(const Graph& graph) {
  for (const Node& node : graph.nodes()) {
    std::vector<const TensorType*> types;
    std::vector<const Tensor*> values;
    for (ValueId id : node.inputs) {
      const Value* value = id == kNoValue ? nullptr : &graph.value(id);
      types.push_back(value ? &value->type : nullptr);
      values.push_back(value && value->constant ? &*value->constant : nullptr);
    }
    std::vector<TensorType> inferred = infer_node(node, types, values);
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] == kNoValue) continue;
      ORCHID_CHECK(i < inferred.size() && inferred[i] == graph.type(node.outputs[i]))
          << node.describe() << " output " << i << " is recorded as " << graph.type(node.outputs[i]).to_string()
          << " but infers as " << (i < inferred.size() ? inferred[i].to_string() : std::string("nothing"));
    }
  }
}

}  // namespace orchid::reference
