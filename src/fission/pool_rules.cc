#include "fission/rules.h"

namespace orchid::fission {

void add_pool_rules(FissionRuleTable& table) { (void)table; }

}  // namespace orchid::fission
