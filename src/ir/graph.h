// The Graph IR: nodes (an operator kind plus attributes) over values (typed
// tensors with a static shape, optionally constant). The same Graph type holds
// ONNX-level operators and, later, primitives.
//
// Operators use the canonical form of the newest ONNX opset Orchid knows:
// attributes that became inputs in later opsets (Reshape shape, Squeeze axes,
// Clip min/max, Pad pads, Slice starts/ends, ReduceX axes, ...) are inputs.
// The ONNX importer rewrites older opsets into this form.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/tensor.h"

namespace orchid {

using ValueId = int32_t;
constexpr ValueId kNoValue = -1;  // an omitted optional input

struct Value {
  std::string name;
  TensorType type;
  std::optional<Tensor> constant;  // initializers and folded constants
  bool is_constant() const { return constant.has_value(); }
};

// Attribute values; ONNX graph-valued attributes (If/Loop/Scan bodies) are not
// supported.
using AttributeValue = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                                    std::vector<double>, std::vector<std::string>, Tensor>;

class Attributes {
 public:
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  void set(const std::string& name, AttributeValue value) { values_[name] = std::move(value); }
  void erase(const std::string& name) { values_.erase(name); }
  const std::map<std::string, AttributeValue>& all() const { return values_; }

  // Typed getters; the default is returned when the attribute is absent, and a
  // wrongly typed attribute is a user error (orchid::Error).
  int64_t get_int(const std::string& name, int64_t fallback) const;
  double get_float(const std::string& name, double fallback) const;
  std::string get_string(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> get_ints(const std::string& name, std::vector<int64_t> fallback = {}) const;
  std::vector<double> get_floats(const std::string& name, std::vector<double> fallback = {}) const;
  std::vector<std::string> get_strings(const std::string& name) const;
  const Tensor* get_tensor(const std::string& name) const;
  // Required variants: throw orchid::Error naming the attribute when absent.
  int64_t require_int(const std::string& name) const;
  std::vector<int64_t> require_ints(const std::string& name) const;

 private:
  std::map<std::string, AttributeValue> values_;
};

struct Node {
  std::string name;    // unique within the graph; the importer invents one if the model has none
  std::string op;      // "Conv", "Add", ...
  std::string domain;  // "" for the default ONNX domain
  std::vector<ValueId> inputs;   // kNoValue for an omitted optional input
  std::vector<ValueId> outputs;  // kNoValue for an unused optional output
  Attributes attrs;

  // "node 'conv1' (Conv)": how errors name a node.
  std::string describe() const;
};

class Graph {
 public:
  ValueId add_value(std::string name, TensorType type);
  ValueId add_constant(std::string name, Tensor data);
  Node& add_node(Node node);

  Value& value(ValueId id) { return values_.at(size_t(id)); }
  const Value& value(ValueId id) const { return values_.at(size_t(id)); }
  const TensorType& type(ValueId id) const { return value(id).type; }
  std::optional<ValueId> find_value(const std::string& name) const;
  size_t num_values() const { return values_.size(); }

  std::vector<Node>& nodes() { return nodes_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<ValueId>& inputs() { return inputs_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  std::vector<ValueId>& outputs() { return outputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }

  std::string name;

 private:
  std::vector<Value> values_;
  std::vector<Node> nodes_;  // kept in a topological order
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
};

}  // namespace orchid
