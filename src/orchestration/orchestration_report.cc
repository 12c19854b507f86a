#include "orchestration/orchestration_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace orchid::orchestration {

std::string orchestration_report_json(const OrchestrationReport& report, const runtime::Program& program) {
  nlohmann::json parts = nlohmann::json::array();
  for (const Part& part : report.parts) {
    parts.push_back({{"clusters", {part.begin, part.end}}, {"primitives", part.nodes}, {"candidates", part.candidates},
                     {"cut", part.cut}});
  }
  nlohmann::json kernels = nlohmann::json::array();
  for (size_t k = 0; k < report.kernel_costs.size() && k < program.kernels.size(); ++k) {
    const std::vector<size_t>& nodes = program.kernels[k].nodes;
    kernels.push_back({{"name", program.kernels[k].name},
                       {"primitives", nodes.size()},
                       {"cost_ms", report.kernel_costs[k].seconds * 1e3},
                       {"cost_source", cost_source_name(report.kernel_costs[k].source)}});
  }
  const nlohmann::json record = {
      {"candidates", report.candidates},     {"fused_candidates", report.generated_candidates},
      {"clusters", report.clusters},         {"parts", parts},
      {"measured", report.measured},         {"cached", report.cached},
      {"unbuildable", report.unbuildable},   {"rounds", report.rounds},
      {"cached_solves", report.cached_solves},
      {"alternatives", report.alternatives}, {"derived_forms_chosen", report.derived_forms_chosen},
      {"proven_optimal", report.proven_optimal}, {"planned_ms", report.planned_seconds * 1e3},
      {"enumerate_seconds", report.enumerate_seconds}, {"profile_seconds", report.profile_seconds},
      {"solve_seconds", report.solve_seconds}, {"codegen_seconds", report.codegen_seconds},
      {"library_cached", report.library_cached}, {"kernels", kernels}};
  return record.dump();
}

std::string format_orchestration_report(const OrchestrationReport& report) {
  size_t largest = 0, narrowest_cuts = 0;
  for (const Part& part : report.parts) {
    largest = std::max(largest, part.nodes);
    narrowest_cuts += part.cut == "narrowest";
  }
  std::string text =
      fmt::format("  {} candidates ({} fused) from {} clusters in {} parts (largest {} primitives{}) in {:.2f} s\n",
                  report.candidates, report.generated_candidates, report.clusters, report.parts.size(), largest,
                  narrowest_cuts ? fmt::format(", {} cut at the narrowest point", narrowest_cuts) : "",
                  report.enumerate_seconds);
  text += fmt::format("  costs: {} measured now ({:.2f} s), {} from the cache; BLP {} rounds, {:.2f} s, {}{}\n",
                      report.measured, report.profile_seconds, report.cached, report.rounds, report.solve_seconds,
                      report.proven_optimal ? "proven optimal" : "NOT proven optimal (time limit)",
                      report.cached_solves ? fmt::format(" ({} solves from the plan cache)", report.cached_solves)
                                           : "");
  if (report.unbuildable) {
    text += fmt::format("  {} candidates could not be built (first: {})\n", report.unbuildable,
                        report.first_unbuildable);
  }
  if (report.alternatives) {
    text += fmt::format("  derived forms: {} offered beside their originals, {} chosen\n", report.alternatives,
                        report.derived_forms_chosen);
  }
  text += fmt::format("  planned {:.3f} ms; code generation {:.2f} s{}\n", report.planned_seconds * 1e3,
                      report.codegen_seconds, report.library_cached ? " (library from the cache)" : "");
  return text;
}

}  // namespace orchid::orchestration
