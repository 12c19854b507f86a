#include "report/report_data.h"

#include <nlohmann/json.hpp>

#include "cost/analytical_model.h"
#include "support/error.h"

namespace orchid::report {

const char* kernel_kind_name(KernelKind kind) {
  switch (kind) {
    case KernelKind::Generated: return "generated";
    case KernelKind::OnednnLinear: return "oneDNN linear";
    case KernelKind::DirectLinear: return "direct linear";
    case KernelKind::Layout: return "layout";
    case KernelKind::Library: return "elementwise/reduce library";
    case KernelKind::Reference: return "reference";
  }
  return "?";
}

KernelKind classify_kernel(const runtime::KernelGroup& group, const std::string& implementation) {
  const auto starts_with = [&](const char* prefix) { return implementation.rfind(prefix, 0) == 0; };
  if (!group.symbol.empty() || implementation == "generated") return KernelKind::Generated;
  if (starts_with("onednn")) return KernelKind::OnednnLinear;
  if (starts_with("layout")) return KernelKind::Layout;
  if (starts_with("elementwise") || starts_with("reduce")) return KernelKind::Library;
  if (implementation == "reference") return KernelKind::Reference;
  // Orchid's own linear kernels: direct, banded, GEMM deconvolution, attention.
  return KernelKind::DirectLinear;
}

namespace {

PlanPart parse_part(const nlohmann::json& j) {
  PlanPart part;
  const nlohmann::json clusters = j.value("clusters", nlohmann::json::array());
  if (clusters.is_array() && clusters.size() == 2) {
    part.first_cluster = clusters[0].get<size_t>();
    part.end_cluster = clusters[1].get<size_t>();
  }
  part.primitives = j.value("primitives", size_t(0));
  part.candidates = j.value("candidates", size_t(0));
  part.cut = j.value("cut", "");
  return part;
}

// The planned cost of kernel `k` named `name` from the record's "kernels":
// by position when the names agree, else by name (nullptr: none).
const nlohmann::json* planned_kernel(const nlohmann::json& kernels, size_t k, const std::string& name) {
  if (!kernels.is_array()) return nullptr;
  if (k < kernels.size() && kernels[k].value("name", "") == name) return &kernels[k];
  for (const nlohmann::json& entry : kernels) {
    if (entry.value("name", "") == name) return &entry;
  }
  return nullptr;
}

// Fills each row's planned cost and its source from the orchestration record.
void add_planned_costs(const nlohmann::json& record, std::vector<KernelRow>& rows) {
  const nlohmann::json kernels = record.value("kernels", nlohmann::json::array());
  for (size_t k = 0; k < rows.size(); ++k) {
    const nlohmann::json* entry = planned_kernel(kernels, k, rows[k].name);
    if (!entry) continue;
    rows[k].planned_ms = entry->value("cost_ms", 0.0);
    rows[k].cost_source = entry->value("cost_source", "");
  }
}

KernelRow kernel_row(const runtime::Program& program, size_t k, const ProgramTiming& timing,
                     const cost::MachinePeaks& peaks) {
  const runtime::KernelGroup& group = program.kernels[k];
  const runtime::KernelInfo& info = timing.kernels.at(k);
  const cost::RooflineBound bound = cost::roofline_bound(cost::kernel_work(program.graph, group), peaks);
  KernelRow row;
  row.name = info.name;
  row.ops = info.ops;
  row.implementation = info.implementation;
  row.kind = classify_kernel(group, info.implementation);
  row.nodes = group.nodes;
  row.ms = timing.kernel_ms.at(k);
  row.bound_ms = bound.seconds * 1e3;
  row.memory_bound = bound.memory_bound;
  return row;
}

BlpRecord read_blp_record(const nlohmann::json& j) {
  BlpRecord record;
  for (const nlohmann::json& part : j.value("parts", nlohmann::json::array())) record.parts.push_back(parse_part(part));
  record.candidates = j.value("candidates", size_t(0));
  record.fused_candidates = j.value("fused_candidates", size_t(0));
  record.clusters = j.value("clusters", size_t(0));
  record.measured = j.value("measured", size_t(0));
  record.cached = j.value("cached", size_t(0));
  record.unbuildable = j.value("unbuildable", size_t(0));
  record.rounds = j.value("rounds", 0);
  record.proven_optimal = j.value("proven_optimal", false);
  record.planned_ms = j.value("planned_ms", 0.0);
  record.enumerate_seconds = j.value("enumerate_seconds", 0.0);
  record.profile_seconds = j.value("profile_seconds", 0.0);
  record.solve_seconds = j.value("solve_seconds", 0.0);
  record.codegen_seconds = j.value("codegen_seconds", 0.0);
  record.library_cached = j.value("library_cached", false);
  return record;
}

// The BLP record and each kernel's planned cost from plan.json's
// "orchestration" (orchid::Error when it is malformed).
void add_orchestration_record(const std::string& text, ReportData& data) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) ORCHID_FAIL() << "orchestration record: not a JSON object";
  try {
    data.blp = read_blp_record(j);
    add_planned_costs(j, data.kernels);
  } catch (const nlohmann::json::exception& e) {
    ORCHID_FAIL() << "orchestration record: " << e.what();
  }
}

}  // namespace

ReportData make_report_data(const runtime::Program& program, const runtime::ArtifactInfo& info,
                            const ProgramTiming& timing, const cost::MachinePeaks& peaks) {
  ORCHID_CHECK(timing.kernel_ms.size() == program.kernels.size() && timing.kernels.size() == program.kernels.size())
      << "timing of " << timing.kernel_ms.size() << " kernels for a program of " << program.kernels.size();
  ReportData data;
  data.model = info.source_model;
  data.runs = timing.runs;
  data.primitives = program.graph.nodes().size();
  data.latency_ms = timing.median_ms;
  data.peaks = peaks;
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    data.kernels.push_back(kernel_row(program, k, timing, peaks));
    data.kernels_ms += data.kernels.back().ms;
    data.bound_ms += data.kernels.back().bound_ms;
  }
  if (!info.orchestration_json.empty()) add_orchestration_record(info.orchestration_json, data);
  if (!info.derivation_json.empty()) data.derivation = derivation::derive_report_from_json(info.derivation_json);
  return data;
}

}  // namespace orchid::report
