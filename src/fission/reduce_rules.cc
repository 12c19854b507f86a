#include "fission/rules.h"

namespace orchid::fission {

void add_reduce_rules(FissionRuleTable& table) { (void)table; }

}  // namespace orchid::fission
