// What the report shows about a compiled program, collected once: a row per
// kernel (what it computes, how, its measured time against its roofline
// bound and the cost the plan was chosen with), the totals, the no-fusion
// baseline's time, and the records plan.json keeps of how the plan was
// chosen (orchestration) and which primitives were derived (derivation).
// The page (html_page.h) and the plan graph (plan_dot.h) only render it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cost/machine.h"
#include "derivation/derive.h"
#include "report/program_timing.h"
#include "runtime/artifact.h"
#include "runtime/program.h"

namespace orchid::report {

// How a kernel is implemented, for colouring the plan graph and the table.
enum class KernelKind { Generated, OnednnLinear, DirectLinear, Layout, Library, Reference };
const char* kernel_kind_name(KernelKind kind);  // "generated", "oneDNN linear", ...
// From the kernel's group (a symbol: generated) and Kernel::implementation().
KernelKind classify_kernel(const runtime::KernelGroup& group, const std::string& implementation);

struct KernelRow {
  std::string name;            // the group's name
  std::string ops;             // "Conv+Relu"
  std::string implementation;  // Kernel::implementation()
  KernelKind kind = KernelKind::Reference;
  std::vector<size_t> nodes;   // indices into the program graph's nodes
  double ms = 0;               // mean measured time per run
  double bound_ms = 0;         // its roofline bound
  bool memory_bound = false;   // bytes, not flops, set the bound
  std::optional<double> planned_ms;  // the cost the BLP chose it with
  std::string cost_source;           // "measured", "cached", "estimated"; empty with no plan record
  // The share of its bound the kernel reaches (bound / measured), 0 when unmeasured.
  double bound_share() const { return ms > 0 ? bound_ms / ms : 0; }
};

// One part the orchestrator cut the graph into.
struct PlanPart {
  size_t first_cluster = 0, end_cluster = 0;
  size_t primitives = 0;
  size_t candidates = 0;
  std::string cut;  // how the part was cut off ("narrowest", ...)
};

// plan.json's "orchestration" record.
struct BlpRecord {
  std::vector<PlanPart> parts;
  size_t candidates = 0, fused_candidates = 0, clusters = 0;
  size_t measured = 0, cached = 0, unbuildable = 0;
  int rounds = 0;
  bool proven_optimal = false;
  double planned_ms = 0;
  double enumerate_seconds = 0, profile_seconds = 0, solve_seconds = 0, codegen_seconds = 0;
  bool library_cached = false;
};

struct ReportData {
  std::string model;
  int threads = 0;
  int runs = 0;
  size_t primitives = 0;
  std::vector<KernelRow> kernels;  // in execution order
  double latency_ms = 0;           // median whole-program run
  double kernels_ms = 0;           // the kernels' times summed
  double bound_ms = 0;             // their bounds summed
  cost::MachinePeaks peaks;
  std::optional<double> baseline_ms;  // the no-fusion plan's median run
  size_t baseline_kernels = 0;
  std::optional<BlpRecord> blp;
  std::optional<derivation::DeriveReport> derivation;
};

// The report's data from a program's timing (kernel_ms per program kernel)
// and the records in `info` (orchid::Error when one is malformed); no
// threads and no baseline (the caller sets them).
ReportData make_report_data(const runtime::Program& program, const runtime::ArtifactInfo& info,
                            const ProgramTiming& timing, const cost::MachinePeaks& peaks);

}  // namespace orchid::report
