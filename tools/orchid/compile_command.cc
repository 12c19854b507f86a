// orchid compile MODEL.onnx -o DIR: imports, compiles and writes an artifact
// folder that `orchid run DIR` loads.
#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "api/model_impl.h"
#include "common.h"
#include "runtime/memory_plan.h"
#include "support/error.h"

namespace orchid::cli {

namespace {

struct CompileCommandOptions {
  std::string model;
  std::string output_dir;
  bool quiet = false;
  std::string report;  // --report FILE.html
  int threads = 0;
  ShapeOptions shapes;
  CompileFlags compile;
};

std::string megabytes(size_t bytes) { return fmt::format("{:.2f} MB", double(bytes) / 1e6); }

void compile_model(const CompileCommandOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  LoadedModel loaded = load_model(options.model, options.shapes, /*interpreter=*/false, options.threads,
                                  options.compile, options.quiet);
  if (!loaded.model) ORCHID_FAIL() << options.model << ": nothing to compile";
  const Model& model = *loaded.model;
  const runtime::MemoryPlan memory = model.impl().save(options.output_dir);
  if (!options.report.empty()) model.report(options.report);
  if (options.quiet) return;
  const CompileSummary& summary = model.summary();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << fmt::format("compiled {} -> {} in {:.2f} s\n", options.model, options.output_dir, seconds)
            << fmt::format("  {} primitives in {} kernels\n", summary.primitives, summary.kernels)
            << fmt::format("  weights {}; intermediates {} in an arena of {} ({} tensors)\n",
                           megabytes(summary.weight_bytes), megabytes(memory.intermediate_bytes),
                           megabytes(memory.arena_bytes), memory.num_intermediates)
            << summary.derivation_text << summary.orchestration_text;
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
  command->add_option("--report", options->report,
                      "Also time the compiled model and write an HTML page of its plan here (as `orchid report`)");
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
