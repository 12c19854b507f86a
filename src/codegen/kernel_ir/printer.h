// The kernel IR as text: buffers, then the statements indented by nesting.
// Golden tests compare it; `orchid` can show it for a kernel.
#pragma once

#include <string>

#include "codegen/kernel_ir/kernel_ir.h"

namespace orchid::codegen::kir {

std::string print(const Kernel& kernel);
std::string print(const Block& block, int depth = 0);

}  // namespace orchid::codegen::kir
