// Derivation rules: expression family (rules/rules.h). Placeholder until written.
#include "derivation/rules/rules.h"

namespace orchid::derivation::rules {

std::vector<RulePtr> expression_rules() { return {}; }

}  // namespace orchid::derivation::rules
