// Applying rules at every scope of a derivation state (apply.h).
#include "derivation/apply.h"

#include "derivation/analysis.h"
#include "ir/expr_utils.h"

namespace orchid::derivation {

std::vector<Successor> successors(Expr state, const std::vector<const Rule*>& rules) {
  std::vector<Successor> out;
  for (Expr site : scopes_of(state)) {
    for (const Rule* rule : rules) {
      for (Rewrite& rewrite : rule->apply({site, site == state})) {
        Expr next = site == state ? rewrite.scope : replace_scope(state, site, rewrite.scope);
        if (next == state) continue;
        out.push_back({next, {std::string(rule->name()), std::move(rewrite.detail)}});
      }
    }
  }
  return out;
}

}  // namespace orchid::derivation
