#include "reference/ops/ops.h"

namespace orchid::reference {

void register_index_ops(OpRegistry& registry) { (void)registry; }

}  // namespace orchid::reference
