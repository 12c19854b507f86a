// Helpers of the graph rewrites run before fission (fold_batchnorm.h,
// pointwise_conv.h, channels_last_sum.h): they match small chains of ONNX
// operators and replace them with new nodes in place.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace orchid::fission {

// The node writing `value` when exactly one node reads it (and it is no
// graph output), else nullptr. `producer` and `uses` are producer_nodes and
// use_counts of `graph` (ir/graph_utils.h).
const Node* sole_producer(const Graph& graph, ValueId value, const std::vector<size_t>& producer,
                          const std::vector<int>& uses);

// `node` is an `op` of the default ONNX domain.
bool is_plain(const Node* node, const char* op);

// A node's constant input i when present and not empty, else nullptr.
const Tensor* present_constant(const Graph& graph, const Node& node, size_t i);

// Whether every input of `node` from position `first` on is a constant or
// omitted (a Resize's roi, scales and sizes).
bool constant_inputs_from(const Graph& graph, const Node& node, size_t first);

// The index of `node`, an element of graph.nodes().
size_t index_of(const Graph& graph, const Node* node);

// `graph` with the nodes of `replaced` in place of the node at each key and
// the nodes marked in `drop` removed, unused values dropped. The new nodes
// must read only values written before the key's node.
Graph with_nodes_replaced(Graph graph, const std::map<size_t, std::vector<Node>>& replaced,
                          const std::vector<bool>& drop);

// A rewrite of one node: the nodes that take node n's place, with their new
// values and constants added to `out` (a copy of the graph being rewritten),
// the nodes they make dead marked in `drop`; nullopt keeps node n.
using NodeRewrite = std::function<std::optional<std::vector<Node>>(size_t n, Graph& out, std::vector<bool>& drop)>;

// `graph` with `rewrite` offered every node not yet dropped, first to last
// (last to first with `last_first`: a tree's root before its subtrees).
Graph rewrite_nodes(const Graph& graph, const NodeRewrite& rewrite, bool last_first = false);

}  // namespace orchid::fission
