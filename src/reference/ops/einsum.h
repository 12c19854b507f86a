// Einsum, part of the linear operator family (registered by
// register_linear_ops in linear.cc).
#pragma once

#include "reference/op_registry.h"

namespace orchid::reference {

void register_einsum_op(OpRegistry& registry);

}  // namespace orchid::reference
