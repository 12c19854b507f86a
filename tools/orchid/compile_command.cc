// orchid compile MODEL.onnx -o DIR: imports, compiles and writes an artifact
// folder that `orchid run DIR` loads.
#include <algorithm>
#include <chrono>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "common.h"
#include "ir/graph_utils.h"
#include "pipeline.h"
#include "runtime/artifact.h"
#include "runtime/memory_plan.h"
#include "support/error.h"
#include "support/parallel.h"

namespace orchid::cli {

namespace {

struct CompileCommandOptions {
  std::string model;
  std::string output_dir;
  bool quiet = false;
  int threads = 0;
  ShapeOptions shapes;
  CompileFlags compile;
};

std::string megabytes(size_t bytes) { return fmt::format("{:.2f} MB", double(bytes) / 1e6); }

// plan.json's "orchestration" record: how the plan was chosen.
std::string orchestration_json(const orchestration::OrchestrationReport& report, const runtime::Program& program) {
  nlohmann::json parts = nlohmann::json::array();
  for (const orchestration::Part& part : report.parts) {
    parts.push_back({{"clusters", {part.begin, part.end}}, {"primitives", part.nodes}, {"candidates", part.candidates},
                     {"cut", part.cut}});
  }
  nlohmann::json kernels = nlohmann::json::array();
  for (size_t k = 0; k < report.kernel_costs.size() && k < program.kernels.size(); ++k) {
    const std::vector<size_t>& nodes = program.kernels[k].nodes;
    kernels.push_back({{"name", program.kernels[k].name},
                       {"primitives", nodes.size()},
                       {"cost_ms", report.kernel_costs[k].seconds * 1e3},
                       {"cost_source", orchestration::cost_source_name(report.kernel_costs[k].source)}});
  }
  const nlohmann::json record = {
      {"candidates", report.candidates},     {"fused_candidates", report.generated_candidates},
      {"clusters", report.clusters},         {"parts", parts},
      {"measured", report.measured},         {"cached", report.cached},
      {"unbuildable", report.unbuildable},   {"rounds", report.rounds},
      {"proven_optimal", report.proven_optimal}, {"planned_ms", report.planned_seconds * 1e3},
      {"enumerate_seconds", report.enumerate_seconds}, {"profile_seconds", report.profile_seconds},
      {"solve_seconds", report.solve_seconds}, {"codegen_seconds", report.codegen_seconds},
      {"library_cached", report.library_cached}, {"kernels", kernels}};
  return record.dump();
}

void print_orchestration(const orchestration::OrchestrationReport& report) {
  size_t largest = 0, narrowest_cuts = 0;
  for (const orchestration::Part& part : report.parts) {
    largest = std::max(largest, part.nodes);
    narrowest_cuts += part.cut == "narrowest";
  }
  std::cout << fmt::format("  {} candidates ({} fused) from {} clusters in {} parts (largest {} primitives{}) in {:.2f} s\n",
                           report.candidates, report.generated_candidates, report.clusters, report.parts.size(),
                           largest,
                           narrowest_cuts ? fmt::format(", {} cut at the narrowest point", narrowest_cuts) : "",
                           report.enumerate_seconds)
            << fmt::format("  costs: {} measured now ({:.2f} s), {} from the cache; BLP {} rounds, {:.2f} s, {}\n",
                           report.measured, report.profile_seconds, report.cached, report.rounds, report.solve_seconds,
                           report.proven_optimal ? "proven optimal" : "NOT proven optimal (time limit)")
            << (report.unbuildable ? fmt::format("  {} candidates could not be built (first: {})\n", report.unbuildable,
                                                 report.first_unbuildable)
                                   : std::string())
            << fmt::format("  planned {:.3f} ms; code generation {:.2f} s{}\n", report.planned_seconds * 1e3,
                           report.codegen_seconds, report.library_cached ? " (library from the cache)" : "");
}

void compile_model(const CompileCommandOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  backend::cpu_backend().set_threads(options.threads);
  orchestration::OrchestrationReport report;
  derivation::DeriveReport derive_report;
  LoadedModel loaded = load_model(options.model, options.shapes, /*interpreter=*/false, options.compile,
                                  options.quiet, &report, &derive_report);
  if (!loaded.program) ORCHID_FAIL() << options.model << ": nothing to compile";
  runtime::ArtifactInfo info{options.model};
  if (!options.compile.no_fusion) info.orchestration_json = orchestration_json(report, *loaded.program);
  if (options.compile.derive) info.derivation_json = derivation::derive_report_json(derive_report);
  const runtime::MemoryPlan memory = runtime::save_artifact(*loaded.program, info, options.output_dir);
  if (options.quiet) return;
  const runtime::Program& program = *loaded.program;
  const size_t weights = constant_bytes(program.graph);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << fmt::format("compiled {} -> {} in {:.2f} s\n", options.model, options.output_dir, seconds)
            << fmt::format("  {} primitives in {} kernels\n", program.graph.nodes().size(), program.kernels.size())
            << fmt::format("  weights {}; intermediates {} in an arena of {} ({} tensors)\n", megabytes(weights),
                           megabytes(memory.intermediate_bytes), megabytes(memory.arena_bytes),
                           memory.num_intermediates);
  if (options.compile.derive) std::cout << derivation::format_derive_report(derive_report);
  if (!options.compile.no_fusion) print_orchestration(report);
}

}  // namespace

void add_compile_command(CLI::App& app, int& status) {
  auto options = std::make_shared<CompileCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "compile",
      "Compile an ONNX model into a program of kernels and write it to a folder: plan.json (the "
      "primitive graph, the kernels in order, the memory plan, a version stamp) and weights.bin. "
      "`orchid run DIR` and `orchid bench DIR` load it.");
  command->add_option("model", options->model, "The ONNX model file")->required();
  command->add_option("--output,-o", options->output_dir, "The artifact folder to write (created if needed)")
      ->required();
  command->add_flag("--quiet,-q", options->quiet, "Print nothing on success (and no progress)");
  command->add_option("--threads", options->threads,
                      "Threads the kernels are timed with, and will run with (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  options->compile.add_to(*command);
  options->shapes.add_to(*command);
  command->callback([options, &status] {
    compile_model(*options);
    status = 0;
  });
}

}  // namespace orchid::cli
