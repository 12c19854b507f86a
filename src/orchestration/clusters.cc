#include "orchestration/clusters.h"

#include <algorithm>

#include "fission/primitive.h"
#include "ir/graph_utils.h"

namespace orchid::orchestration {

namespace {

constexpr size_t kNone = kNoNode;
// A cluster is one generated function at least: a chain of thousands of
// injective primitives contracted whole made one function whose compile time
// grew superlinearly (4,000 elementwise nodes: 24 s of g++). Far above what
// models contract (a MaxPool's 49 nodes), it only splits such chains.
constexpr size_t kMaxClusterNodes = 256;

bool is_injective(const Node& node, const Graph& graph) {
  const std::optional<fission::PrimitiveKind> kind = fission::primitive_kind(node, graph);
  return kind == fission::PrimitiveKind::Elementwise || kind == fission::PrimitiveKind::Layout;
}

// Per node: the node that reads its single output when exactly one node does
// (possibly more than once) and it is not a graph output; kNone otherwise.
std::vector<size_t> sole_readers(const Graph& graph, const std::vector<size_t>& producer) {
  std::vector<size_t> reader(graph.nodes().size(), kNone);
  std::vector<bool> many(graph.nodes().size(), false);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    for (ValueId id : graph.nodes()[n].inputs) {
      if (id == kNoValue || producer[size_t(id)] == kNone) continue;
      const size_t p = producer[size_t(id)];
      if (reader[p] != kNone && reader[p] != n) many[p] = true;
      reader[p] = n;
    }
  }
  for (ValueId id : graph.outputs()) {
    if (producer[size_t(id)] != kNone) many[producer[size_t(id)]] = true;
  }
  for (size_t n = 0; n < reader.size(); ++n) {
    if (many[n] || graph.nodes()[n].outputs.size() != 1) reader[n] = kNone;
  }
  return reader;
}

void add_edges(const Graph& graph, const std::vector<size_t>& producer, ClusterGraph& clusters) {
  clusters.successors.assign(clusters.size(), {});
  clusters.predecessors.assign(clusters.size(), {});
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const size_t to = clusters.cluster_of[n];
    for (ValueId id : graph.nodes()[n].inputs) {
      if (id == kNoValue || producer[size_t(id)] == kNone) continue;
      const size_t from = clusters.cluster_of[producer[size_t(id)]];
      if (from == to) continue;
      clusters.successors[from].push_back(to);
      clusters.predecessors[to].push_back(from);
    }
  }
  for (auto* lists : {&clusters.successors, &clusters.predecessors}) {
    for (std::vector<size_t>& list : *lists) {
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
    }
  }
}

}  // namespace

bool moves_innermost_axis(const Node& node) {
  if (node.op != "Transpose") return false;
  const std::vector<int64_t> perm = node.attrs.get_ints("perm");
  return !perm.empty() && perm.back() != int64_t(perm.size()) - 1;
}

ClusterGraph build_clusters(const Graph& graph, const FusionRules& rules) {
  const size_t n = graph.nodes().size();
  std::vector<bool> fusable(n), linear(n);
  for (size_t i = 0; i < n; ++i) {
    linear[i] = rules.is_linear(graph, graph.nodes()[i]);
    fusable[i] = !linear[i] && rules.can_fuse(graph, graph.nodes()[i]);
  }
  // Reverse topological order: a node's reader already knows its root.
  const std::vector<size_t> producer = producer_nodes(graph);
  const std::vector<size_t> reader = sole_readers(graph, producer);
  std::vector<size_t> root(n), size(n, 1);
  for (size_t i = n; i-- > 0;) {
    const size_t r = reader[i];
    // (a Transpose of the innermost axis stays apart: clusters.h)
    const bool contract = r != kNone && fusable[i] && fusable[r] && is_injective(graph.nodes()[i], graph) &&
                          size[root[r]] < kMaxClusterNodes && !moves_innermost_axis(graph.nodes()[i]) &&
                          !moves_innermost_axis(graph.nodes()[r]);
    root[i] = contract ? root[r] : i;
    if (contract) ++size[root[i]];
  }
  ClusterGraph clusters;
  std::vector<size_t> index_of_root(n, kNone);
  for (size_t i = 0; i < n; ++i) {
    if (root[i] == i) index_of_root[i] = 0;
  }
  for (size_t i = 0, next = 0; i < n; ++i) {
    if (index_of_root[i] != kNone) index_of_root[i] = next++;
  }
  clusters.cluster_of.resize(n);
  for (size_t i = 0; i < n; ++i) clusters.cluster_of[i] = index_of_root[root[i]];
  const size_t count = size_t(std::count_if(index_of_root.begin(), index_of_root.end(),
                                            [](size_t v) { return v != kNone; }));
  clusters.members.assign(count, {});
  clusters.fusable.assign(count, true);
  clusters.linear.assign(count, false);
  for (size_t i = 0; i < n; ++i) {
    const size_t c = clusters.cluster_of[i];
    clusters.members[c].push_back(i);
    clusters.fusable[c] = clusters.fusable[c] && fusable[i];
    clusters.linear[c] = linear[i];
  }
  add_edges(graph, producer, clusters);
  return clusters;
}

}  // namespace orchid::orchestration
