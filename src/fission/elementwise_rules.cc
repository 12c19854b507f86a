#include "fission/rules.h"

namespace orchid::fission {

void add_elementwise_rules(FissionRuleTable& table) { (void)table; }

}  // namespace orchid::fission
