// Layout negotiation, once, before a program's first run. oneDNN kernels
// compute in native layouts (channels-last, blocked) and convert row-major
// operands themselves; a tensor between two kernels that can both handle a
// native layout is better left in it. Each intermediate, in program order:
//   - when its producer offers a native layout that every reader takes, it
//     lives in that layout;
//   - else, when a reader computes in a native layout (a conv's source) and
//     the producer can write that layout (a Concat) and every reader takes
//     it, it lives in that one.
// A kernel that adapts to its neighbours (a pointwise kernel, converting the
// operands that do not arrive in its layout) takes a layout only where more
// of its operands' other ends work natively than row-major, so it never
// converts more tensors than it saves.
#pragma once

#include <memory>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/program.h"

namespace orchid::runtime {

struct NegotiatedLayouts {
  std::vector<size_t> bytes;  // per value: its buffer size in a native layout; 0 for row-major
  size_t native = 0;          // how many intermediates live in a native layout
};

NegotiatedLayouts negotiate_layouts(const Program& program, const std::vector<std::unique_ptr<Kernel>>& kernels);

}  // namespace orchid::runtime
