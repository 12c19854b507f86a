#include "reference/ops/ops.h"

namespace orchid::reference {

void register_activation_ops(OpRegistry& registry) { (void)registry; }

}  // namespace orchid::reference
