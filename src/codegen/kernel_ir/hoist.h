// Loop-invariant code motion on the kernel IR: a `let` in a loop's body whose
// value names nothing the loop changes (its variable, the variables declared
// or assigned in it, the buffers and arrays it writes) moves before the loop,
// and on outward while that holds (a channel's mean and scale, computed once
// per row instead of once per element). Regions are not crossed: a thread
// team's views of the buffers are declared inside them.
#pragma once

#include "codegen/kernel_ir/kernel_ir.h"

namespace orchid::codegen::kir {

void hoist_invariants(Block& block);

}  // namespace orchid::codegen::kir
