// Fission (Korch): rewrites every operator of a graph into primitives
// (primitive.h), one rule family per file (rules.h). The result computes the
// same outputs; tests check each rule against the reference interpreter.
#pragma once

#include "ir/graph.h"

namespace orchid::fission {

// orchid::Error naming every operator that has no fission rule.
Graph fission(const Graph& graph);

}  // namespace orchid::fission
