#include "fission/graph_rewrite.h"

#include "ir/graph_utils.h"

namespace orchid::fission {

const Node* sole_producer(const Graph& graph, ValueId value, const std::vector<size_t>& producer,
                          const std::vector<int>& uses) {
  size_t p = producer[size_t(value)];
  return p == kNoNode || uses[size_t(value)] != 1 ? nullptr : &graph.nodes()[p];
}

bool is_plain(const Node* node, const char* op) { return node && node->op == op && node->domain.empty(); }

const Tensor* present_constant(const Graph& graph, const Node& node, size_t i) {
  const Tensor* t = constant_input(graph, node, i);
  return t && t->numel() > 0 ? t : nullptr;
}

bool constant_inputs_from(const Graph& graph, const Node& node, size_t first) {
  for (size_t i = first; i < node.inputs.size(); ++i) {
    if (node.inputs[i] != kNoValue && !constant_input(graph, node, i)) return false;
  }
  return true;
}

size_t index_of(const Graph& graph, const Node* node) { return size_t(node - graph.nodes().data()); }

Graph with_nodes_replaced(Graph graph, const std::map<size_t, std::vector<Node>>& replaced,
                          const std::vector<bool>& drop) {
  std::vector<Node> nodes;
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    auto it = replaced.find(n);
    if (it != replaced.end()) {
      nodes.insert(nodes.end(), it->second.begin(), it->second.end());
    } else if (!drop[n]) {
      nodes.push_back(std::move(graph.nodes()[n]));
    }
  }
  graph.nodes() = std::move(nodes);
  return remove_unused_values(graph);
}

Graph rewrite_nodes(const Graph& graph, const NodeRewrite& rewrite, bool last_first) {
  Graph out = graph;
  std::vector<bool> drop(graph.nodes().size(), false);
  std::map<size_t, std::vector<Node>> replaced;
  const size_t count = graph.nodes().size();
  for (size_t k = 0; k < count; ++k) {
    const size_t n = last_first ? count - 1 - k : k;
    if (drop[n]) continue;
    if (std::optional<std::vector<Node>> nodes = rewrite(n, out, drop)) {
      replaced[n] = std::move(*nodes);
      drop[n] = true;
    }
  }
  if (replaced.empty()) return graph;
  return with_nodes_replaced(std::move(out), replaced, drop);
}

}  // namespace orchid::fission
