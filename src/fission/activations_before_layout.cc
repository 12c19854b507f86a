#include "fission/activations_before_layout.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fission/graph_rewrite.h"
#include "ir/graph_utils.h"

namespace orchid::fission {

namespace {

// Elementwise operators of the default domain that map each element alone
// (any attributes), with every other input a scalar.
bool is_elementwise(const Node& node) {
  static const std::set<std::string> ops = {
      "Add",   "Sub",  "Mul",     "Div",  "Pow",      "Erf",          "Tanh",      "Sigmoid",  "Relu",
      "Sqrt",  "Exp",  "Log",     "Neg",  "Abs",      "Reciprocal",   "LeakyRelu", "Elu",      "Selu",
      "Clip",  "Max",  "Min",     "Gelu", "Softplus", "HardSigmoid",  "HardSwish", "Mish",     "Celu"};
  return node.domain.empty() && node.outputs.size() == 1 && ops.count(node.op) > 0;
}

bool is_layout(const Node* node) { return is_plain(node, "Transpose") || is_plain(node, "Reshape"); }

struct Region {
  std::vector<size_t> nodes;  // ascending
  size_t root = 0;            // the node whose output is read elsewhere
};

class Finder {
 public:
  explicit Finder(const Graph& graph)
      : graph_(graph), producer_(producer_nodes(graph)), uses_(use_counts(graph)), readers_(graph.num_values()) {
    for (size_t n = 0; n < graph.nodes().size(); ++n) {
      for (ValueId id : graph.nodes()[n].inputs) {
        if (id != kNoValue) readers_[size_t(id)].push_back(n);
      }
    }
  }

  // The layout chain from a Conv's output to `value` (first step first),
  // each value before `value` read once.
  std::optional<std::vector<size_t>> layout_chain(ValueId value) const {
    std::vector<size_t> chain;
    for (ValueId v = value;;) {
      const size_t p = producer_[size_t(v)];
      if (p == kNoNode) return std::nullopt;
      const Node& node = graph_.nodes()[p];
      if (is_plain(&node, "Conv") && !chain.empty()) {
        std::reverse(chain.begin(), chain.end());
        return chain;
      }
      if (!is_layout(&node) || node.inputs.empty() || uses_[size_t(node.inputs[0])] != 1) return std::nullopt;
      chain.push_back(p);
      v = node.inputs[0];
    }
  }

  // The elementwise region reading `value`, when `value` is read by its
  // nodes only and one region value alone, the root's, is read elsewhere.
  std::optional<Region> region_reading(ValueId value) const {
    constexpr size_t kMaxNodes = 16;
    std::set<ValueId> values{value};
    std::set<size_t> nodes;
    for (bool grew = true; grew && nodes.size() <= kMaxNodes;) {
      grew = false;
      for (ValueId v : std::vector<ValueId>(values.begin(), values.end())) {
        for (size_t n : readers_[size_t(v)]) {
          if (nodes.count(n) || !joins(graph_.nodes()[n], values)) continue;
          nodes.insert(n);
          values.insert(graph_.nodes()[n].outputs[0]);
          grew = true;
        }
      }
    }
    if (nodes.empty() || nodes.size() > kMaxNodes) return std::nullopt;
    std::optional<size_t> root;
    for (ValueId v : values) {
      int inside = 0;
      for (size_t n : readers_[size_t(v)]) inside += int(nodes.count(n));
      if (inside == uses_[size_t(v)]) continue;  // read in the region only
      if (v == value || root) return std::nullopt;
      root = producer_[size_t(v)];
    }
    if (!root) return std::nullopt;
    return Region{std::vector<size_t>(nodes.begin(), nodes.end()), *root};
  }

 private:
  // An elementwise node whose inputs are region values or scalar constants,
  // at least one of them a region value.
  bool joins(const Node& node, const std::set<ValueId>& values) const {
    if (!is_elementwise(node)) return false;
    bool reads_region = false;
    for (ValueId id : node.inputs) {
      if (id == kNoValue) continue;
      if (values.count(id)) {
        reads_region = true;
      } else if (!graph_.value(id).is_constant() || graph_.type(id).numel() != 1) {
        return false;
      }
    }
    return reads_region;
  }

  const Graph& graph_;
  std::vector<size_t> producer_;
  std::vector<int> uses_;
  std::vector<std::vector<size_t>> readers_;
};

// The region's nodes on the Conv's output `conv_out`, then the layout chain
// on the region's result, ending in the root's output.
std::vector<Node> moved(const Graph& graph, Graph& out, const Region& region, const std::vector<size_t>& chain,
                        ValueId region_input, ValueId conv_out) {
  std::map<ValueId, ValueId> renamed{{region_input, conv_out}};
  std::vector<Node> nodes;
  const Shape& shape = graph.type(conv_out).shape;
  for (size_t n : region.nodes) {
    Node node = graph.nodes()[n];
    for (ValueId& id : node.inputs) {
      if (auto it = renamed.find(id); it != renamed.end()) id = it->second;
    }
    const ValueId old = node.outputs[0];
    node.name += "/before_layout";
    node.outputs[0] = out.add_value(node.name, {graph.type(old).dtype, shape});
    renamed[old] = node.outputs[0];
    nodes.push_back(std::move(node));
  }
  ValueId current = renamed.at(graph.nodes()[region.root].outputs[0]);
  for (size_t c = 0; c < chain.size(); ++c) {
    Node node = graph.nodes()[chain[c]];
    node.inputs[0] = current;
    const ValueId old = node.outputs[0];
    const bool last = c + 1 == chain.size();
    node.name += "/after_activation";
    node.outputs[0] = last ? graph.nodes()[region.root].outputs[0]
                           : out.add_value(node.name, {out.type(current).dtype, graph.type(old).shape});
    current = node.outputs[0];
    nodes.push_back(std::move(node));
  }
  return nodes;
}

}  // namespace

Graph activations_before_layout(const Graph& graph) {
  const Finder finder(graph);
  return rewrite_nodes(graph, [&](size_t n, Graph& out, std::vector<bool>& drop) -> std::optional<std::vector<Node>> {
    const Node& last = graph.nodes()[n];
    if (!is_layout(&last) || last.outputs.size() != 1) return std::nullopt;
    const ValueId region_input = last.outputs[0];
    const std::optional<Region> region = finder.region_reading(region_input);
    if (!region) return std::nullopt;
    const std::optional<std::vector<size_t>> chain = finder.layout_chain(region_input);
    if (!chain || chain->back() != n) return std::nullopt;
    const ValueId conv_out = graph.nodes()[chain->front()].inputs[0];
    for (size_t c : *chain) drop[c] = true;
    for (size_t r : region->nodes) drop[r] = true;
    drop[n] = false;  // the key node: rewrite_nodes replaces it
    return moved(graph, out, *region, *chain, region_input, conv_out);
  });
}

}  // namespace orchid::fission
