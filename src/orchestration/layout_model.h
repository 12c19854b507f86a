// Data layouts in the BLP. oneDNN kernels (linear candidates) keep their
// tensors in a native layout (channels-last / blocked) when the kernel on the
// other side is a oneDNN kernel too; any other kernel reads and writes
// row-major, so a tensor that crosses from one kind to the other is
// converted (the runtime's layout negotiation, runtime/executable.cc). A
// BLP that ignores this prices a Conv the same whether its output goes to
// another Conv (no conversion) or to a generated kernel (a full reorder),
// and picks plans that are slower than they look.
//
// The extension gives every tensor a native kernel reads or writes a second
// id, its native form; native kernels read and write native forms, others
// row-major ones, and two reorder pseudo-kernels per tensor convert between
// them at the cost of a reorder. A tensor available from the start (a graph
// input, or a tensor an earlier part computes) is there row-major; its
// native form takes a one-way reorder, whose cost the caller sets to zero
// when a oneDNN kernel of an earlier part writes it. A tensor a later part
// reads may be left in either form (graph outputs are row-major). The
// chosen reorders are not kernels of the program: they only price the
// conversions the runtime will make.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "orchestration/blp_model.h"

namespace orchid::orchestration {

struct LayoutExtension {
  size_t real_kernels = 0;  // kernels [0, real_kernels) are the candidates; the rest are reorders
  std::vector<int> reorder_tensors = {};  // per reorder kernel, in order: the row-major tensor it converts
  std::vector<bool> of_available = {};    // per reorder kernel: it makes an available tensor's native form
};

// `native[k]`: kernel k keeps native layouts; `reorder_cost(t)`: the cost of
// converting row-major tensor t one way; `must_be_row_major[t]`: t is a
// graph output.
LayoutExtension add_native_layouts(BlpProblem& problem, const std::vector<bool>& native,
                                   const std::function<double(int)>& reorder_cost,
                                   const std::vector<bool>& must_be_row_major);

}  // namespace orchid::orchestration
