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
// input, or a tensor an earlier part computes) is there row-major and its
// native form takes a one-way reorder, or, when a oneDNN kernel of an
// earlier part wrote it, the other way round (start_available_in). A tensor a later part
// reads may be left in either form (graph outputs are row-major). The
// chosen reorders are not kernels of the program: they only price the
// conversions the runtime will make. A kernel that works in either form (a
// Concat: row-major between generated kernels, native between convs) is
// offered twice, row-major and as a native copy of itself; choosing either
// chooses it. Pointwise kernels between convs are offered so too. A
// relabeling kernel (a Transpose between a channels-last image and the
// channels-first one, runtime::cpu's channels-last Transposes) is offered
// row-major at its cost, and as a relabeling at no cost: reading its input
// row-major and writing its output's native form, or the other way round.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "orchestration/blp_model.h"

namespace orchid::orchestration {

// Where a kernel keeps its tensors.
enum class KernelLayout { RowMajor, Native, Either, RelabelToNative, RelabelFromNative };

// What the BLP pays for a relabeling (the executor skips the kernel).
inline constexpr double kRelabelSeconds = 1e-7;

// Kernels [0, real_kernels) are the candidates, then the reorders, then the
// native copies of the Either and relabeling kernels.
struct LayoutExtension {
  size_t real_kernels = 0;
  std::vector<int> reorder_tensors = {};  // per reorder kernel, in order: the row-major tensor it converts
  std::vector<bool> of_available = {};    // per reorder kernel: it makes an available tensor's native form
  // per native copy (of an Either or relabeling kernel), in order: the candidate it copies
  std::vector<size_t> native_copy_of = {};
  std::vector<KernelLayout> native_copy_layout = {};  // per native copy: its candidate's layout
  // The candidate kernel k of the extended problem stands for (itself, or
  // the one it is a native copy of); nullopt for a reorder.
  std::optional<size_t> candidate_of(size_t k) const;
  bool is_native_copy(size_t k) const { return k >= real_kernels + reorder_tensors.size(); }
  // A relabeling's copy (priced kRelabelSeconds, whatever its candidate costs).
  bool is_relabeling(size_t k) const;
  // Whether kernel k writes its outputs' native forms (a native copy, but
  // not a relabeling that reads the native form).
  bool writes_native_form(size_t k) const;
  // The row-major tensor kernel k of the extended problem makes, if it is a
  // reorder to row-major.
  std::optional<int> row_major_form_made_by(size_t k, const BlpProblem& problem) const;
};

// `layouts[k]`: where kernel k keeps its tensors; `reorder_cost(t)`: the
// cost of converting row-major tensor t one way; `must_be_row_major[t]`: t is
// a graph output, or a tensor no later part reads natively (required row-major).
LayoutExtension add_native_layouts(BlpProblem& problem, const std::vector<KernelLayout>& layouts,
                                   const std::function<double(int)>& reorder_cost,
                                   const std::vector<bool>& must_be_row_major);

// Reorder r (of_available) of `extension`: its tensor is available in
// native form (an earlier part's oneDNN kernel wrote it) or row-major, and
// the reorder converts it to the other form at its cost. Without this, a
// natively written tensor was available row-major for free to the part
// that reads it, and the runtime then made the oneDNN writer write
// row-major (FSRCNN's 1 -> 56 channel conv: 6.0 ms, 2.0 native).
void start_available_in(BlpProblem& problem, const LayoutExtension& extension, size_t r, bool native);

}  // namespace orchid::orchestration
