// The graph that candidate enumeration works on: primitives contracted into
// clusters. A memory-bound injective primitive (elementwise or layout) whose
// only reader is one fusable primitive is always computed inside its
// reader's kernel: inlined there it is never written to memory and, having
// no other reader, never computed twice, so a plan that keeps it apart only
// adds a write and a read. Contracting these in-trees first keeps the number
// of candidates small: a MaxPool's 25 slices and 24 Max nodes, or an
// InstanceNorm's scalar chain, become one cluster each. Each cluster is
// convex (values leave it only through its root, its last node), so the
// cluster graph is a DAG, ordered here by root position.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "ir/graph.h"

namespace orchid::orchestration {

// What the enumeration needs to know about primitives: which ones a
// generated kernel can hold, and which are linear (oneDNN anchors).
struct FusionRules {
  std::function<bool(const Graph&, const Node&)> can_fuse;
  std::function<bool(const Graph&, const Node&)> is_linear;
};
// A target's rules come with its candidate rules (backend::Backend).

struct ClusterGraph {
  std::vector<std::vector<size_t>> members;  // per cluster: node indices, ascending; back() is the root
  std::vector<size_t> cluster_of;            // per node
  std::vector<std::vector<size_t>> successors, predecessors;  // per cluster, ascending, no duplicates
  std::vector<bool> fusable;                 // every member can be in a generated kernel
  std::vector<bool> linear;                  // a single linear primitive
  size_t size() const { return members.size(); }
};

ClusterGraph build_clusters(const Graph& graph, const FusionRules& rules);

// A Transpose that moves the innermost axis. A kernel holding it runs in
// either its input's or its output's order and reads or writes the other
// with a stride, which can cost far more than the write and read it saves:
// SegFormer's decoder sum of four bilinear upsamplings ran 23 ms fused with
// the Transpose to channels-first, 1.8 ms plus a transpose apart. It is never
// contracted into a cluster with its producer or reader, so candidates offer
// it both fused and apart, and orchestration measures both
// (orchestrate.cc, unmeasured).
bool moves_innermost_axis(const Node& node);

}  // namespace orchid::orchestration
