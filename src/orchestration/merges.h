// Which untimed candidates to time because they merge chosen kernels. Pure.
//
// A round of orchestration times the chosen candidates that were only
// estimated. A candidate the plan did not choose is never timed, and for
// tiny kernels the estimate (a fixed launch overhead, scaled by a
// calibration that other models' kernels in the cache move) can sit above
// the timed pieces it would replace for good: an LSTM at 2 threads planned
// 4,113 kernels from a cache other models had filled and 1,689 from a
// fresh one, because its fused gate kernel was never timed. So once every
// chosen kernel is timed, the estimated candidates that are exactly a merge
// of two or more chosen kernels are timed too, those replacing the most
// kernels first (orchestrate.cc, at most two such rounds a compile).
#pragma once

#include <cstddef>
#include <vector>

#include "orchestration/candidates.h"

namespace orchid::orchestration {

inline constexpr size_t kMaxMergesPerRound = 32;

// The candidates, not linear and not timed (`timed[i]` false), whose nodes
// are exactly the union of the nodes of two or more chosen candidates
// (`chosen`: per part, candidate indices), each timed; most pieces first,
// at most `max`. `nodes`: the graph's node count.
std::vector<size_t> merges_of_chosen(const std::vector<Candidate>& candidates,
                                     const std::vector<std::vector<size_t>>& chosen, const std::vector<bool>& timed,
                                     size_t nodes, size_t max = kMaxMergesPerRound);

}  // namespace orchid::orchestration
