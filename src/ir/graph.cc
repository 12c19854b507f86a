#include "ir/graph.h"

#include "support/error.h"

namespace orchid {

namespace {

template <typename T>
const T* typed_attribute(const std::map<std::string, AttributeValue>& values,
                         const std::string& name, const char* expected) {
  auto it = values.find(name);
  if (it == values.end()) return nullptr;
  const T* value = std::get_if<T>(&it->second);
  if (!value) ORCHID_FAIL() << "attribute '" << name << "' should be " << expected;
  return value;
}

}  // namespace

int64_t Attributes::get_int(const std::string& name, int64_t fallback) const {
  const auto* v = typed_attribute<int64_t>(values_, name, "an integer");
  return v ? *v : fallback;
}

double Attributes::get_float(const std::string& name, double fallback) const {
  auto it = values_.find(name);
  if (it != values_.end()) {
    if (const auto* i = std::get_if<int64_t>(&it->second)) return double(*i);
  }
  const auto* v = typed_attribute<double>(values_, name, "a float");
  return v ? *v : fallback;
}

std::string Attributes::get_string(const std::string& name, const std::string& fallback) const {
  const auto* v = typed_attribute<std::string>(values_, name, "a string");
  return v ? *v : fallback;
}

std::vector<int64_t> Attributes::get_ints(const std::string& name,
                                          std::vector<int64_t> fallback) const {
  auto it = values_.find(name);
  if (it != values_.end()) {
    if (const auto* i = std::get_if<int64_t>(&it->second)) return {*i};
  }
  const auto* v = typed_attribute<std::vector<int64_t>>(values_, name, "a list of integers");
  return v ? *v : fallback;
}

std::vector<double> Attributes::get_floats(const std::string& name,
                                           std::vector<double> fallback) const {
  const auto* v = typed_attribute<std::vector<double>>(values_, name, "a list of floats");
  return v ? *v : fallback;
}

std::vector<std::string> Attributes::get_strings(const std::string& name) const {
  const auto* v = typed_attribute<std::vector<std::string>>(values_, name, "a list of strings");
  return v ? *v : std::vector<std::string>{};
}

const Tensor* Attributes::get_tensor(const std::string& name) const {
  return typed_attribute<Tensor>(values_, name, "a tensor");
}

int64_t Attributes::require_int(const std::string& name) const {
  if (!has(name)) ORCHID_FAIL() << "missing required attribute '" << name << "'";
  return get_int(name, 0);
}

std::vector<int64_t> Attributes::require_ints(const std::string& name) const {
  if (!has(name)) ORCHID_FAIL() << "missing required attribute '" << name << "'";
  return get_ints(name);
}

std::string Node::describe() const {
  std::string text = "node '" + name + "' (";
  if (!domain.empty()) text += domain + ".";
  return text + op + ")";
}

ValueId Graph::add_value(std::string name, TensorType type) {
  values_.push_back(Value{std::move(name), std::move(type), std::nullopt});
  return ValueId(values_.size() - 1);
}

ValueId Graph::add_constant(std::string name, Tensor data) {
  TensorType type = data.type();
  values_.push_back(Value{std::move(name), std::move(type), std::move(data)});
  return ValueId(values_.size() - 1);
}

Node& Graph::add_node(Node node) {
  nodes_.push_back(std::move(node));
  return nodes_.back();
}

std::optional<ValueId> Graph::find_value(const std::string& name) const {
  for (size_t i = 0; i < values_.size(); ++i) {
    if (values_[i].name == name) return ValueId(i);
  }
  return std::nullopt;
}

}  // namespace orchid
