// What the BLP pays for a linear kernel with an epilogue chain, given the
// timed costs of the candidates: its own time, unless that is within the
// host's noise of a split (the same linear kernel with a shorter chain, then
// a kernel of the rest), where it is priced just below the split. Pure.
//
// Epilogues run on the accumulators in registers (oneDNN post-ops, the
// direct kernels' epilogue), so a chain costs no more fused than split.
// Timed one by one on a shared host (about 10% noise), a ReLU's few
// microseconds fell below the noise of its conv's time: RegNet-X's plans
// kept 29 ReLUs as separate kernels at 1 thread and 36 at 2, YOLOX-Nano 28
// SiLUs. Far above the split (beyond kEpilogueNoise) the fused time stands.
// Only tails that read nothing but the shorter kernel's output (constants
// aside) count: a residual Add, a binary post-op, can send oneDNN to another
// implementation (RegNet-X's 1x1 convs went from brgconv_1x1 to jit_1x1,
// 10-20% slower), a real cost. Nor do tails with a transcendental operator
// (a Sigmoid, an Erf): oneDNN 2.6 computes those post-ops at about the cost
// of a kernel of their own (a 1x1 conv 32 -> 32 at 104x104, 1 thread: 0.205
// ms, with a swish post-op 0.345; Orchid's SiLU kernel alone 0.129), so
// their times are compared as measured.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "orchestration/candidates.h"
#include "runtime/kernel.h"

namespace orchid::orchestration {

inline constexpr double kEpilogueNoise = 1.25;

// Per candidate, its price: `costs[i]` (what it was timed at, or estimated)
// or, for a timed linear candidate, the cheaper of that and 0.999 x its
// cheapest timed split's price when the split is within kEpilogueNoise.
// `groups` are the candidates' kernel groups, `timed[i]` whether costs[i]
// was measured (or cached) rather than estimated.
std::vector<double> price_epilogue_chains(const Graph& graph, const std::vector<Candidate>& candidates,
                                          const std::vector<runtime::KernelGroup>& groups,
                                          const std::vector<double>& costs, const std::vector<bool>& timed);

}  // namespace orchid::orchestration
