// Alternative forms of tensors in a primitive graph: derivation's output
// for orchestration (DESIGN.md: derive, then orchestrate). A region's nodes
// compute `original`; a derived form's nodes, inserted beside them, compute
// `derived`, the same tensor in exact arithmetic. Every consumer reads
// `original`. Orchestration chooses one form per alternative jointly with
// the kernels (orchestration/blp_builder.h: an alias kernel makes `original`
// from `derived`, copying nothing); the program keeps the chosen form's nodes and,
// when that is the derived one, its value stands for `original`.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace orchid {

struct Alternative {
  ValueId original = kNoValue;
  ValueId derived = kNoValue;
  std::vector<size_t> original_nodes;  // ascending; of their values only `original` is read outside them
  std::vector<size_t> derived_nodes;   // ascending; of their values only `derived` leaves them (to no node)
  std::string derivation;              // what derivation did (reports)
  // What choosing the derived form costs in the plan (its alias kernel's
  // cost): a derived form is chosen only where the plan gains more than
  // this, a margin against measurement noise (derivation: 5% of the
  // original's time alone).
  double choice_margin_seconds = 0;
};

// orchid::InternalError unless every alternative is well formed in `graph`:
// node sets disjoint from each other's, the values written by their last
// nodes, the two types equal, and nothing outside a form reading its
// values other than `original`.
void check_alternatives(const Graph& graph, const std::vector<Alternative>& alternatives);

}  // namespace orchid
