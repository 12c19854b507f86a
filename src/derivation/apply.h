// Applying rules to a derivation state: every rule at the root and at every
// nested scope, each rewrite substituted into the state.
#pragma once

#include <string>
#include <vector>

#include "derivation/rule.h"

namespace orchid::derivation {

struct Step {
  std::string rule;    // Rule::name()
  std::string detail;  // Rewrite::detail
};

struct Successor {
  Expr state;
  Step step;
};

// Every one-step rewrite of `state` (a top-level scope) by `rules`. Rewrites
// that give back the same state are dropped.
std::vector<Successor> successors(Expr state, const std::vector<const Rule*>& rules);

}  // namespace orchid::derivation
