// Derivation rules: boundary family (rules/rules.h). Placeholder until written.
#include "derivation/rules/rules.h"

namespace orchid::derivation::rules {

std::vector<RulePtr> boundary_rules() { return {}; }

}  // namespace orchid::derivation::rules
