#include "frontend/onnx/canonicalize.h"

#include <map>

#include "frontend/onnx/canonicalize_rules.h"

namespace orchid::onnx_frontend {

namespace {

const RuleTable& rule_table() {
  static const RuleTable table = [] {
    RuleTable t;
    add_layout_rules(t);
    add_reduce_rules(t);
    add_math_rules(t);
    add_resize_rules(t);
    return t;
  }();
  return table;
}

}  // namespace

void RuleTable::add(const std::string& op, CanonicalizeRule rule) {
  rules_[op].push_back(std::move(rule));
}

void canonicalize_node(Node& node, const CanonicalizeContext& ctx) {
  // A rule that renames the operator (Upsample -> Resize) emits the new
  // operator's canonical form itself, so rules run once per node.
  const auto& rules = rule_table().rules();
  auto it = rules.find(node.op);
  if (it == rules.end()) return;
  for (const auto& rule : it->second) rule(node, ctx);
}

void set_constant_input(Node& node, size_t index, Tensor value, const CanonicalizeContext& ctx) {
  if (node.inputs.size() <= index) node.inputs.resize(index + 1, kNoValue);
  node.inputs[index] = ctx.make_constant(node.name + "." + std::to_string(index), std::move(value));
}

void move_ints_attribute_to_input(Node& node, const std::string& attribute, size_t index,
                                  const CanonicalizeContext& ctx) {
  if (!node.attrs.has(attribute)) return;
  std::vector<int64_t> values = node.attrs.get_ints(attribute);
  node.attrs.erase(attribute);
  set_constant_input(node, index, Tensor::vector_i64(values), ctx);
}

}  // namespace orchid::onnx_frontend
