// Derivation rules: substitution family (rules/rules.h). Placeholder until written.
#include "derivation/rules/rules.h"

namespace orchid::derivation::rules {

std::vector<RulePtr> substitution_rules() { return {}; }

}  // namespace orchid::derivation::rules
