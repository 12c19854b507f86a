#include "ir/graph_printer.h"

#include <sstream>
#include <vector>

namespace orchid {

namespace {

template <typename T>
std::string print_list(const std::vector<T>& values) {
  std::ostringstream text;
  text << "[";
  for (size_t i = 0; i < values.size(); ++i) text << (i ? "," : "") << values[i];
  text << "]";
  return text.str();
}

std::string value_ref(const Graph& graph, ValueId id) {
  return id == kNoValue ? std::string("_") : "%" + graph.value(id).name;
}

std::string typed_ref(const Graph& graph, ValueId id) {
  if (id == kNoValue) return "_";
  return value_ref(graph, id) + ": " + graph.type(id).to_string();
}

}  // namespace

std::string print_attribute(const AttributeValue& value) {
  struct Printer {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const {
      std::ostringstream text;
      text << v;
      return text.str();
    }
    std::string operator()(const std::string& v) const { return "\"" + v + "\""; }
    std::string operator()(const std::vector<int64_t>& v) const { return print_list(v); }
    std::string operator()(const std::vector<double>& v) const { return print_list(v); }
    std::string operator()(const std::vector<std::string>& v) const { return print_list(v); }
    std::string operator()(const Tensor& v) const { return "tensor " + v.type().to_string(); }
  };
  return std::visit(Printer{}, value);
}

std::string print_graph(const Graph& graph) {
  std::ostringstream text;
  text << "graph " << (graph.name.empty() ? "main" : graph.name) << "\n";
  for (ValueId id : graph.inputs()) text << "  input " << typed_ref(graph, id) << "\n";
  for (size_t id = 0; id < graph.num_values(); ++id) {
    if (graph.value(ValueId(id)).is_constant()) text << "  const " << typed_ref(graph, ValueId(id)) << "\n";
  }
  for (const Node& node : graph.nodes()) {
    text << "  ";
    for (size_t i = 0; i < node.outputs.size(); ++i) text << (i ? ", " : "") << typed_ref(graph, node.outputs[i]);
    text << " = " << (node.domain.empty() ? "" : node.domain + ".") << node.op << "(";
    for (size_t i = 0; i < node.inputs.size(); ++i) text << (i ? ", " : "") << value_ref(graph, node.inputs[i]);
    text << ")";
    if (!node.attrs.all().empty()) {
      text << " {";
      bool first = true;
      for (const auto& [name, value] : node.attrs.all()) {
        text << (first ? "" : ", ") << name << "=" << print_attribute(value);
        first = false;
      }
      text << "}";
    }
    text << "  # " << node.name << "\n";
  }
  for (ValueId id : graph.outputs()) text << "  output " << value_ref(graph, id) << "\n";
  return text.str();
}

}  // namespace orchid
