#include "reference/ops/ops.h"

namespace orchid::reference {

void register_resize_ops(OpRegistry& registry) { (void)registry; }

}  // namespace orchid::reference
