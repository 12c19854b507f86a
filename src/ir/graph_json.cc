#include "ir/graph_json.h"

#include <cmath>
#include <cstring>

#include "support/error.h"

namespace orchid {

using nlohmann::json;

namespace {

constexpr size_t kBlobAlignment = 64;

// JSON has no inf/nan: those doubles travel as strings.
json double_to_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

double double_from_json(const json& j) {
  if (j.is_number()) return j.get<double>();
  const std::string s = j.get<std::string>();
  if (s == "nan") return std::nan("");
  if (s == "inf") return INFINITY;
  if (s == "-inf") return -INFINITY;
  ORCHID_FAIL() << "'" << s << "' is not a number";
}

DType dtype_from_name(const std::string& name) {
  for (int code = 0; code <= int(DType::Bool); ++code) {
    if (name == dtype_name(DType(code))) return DType(code);
  }
  ORCHID_FAIL() << "unknown dtype '" << name << "'";
}

json tensor_to_json(const Tensor& tensor, std::string& blob) {
  blob.resize((blob.size() + kBlobAlignment - 1) / kBlobAlignment * kBlobAlignment, '\0');
  json j = {{"dtype", dtype_name(tensor.dtype())}, {"shape", tensor.shape()}, {"offset", blob.size()},
            {"bytes", tensor.nbytes()}};
  blob.append(static_cast<const char*>(tensor.raw()), tensor.nbytes());
  return j;
}

Tensor tensor_from_json(const json& j, const TensorBlob& blob) {
  const TensorType type{dtype_from_name(j.at("dtype").get<std::string>()), j.at("shape").get<Shape>()};
  for (int64_t d : type.shape) {
    if (d < 0) ORCHID_FAIL() << "negative dimension in " << type.to_string();
  }
  const size_t offset = j.at("offset").get<size_t>();
  const size_t bytes = j.at("bytes").get<size_t>();
  if (bytes != type.nbytes() || offset > blob.size || blob.size - offset < bytes) {
    ORCHID_FAIL() << "tensor data beyond the end of the weights file (offset " << offset << ", " << bytes
                  << " bytes; the file has " << blob.size << "): the file is truncated or from another compile";
  }
  Tensor tensor(type);
  if (bytes) blob.read(offset, bytes, tensor.raw());
  return tensor;
}

json attribute_to_json(const AttributeValue& value, std::string& blob) {
  if (auto* i = std::get_if<int64_t>(&value)) return {{"int", *i}};
  if (auto* f = std::get_if<double>(&value)) return {{"float", double_to_json(*f)}};
  if (auto* s = std::get_if<std::string>(&value)) return {{"string", *s}};
  if (auto* is = std::get_if<std::vector<int64_t>>(&value)) return {{"ints", *is}};
  if (auto* fs = std::get_if<std::vector<double>>(&value)) {
    json list = json::array();
    for (double f : *fs) list.push_back(double_to_json(f));
    return {{"floats", list}};
  }
  if (auto* ss = std::get_if<std::vector<std::string>>(&value)) return {{"strings", *ss}};
  return {{"tensor", tensor_to_json(std::get<Tensor>(value), blob)}};
}

AttributeValue attribute_from_json(const json& j, const TensorBlob& blob) {
  if (!j.is_object() || j.size() != 1) ORCHID_FAIL() << "an attribute must be an object with one key";
  const auto& [kind, v] = *j.items().begin();
  if (kind == "int") return v.get<int64_t>();
  if (kind == "float") return double_from_json(v);
  if (kind == "string") return v.get<std::string>();
  if (kind == "ints") return v.get<std::vector<int64_t>>();
  if (kind == "floats") {
    std::vector<double> fs;
    for (const json& f : v) fs.push_back(double_from_json(f));
    return fs;
  }
  if (kind == "strings") return v.get<std::vector<std::string>>();
  if (kind == "tensor") return tensor_from_json(v, blob);
  ORCHID_FAIL() << "unknown attribute kind '" << kind << "'";
}

ValueId checked_id(const json& j, const Graph& graph) {
  const int64_t id = j.get<int64_t>();
  if (id != kNoValue && (id < 0 || size_t(id) >= graph.num_values())) ORCHID_FAIL() << "value id " << id << " out of range";
  return ValueId(id);
}

std::vector<ValueId> ids_from_json(const json& j, const Graph& graph) {
  std::vector<ValueId> ids;
  for (const json& id : j) ids.push_back(checked_id(id, graph));
  return ids;
}

}  // namespace

json graph_to_json(const Graph& graph, std::string& blob) {
  json values = json::array();
  for (size_t id = 0; id < graph.num_values(); ++id) {
    const Value& value = graph.value(ValueId(id));
    json v = {{"name", value.name}, {"dtype", dtype_name(value.type.dtype)}, {"shape", value.type.shape}};
    if (value.constant) v["constant"] = tensor_to_json(*value.constant, blob);
    values.push_back(v);
  }
  json nodes = json::array();
  for (const Node& node : graph.nodes()) {
    json attrs = json::object();
    for (const auto& [name, value] : node.attrs.all()) attrs[name] = attribute_to_json(value, blob);
    json n = {{"name", node.name}, {"op", node.op}, {"inputs", node.inputs}, {"outputs", node.outputs}};
    if (!node.domain.empty()) n["domain"] = node.domain;
    if (!attrs.empty()) n["attrs"] = attrs;
    nodes.push_back(n);
  }
  return {{"name", graph.name}, {"inputs", graph.inputs()}, {"outputs", graph.outputs()}, {"values", values},
          {"nodes", nodes}};
}

Graph graph_from_json(const json& j, const TensorBlob& blob, const std::string& where) {
  try {
    Graph graph;
    graph.name = j.value("name", "");
    for (const json& v : j.at("values")) {
      if (v.contains("constant")) {
        graph.add_constant(v.at("name").get<std::string>(), tensor_from_json(v.at("constant"), blob));
      } else {
        graph.add_value(v.at("name").get<std::string>(),
                        {dtype_from_name(v.at("dtype").get<std::string>()), v.at("shape").get<Shape>()});
      }
    }
    for (const json& n : j.at("nodes")) {
      Node node;
      node.name = n.at("name").get<std::string>();
      node.op = n.at("op").get<std::string>();
      node.domain = n.value("domain", "");
      node.inputs = ids_from_json(n.at("inputs"), graph);
      node.outputs = ids_from_json(n.at("outputs"), graph);
      if (n.contains("attrs")) {
        for (const auto& [name, value] : n.at("attrs").items()) node.attrs.set(name, attribute_from_json(value, blob));
      }
      graph.add_node(std::move(node));
    }
    graph.inputs() = ids_from_json(j.at("inputs"), graph);
    graph.outputs() = ids_from_json(j.at("outputs"), graph);
    return graph;
  } catch (const json::exception& e) {
    ORCHID_FAIL() << where << ": malformed graph: " << e.what();
  } catch (const Error& e) {
    ORCHID_FAIL() << where << ": " << e.what();
  }
}

}  // namespace orchid
