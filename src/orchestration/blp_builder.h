// The BLPs of a candidate set, one per part (blp_model.h): tensors numbered,
// candidates as kernels, the node covers that tighten the relaxation, and
// the layout extension (layout_model.h). Pure: the costs are left at zero
// for the orchestrator to set each round (candidates from measurements and
// estimates, reorders from the bandwidth), so the structure is built once
// and unit-tested like the model.
#pragma once

#include <optional>
#include <vector>

#include "orchestration/candidates.h"
#include "orchestration/layout_model.h"

namespace orchid::orchestration {

// One part's BLP and how its ids map back to the candidate set.
struct PartProblem {
  std::vector<size_t> candidates;  // global candidate indices, in BLP kernel order
  std::vector<size_t> aliases;     // then one alias kernel per alternative of the part (its index)
  BlpProblem problem;              // the candidates' and aliases' kernels, then the layout extension's
  LayoutExtension layouts;
  std::vector<ValueId> value_of;   // per BLP tensor id (row-major ones): the value
  std::vector<size_t> last_selection = {};  // the previous round's solution (BLP kernel indices)

  // The global candidate BLP kernel k computes (native copies included);
  // nullopt for an alias or a reorder.
  std::optional<size_t> candidate(size_t k) const;
  // The alternative whose alias BLP kernel k is (native copies included).
  std::optional<size_t> alias(size_t k) const;
};

// `groups[i]` is candidate i's kernel group, `layouts[i]` where it keeps its
// tensors. Each alternative (ir/alternatives.h) whose two forms are in one
// part gets an alias kernel there: it reads the derived value and writes
// the original one, in either layout (the program renames the value, it
// copies nothing), at the alternative's choice margin. The node covers then
// hold per form, conditioned on the alias (a node of the original form: the
// alias or a kernel covering it; of the derived form: if the alias, a kernel
// covering it), and where the original value is needed, so are the values
// both forms read.
std::vector<PartProblem> build_part_problems(const Graph& graph, const CandidateSet& set,
                                             const std::vector<runtime::KernelGroup>& groups,
                                             const std::vector<KernelLayout>& layouts,
                                             const std::vector<Alternative>& alternatives = {},
                                             bool node_covers = true);  // false: without (tests check they are valid)

}  // namespace orchid::orchestration
