#include "fission/rules.h"

namespace orchid::fission {

void add_normalization_rules(FissionRuleTable& table) { (void)table; }

}  // namespace orchid::fission
