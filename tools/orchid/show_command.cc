// orchid show MODEL.onnx: imports a model and prints its Graph IR as text,
// after canonicalization, shape inference and constant folding.
#include <iostream>

#include "common.h"
#include "fission/fission.h"
#include "ir/graph_printer.h"
#include "ir/graph_verifier.h"

namespace orchid::cli {

namespace {

struct ShowOptions {
  std::string model;
  bool fission = false;
  ShapeOptions shapes;
};

}  // namespace

void add_show_command(CLI::App& app, int& status) {
  auto options = std::make_shared<ShowOptions>();
  CLI::App* command = app.add_subcommand(
      "show",
      "Import a model and print Orchid's graph IR as text: operators in canonical form, static "
      "shapes, folded constants.");
  command->add_option("model", options->model, "The ONNX model file")->required();
  command->add_flag("--fission", options->fission, "Print the graph after fission into primitives");
  options->shapes.add_to(*command);
  command->callback([options, &status] {
    onnx_frontend::ImportOptions import_options;
    import_options.input_shapes = options->shapes.parse();
    auto imported = onnx_frontend::import_model(options->model, import_options);
    print_notes(imported);
    Graph graph = options->fission ? fission::fission(imported.graph) : std::move(imported.graph);
    verify_graph(graph);
    std::cout << "# opset " << imported.opset << "\n" << print_graph(graph);
    status = 0;
  });
}

}  // namespace orchid::cli
