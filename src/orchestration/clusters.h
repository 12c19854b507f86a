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
// with a stride, which can cost far more than the write and read it saves
// (SegFormer's Mix-FFN GELU with its token Transpose: 6.4 ms fused, 2.3 + 2.0
// ms apart). It is never contracted into its reader's cluster, so candidates
// offer it both fused with its reader and apart, and orchestration measures
// both (orchestrate.cc, unmeasured). Its producers are still contracted into
// it: keeping them apart too let a plan hold a derived form's Reshape+Slice
// in two overlapping kernels, one of which read a value no kernel wrote
// (the style-transfer model test on a warm cache; see issue 13's note).
bool moves_innermost_axis(const Node& node);

}  // namespace orchid::orchestration
