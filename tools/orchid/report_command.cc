// orchid report MODEL.onnx|DIR -o report.html: times a compiled model (or
// compiles one) and writes one self-contained HTML page of its plan
// (src/report): the plan drawn with kernels coloured by kind, each kernel's
// time against its roofline bound, the BLP's record, derived regions, and the
// comparison with the no-fusion plan.
#include <iostream>

#include "common.h"
#include "support/error.h"

namespace orchid::cli {

namespace {

struct ReportCommandOptions {
  std::string model;
  std::string output;
  int threads = 0;
  int runs = 20;
  bool no_baseline = false;
  ShapeOptions shapes;
  CompileFlags compile;
};

void write_report(const ReportCommandOptions& options) {
  if (options.runs < 1) ORCHID_FAIL() << "--runs must be at least 1";
  LoadedModel loaded = load_model(options.model, options.shapes, /*interpreter=*/false, options.threads,
                                  options.compile);
  loaded.model->report(options.output, ReportOptions{options.runs, !options.no_baseline});
  std::cout << "wrote " << options.output << "\n";
}

}  // namespace

void add_report_command(CLI::App& app, int& status) {
  auto options = std::make_shared<ReportCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "report",
      "Write one self-contained HTML page about a model's plan: the plan drawn (Graphviz) with primitives "
      "grouped into kernels coloured by kind and labelled with their time and share of their roofline bound, "
      "a sortable kernel table, how the BLP chose the plan, what derivation replaced, and the time of the "
      "no-fusion plan. MODEL is a folder written by `orchid compile` or an ONNX file (compiled first).");
  command->add_option("model", options->model, "A compiled artifact folder or an ONNX model file")->required();
  command->add_option("--output,-o", options->output, "The HTML file to write")->required();
  command->add_option("--runs", options->runs, "Timed runs for the kernel times")->capture_default_str();
  command->add_flag("--no-baseline", options->no_baseline, "Do not build and time the no-fusion plan");
  add_threads_option(*command, options->threads);
  options->compile.add_to(*command);
  options->shapes.add_to(*command);
  command->callback([options, &status] {
    write_report(*options);
    status = 0;
  });
}

}  // namespace orchid::cli
