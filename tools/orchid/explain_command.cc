// orchid explain MODEL.onnx | DIR: what derivation does to a model's linear
// primitives (each one's derived forms, derivation steps, measured costs and
// search statistics), or, for a compiled artifact, which derived forms its
// plan uses and where (plan.json's "derivation").
#include <iostream>
#include <limits>

#include "backend/backend.h"
#include "common.h"
#include "fission/fission.h"
#include "runtime/artifact.h"
#include "support/error.h"
#include "support/parallel.h"

namespace orchid::cli {

namespace {

struct ExplainOptions {
  std::string model;
  bool json = false;
  bool no_fingerprints = false;
  bool measure_all = false;
  bool exhaustive = false;
  size_t max_states = 0;
  int depth = -1;
  double time_limit = -1;
  int threads = 0;
  ShapeOptions shapes;
  CompileFlags compile;
};

// A compiled artifact: the derivation record in its plan.json.
void explain_artifact(const ExplainOptions& options) {
  const std::string record = runtime::load_artifact_info(options.model).derivation_json;
  if (record.empty()) {
    std::cout << options.model << ": compiled without derivation (--no-derive or --no-fusion; no derived forms)\n";
    return;
  }
  if (options.json) {
    std::cout << record << "\n";
    return;
  }
  std::cout << options.model << ":\n"
            << derivation::format_derive_report(derivation::derive_report_from_json(record));
}

// An ONNX model: fission, then the derivation stage with its measurements.
void explain_model(const ExplainOptions& options) {
  onnx_frontend::ImportOptions import_options;
  import_options.input_shapes = options.shapes.parse();
  auto imported = onnx_frontend::import_model(options.model, import_options);
  print_notes(imported);
  PipelineOptions compile = options.compile.pipeline(options.threads, /*quiet=*/options.json);
  if (options.depth >= 0) compile.derive_search.max_depth = options.depth;
  if (options.time_limit >= 0) compile.derive_search.time_limit_seconds = options.time_limit;
  compile.derive_search.fingerprint_dedup = !options.no_fingerprints;
  if (options.exhaustive) compile.derive_search.max_found = std::numeric_limits<size_t>::max();
  if (options.max_states > 0) compile.derive_search.max_states = options.max_states;
  if (options.measure_all) compile.derive_max_estimate_ratio = std::numeric_limits<double>::infinity();
  derivation::DeriveReport report;
  derive_primitives(fission::fission(imported.graph), compile, &report);
  std::cout << (options.json ? derivation::derive_report_json(report) + "\n" : derivation::format_derive_report(report));
}

}  // namespace

void add_explain_command(CLI::App& app, int& status) {
  auto options = std::make_shared<ExplainOptions>();
  CLI::App* command = app.add_subcommand(
      "explain",
      "Show what derivation does: for an ONNX model, run it on every Conv, ConvTranspose and MatMul (search, "
      "measure the derived forms against the original) and print each one's steps, costs and search statistics; "
      "for a compiled artifact folder, print which derived forms its plan uses and where.");
  command->add_option("model", options->model, "The ONNX model file or an artifact folder")->required();
  command->add_flag("--json", options->json, "Print the report as JSON");
  command->add_flag("--no-fingerprints", options->no_fingerprints,
                    "Search without fingerprint deduplication (to measure what it saves)");
  command->add_flag("--measure-all", options->measure_all,
                    "Measure the best derived forms even when the estimate puts them far behind the original");
  command->add_flag("--exhaustive", options->exhaustive,
                    "Search the whole space to --depth (within the limits) instead of stopping after 256 forms");
  command->add_option("--max-states", options->max_states, "Most states the search expands (default 20000)");
  command->add_option("--depth", options->depth, "Explorative search depth (default 4)")->check(CLI::NonNegativeNumber);
  command->add_option("--time-limit", options->time_limit, "Search seconds per primitive (default 2)")
      ->check(CLI::NonNegativeNumber);
  add_threads_option(*command, options->threads);
  options->compile.add_to(*command);
  options->shapes.add_to(*command);
  command->callback([options, &status] {
    backend::cpu_backend().set_threads(options->threads);
    if (runtime::is_artifact(options->model)) {
      explain_artifact(*options);
    } else {
      explain_model(*options);
    }
    status = 0;
  });
}

}  // namespace orchid::cli
