#include "reference/ops/ops.h"

namespace orchid::reference {

void register_pool_ops(OpRegistry& registry) { (void)registry; }

}  // namespace orchid::reference
