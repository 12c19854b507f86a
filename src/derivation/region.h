// The region a derivation starts from: a linear primitive's expression with
// the layout primitives that feed only it (Transpose, Reshape, Slice, Pad,
// Expand, Gather with affine constant indices, ...) inlined as nested scopes.
// Derivation then sees through them: Longformer's Pad + Gather + Transpose +
// MatMul is one banded product (a G2BMM), and a derived form replaces the
// whole chain.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/graph.h"

namespace orchid::derivation {

struct Region {
  expr::Expr expr = nullptr;
  // Leaf tensors, named t0, t1, ... in first-appearance order (so equal
  // regions have equal expressions), bound to graph values.
  std::map<std::string, ValueId, std::less<>> inputs;
  std::vector<size_t> nodes;  // node indices: absorbed producers (producers first), the primitive last
  std::string signature;      // operators, attributes, shapes: equal signatures derive alike
};

// Facts about a graph that regions need, computed once.
class RegionBuilder {
 public:
  explicit RegionBuilder(const Graph& graph);
  // The region of node `index`; nullopt (and why) when it has no expression form.
  std::optional<Region> region(size_t index, std::string* why_not = nullptr) const;

 private:
  bool absorbable(ValueId value) const;

  const Graph& graph_;
  std::vector<size_t> producer_;        // per value
  std::vector<size_t> consumers_;       // per value: how many nodes read it
  std::vector<bool> is_graph_output_;   // per value
};

// Copies value `id` of `from` into the small graph `to`, once (`copied`
// remembers): a constant stays a constant, anything else becomes a graph
// input of the same name and type.
ValueId copy_leaf(const Graph& from, ValueId id, Graph& to, std::map<ValueId, ValueId>& copied);

// A small graph computing the region as the original graph does (its
// nodes copied; leaves become graph inputs, constants stay constants).
Graph region_graph(const Graph& graph, const Region& region);

}  // namespace orchid::derivation
