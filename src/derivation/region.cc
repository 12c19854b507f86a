// Regions: a linear primitive with its single-use layout producers inlined
// (region.h).
#include "derivation/region.h"

#include <functional>
#include <sstream>
#include <unordered_map>

#include "fission/primitive.h"
#include "fission/primitive_expr.h"
#include "ir/expr_utils.h"
#include "ir/graph_printer.h"
#include "ir/graph_utils.h"

namespace orchid::derivation {

using namespace expr;

namespace {

constexpr size_t kMaxAbsorbed = 8;

std::string value_tensor_name(ValueId id) { return "v" + std::to_string(id); }

// `e` with every access to the tensor called `name` (at any depth) reading
// `source` instead, at the same indices.
Expr replace_tensor(Expr e, const std::string& name, Expr source) {
  std::unordered_map<Expr, Expr> memo;
  std::function<Expr(Expr)> go = [&](Expr n) -> Expr {
    if (n->is_index() || n->is<ConstNode>()) return n;
    auto it = memo.find(n);
    if (it != memo.end()) return it->second;
    Expr out;
    const auto* a = n->try_as<AccessNode>();
    if (a && a->source()->is<TensorNode>()) {
      out = a->source()->as<TensorNode>().name() == name ? access(source, a->indices()) : n;
    } else if (n->is<TensorNode>()) {
      out = n;
    } else {
      out = map_children(n, go);
    }
    memo[n] = out;
    return out;
  };
  return go(e);
}

// Renames the tensors of `e` by `names` (old -> new), keeping shape and pads.
Expr rename_tensors(Expr e, const std::map<std::string, std::string>& names) {
  for (Expr t : free_tensors(e)) {
    const auto& tn = t->as<TensorNode>();
    auto it = names.find(tn.name());
    if (it == names.end() || it->second == tn.name()) continue;
    e = replace_tensor(e, tn.name(), tensor(it->second, tn.shape(), tn.pads()));
  }
  return e;
}

// The primitive's expression with its tensors named after the graph values
// they read ("v<id>").
std::optional<Expr> value_named_expr(const Node& node, const Graph& graph, std::string* why_not) {
  std::optional<Expr> e = fission::primitive_expr(node, graph, why_not);
  if (!e) return std::nullopt;
  std::map<std::string, std::string> names;
  for (const auto& [name, id] : fission::primitive_expr_bindings(node, *e)) names[name] = value_tensor_name(id);
  // Two steps through temporary names: "in1" -> "v0" must not meet an "in0" -> ... chain.
  std::map<std::string, std::string> to_tmp, from_tmp;
  for (const auto& [from, to] : names) {
    to_tmp[from] = "tmp_" + to;
    from_tmp["tmp_" + to] = to;
  }
  return rename_tensors(rename_tensors(*e, to_tmp), from_tmp);
}

ValueId value_of_tensor(const std::string& name) { return ValueId(std::stol(name.substr(1))); }

std::string node_signature(const Node& node, const Graph& graph) {
  std::ostringstream out;
  out << node.op;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == kNoValue) continue;
    const Value& v = graph.value(node.inputs[i]);
    out << (i ? " * " : " ");
    for (size_t d = 0; d < v.type.shape.size(); ++d) out << (d ? "x" : "") << v.type.shape[d];
    if (v.is_constant()) out << "(const)";
  }
  for (const auto& [name, value] : node.attrs.all()) out << " " << name << "=" << print_attribute(value);
  return out.str();
}

}  // namespace

RegionBuilder::RegionBuilder(const Graph& graph)
    : graph_(graph),
      producer_(producer_nodes(graph)),
      consumers_(graph.num_values(), 0),
      is_graph_output_(graph.num_values(), false) {
  for (const Node& node : graph.nodes()) {
    std::vector<ValueId> seen;
    for (ValueId id : node.inputs) {
      if (id == kNoValue || std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
      seen.push_back(id);
      ++consumers_[size_t(id)];
    }
  }
  for (ValueId id : graph.outputs()) is_graph_output_[size_t(id)] = true;
}

bool RegionBuilder::absorbable(ValueId value) const {
  size_t p = producer_[size_t(value)];
  if (p == kNoNode || consumers_[size_t(value)] != 1 || is_graph_output_[size_t(value)]) return false;
  const Node& node = graph_.nodes()[p];
  return fission::primitive_kind(node, graph_) == fission::PrimitiveKind::Layout && node.outputs.size() == 1;
}

std::optional<Region> RegionBuilder::region(size_t index, std::string* why_not) const {
  const Node& node = graph_.nodes()[index];
  std::optional<Expr> e = value_named_expr(node, graph_, why_not);
  if (!e) return std::nullopt;
  Region region;
  region.nodes.push_back(index);
  std::string producers;
  for (bool changed = true; changed && region.nodes.size() <= kMaxAbsorbed;) {
    changed = false;
    for (Expr t : free_tensors(*e)) {
      ValueId id = value_of_tensor(t->as<TensorNode>().name());
      if (!absorbable(id)) continue;
      const Node& producer = graph_.nodes()[producer_[size_t(id)]];
      std::optional<Expr> pe = value_named_expr(producer, graph_, nullptr);
      if (!pe) continue;
      *e = replace_tensor(*e, t->as<TensorNode>().name(), *pe);
      region.nodes.insert(region.nodes.begin(), producer_[size_t(id)]);
      producers += " <- " + node_signature(producer, graph_);
      changed = true;
      break;  // free tensors changed
    }
  }
  std::map<std::string, std::string> canonical;
  for (Expr t : free_tensors(*e)) {
    const std::string& name = t->as<TensorNode>().name();
    std::string leaf = "t" + std::to_string(canonical.size());
    canonical[name] = leaf;
    region.inputs[leaf] = value_of_tensor(name);
  }
  std::map<std::string, std::string> to_tmp, from_tmp;
  for (const auto& [from, to] : canonical) {
    to_tmp[from] = "tmp_" + to;
    from_tmp["tmp_" + to] = to;
  }
  region.expr = rename_tensors(rename_tensors(*e, to_tmp), from_tmp);
  region.signature = node_signature(node, graph_) + producers;
  return region;
}

ValueId copy_leaf(const Graph& from, ValueId id, Graph& to, std::map<ValueId, ValueId>& copied) {
  if (id == kNoValue) return kNoValue;
  auto it = copied.find(id);
  if (it != copied.end()) return it->second;
  const Value& v = from.value(id);
  ValueId nid;
  if (v.is_constant()) {
    nid = to.add_constant(v.name, *v.constant);
  } else {
    nid = to.add_value(v.name, v.type);
    to.inputs().push_back(nid);
  }
  copied[id] = nid;
  return nid;
}

Graph region_graph(const Graph& graph, const Region& region) {
  Graph g;
  std::map<ValueId, ValueId> copied;
  for (size_t index : region.nodes) {
    Node copy = graph.nodes()[index];
    for (ValueId& id : copy.inputs) id = copy_leaf(graph, id, g, copied);
    for (ValueId& id : copy.outputs) {
      if (id == kNoValue) continue;
      ValueId nid = g.add_value(graph.value(id).name, graph.type(id));
      copied[id] = nid;
      id = nid;
    }
    g.add_node(copy);
  }
  g.outputs().push_back(copied.at(graph.nodes()[region.nodes.back()].outputs.at(0)));
  return g;
}

}  // namespace orchid::derivation
