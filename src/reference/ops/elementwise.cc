#include "reference/ops/ops.h"

namespace orchid::reference {

void register_elementwise_ops(OpRegistry& registry) { (void)registry; }

}  // namespace orchid::reference
