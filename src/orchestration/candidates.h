// Candidate kernels (Korch): the differences D_j \ D_i of two execution
// states (downward-closed primitive sets, D_i a subset of D_j). A difference
// is always convex, and every convex set is one (D_i = its ancestors), so
// the candidates are exactly the convex node sets; those worth a kernel are
// connected. Orchid enumerates the connected convex sets of the cluster
// graph (clusters.h) directly — growing each set by one adjacent cluster
// while it stays convex reaches every one of them — instead of listing
// states and pairing them, which is quadratic in a state count that is
// exponential in the graph's width.
//
// Legal candidates (the backend can emit them as one kernel; the CPU's rules):
//  - every single primitive (the kernel library, oneDNN for linear ones);
//  - a linear primitive with each prefix of its epilogue chain that oneDNN's
//    post-ops compute (epilogue_chains.h, runtime::cpu::linear_group_supported),
//    once per implementation (runtime::cpu::linear_variants);
//  - a connected convex set of fusable clusters, two or more primitives, as
//    one generated kernel (codegen::cpu::can_generate), any number of outputs.
// Enumeration is bounded per part (partition below): when a part has more
// candidates than the limit, it is cut in two at its narrowest point and
// each half enumerated again, and the report says so.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/alternatives.h"
#include "orchestration/clusters.h"
#include "runtime/kernel.h"

namespace orchid::orchestration {

enum class CandidateKind { Library, Linear, Generated };

struct Candidate {
  std::vector<size_t> nodes;  // ascending (a topological order)
  CandidateKind kind = CandidateKind::Library;
  size_t part = 0;
  // Linear: the implementation (runtime::KernelGroup::variant); a linear
  // group is one candidate per implementation, each measured.
  std::string variant = {};
};

// A range of clusters [begin, end) that is enumerated and solved on its own.
struct Part {
  size_t begin = 0, end = 0;
  size_t nodes = 0;
  size_t candidates = 0;
  // How the part's start was cut: "lossless" (no legal kernel spans the
  // cut: every edge across it ends in a primitive that cannot take its
  // producer into its kernel) or "narrowest" (the candidate limit forced a
  // cut where the fewest values cross).
  std::string cut = "lossless";
};

struct CandidateOptions {
  size_t max_candidates_per_part = 150;
  size_t max_kernel_clusters = 12;
  size_t max_kernel_nodes = 96;
};

// A kernel whose output is its input's bytes when one side of it lives in a
// native layout (runtime::cpu's channels-last Transposes): which side.
enum class Relabeling { None, OutputNative, InputNative };

struct CandidateRules {
  FusionRules fusion;
  // Whether the backend emits a generated kernel / a linear kernel for these nodes.
  std::function<bool(const Graph&, const runtime::KernelGroup&)> can_generate;
  std::function<bool(const Graph&, const runtime::KernelGroup&)> linear_supported;
  // A linear group's implementations besides the default one.
  std::function<std::vector<std::string>(const Graph&, const runtime::KernelGroup&)> linear_variants = {};
  // The node sets that one library kernel each computes (an attention, a
  // Concat with the Slices computing its inputs, a max pool's Pad, Slices
  // and Maxes), each once.
  std::function<std::vector<std::vector<size_t>>(const Graph&)> library_sets = {};
  // Whether the kernel of these nodes (a library one, or a generated one:
  // the group has a symbol; not a linear one) reads and writes the native
  // layouts the linear kernels compute in (a Concat or a pointwise kernel
  // between convolutions), so the layout model prices its tensors natively.
  std::function<bool(const Graph&, const runtime::KernelGroup&)> takes_native_layouts = {};
  // Whether a linear group's kernel (of its variant) reads and writes those
  // native layouts (a oneDNN conv), or row-major ones (a matrix product, a
  // GEMM + col2im deconvolution); unset: every default linear kernel is
  // native, every variant row-major.
  std::function<bool(const Graph&, const runtime::KernelGroup&)> linear_keeps_native_layouts = {};
  // Whether the kernel of these nodes (not a linear one) becomes a
  // relabeling of its input's buffer when its output, or its input, lives
  // in a native layout (layout_model.h prices it so); unset: none does.
  std::function<Relabeling(const Graph&, const runtime::KernelGroup&)> relabels = {};
};
// A target's rules: backend::Backend::candidate_rules (the CPU's: backend/cpu_backend.cc).

struct CandidateSet {
  ClusterGraph clusters;
  std::vector<Part> parts;
  std::vector<Candidate> candidates;
};

// With `alternatives` (ir/alternatives.h), a derived form's result is an
// output of the candidates that write it, and a part holds both forms of an
// alternative (a narrowest cut splits them only when nothing else is left).
CandidateSet enumerate_candidates(const Graph& graph, const CandidateRules& rules,
                                  const CandidateOptions& options = {},
                                  const std::vector<Alternative>& alternatives = {});

}  // namespace orchid::orchestration
