// orchid run MODEL.onnx|DIR [--input NAME=FILE.pb ...] [--output-dir DIR]: runs a
// compiled artifact, or an ONNX model compiled in memory (or interpreted).
#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "common.h"
#include "runtime/random_inputs.h"
#include "frontend/onnx/tensor_proto.h"
#include "support/error.h"

namespace orchid::cli {

namespace fs = std::filesystem;

namespace {

struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;  // NAME=FILE.pb
  std::string output_dir;
  bool random_inputs = false;
  bool interpreter = false;
  int threads = 0;
  CompileFlags compile;
  uint64_t seed = 0;
  ShapeOptions shapes;
};

struct InputFile {
  std::string path;
  Tensor tensor;
};

std::map<std::string, InputFile> read_input_files(const std::vector<std::string>& specs) {
  std::map<std::string, InputFile> files;
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      ORCHID_FAIL() << "--input '" << spec << "': expected NAME=FILE.pb";
    }
    std::string path = spec.substr(eq + 1);
    files[spec.substr(0, eq)] = {path, onnx_frontend::read_tensor_file(path).tensor};
  }
  return files;
}

// Every --input names a declared graph input, and its file holds a tensor of
// that input's type (checked here to name the file in the message).
void check_input_files(const std::map<std::string, InputFile>& files, const LoadedModel& loaded,
                       const std::string& model) {
  const auto& declared = loaded.declared_inputs;
  for (const auto& [name, file] : files) {
    if (std::find(declared.begin(), declared.end(), name) == declared.end()) {
      std::string list;
      for (const auto& d : declared) list += (list.empty() ? "'" : ", '") + d + "'";
      ORCHID_FAIL() << "--input " << name << "=" << file.path << ": " << model << " has no input named '"
                    << name << "' (its inputs: " << (list.empty() ? "none" : list) << ")";
    }
    auto id = loaded.graph.find_value(name);
    if (!id) continue;
    const TensorType& expected = loaded.graph.value(*id).type;
    if (file.tensor.type() != expected) {
      ORCHID_FAIL() << "--input " << name << "=" << file.path << ": the file holds "
                    << file.tensor.type().to_string() << ", but input '" << name << "' of " << model
                    << " is " << expected.to_string();
    }
  }
}

std::string preview(const Tensor& tensor) {
  std::string text;
  int64_t n = std::min<int64_t>(tensor.numel(), 6);
  for (int64_t i = 0; i < n; ++i) text += fmt::format("{}{:.6g}", i ? ", " : "", tensor.at_f64(i));
  if (tensor.numel() > n) text += ", ...";
  return "[" + text + "]";
}

void run(const RunOptions& options) {
  std::map<std::string, InputFile> files = read_input_files(options.inputs);
  std::map<std::string, Tensor> feeds;
  for (const auto& [name, file] : files) feeds[name] = file.tensor;
  LoadedModel loaded = load_model(options.model, options.shapes, options.interpreter, options.threads, options.compile);
  check_input_files(files, loaded, options.model);
  const Graph& graph = loaded.graph;
  std::mt19937_64 rng(options.seed);
  std::vector<std::string> missing;
  for (ValueId id : graph.inputs()) {
    const Value& input = graph.value(id);
    if (feeds.count(input.name)) continue;
    if (options.random_inputs) {
      feeds[input.name] = runtime::random_tensor(input.type, rng);
    } else {
      missing.push_back("'" + input.name + "' (" + input.type.to_string() + ")");
    }
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    ORCHID_FAIL() << options.model << ": no value given for input" << (missing.size() > 1 ? "s " : " ") << list
                  << "; pass --input NAME=FILE.pb or --random-inputs";
  }
  std::vector<Tensor> outputs = execute(loaded, feeds);
  if (!options.output_dir.empty()) {
    std::error_code ec;
    fs::create_directories(options.output_dir, ec);
    if (ec || !fs::is_directory(options.output_dir)) {
      ORCHID_FAIL() << "--output-dir " << options.output_dir << ": cannot create the folder"
                    << (ec ? " (" + ec.message() + ")" : std::string());
    }
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    const std::string& name = graph.value(graph.outputs()[k]).name;
    std::cout << fmt::format("output {} '{}' {} {}\n", k, name, outputs[k].type().to_string(), preview(outputs[k]));
    if (!options.output_dir.empty()) {
      std::string path = (fs::path(options.output_dir) / fmt::format("output_{}.pb", k)).string();
      onnx_frontend::write_tensor_file(path, outputs[k], name);
    }
  }
}

}  // namespace

void add_run_command(CLI::App& app, int& status) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand(
      "run",
      "Run a model on given inputs and print (and optionally save) its outputs.\n"
      "MODEL is a folder written by `orchid compile`, or an ONNX file, which is compiled in memory "
      "(or, with --interpreter, run by the reference interpreter).\n"
      "Inputs and outputs are ONNX TensorProto files (.pb), the format of ONNX test data; "
      "outputs are written as output_<k>.pb in graph-output order.");
  command->add_option("model", options->model, "A compiled artifact folder or an ONNX model file")->required();
  command->add_option("--input,-i", options->inputs, "An input tensor: NAME=FILE.pb (repeatable)");
  command->add_option("--output-dir,-o", options->output_dir, "Write output_<k>.pb files here");
  command->add_flag("--random-inputs", options->random_inputs,
                    "Fill inputs not given with --input with random values");
  command->add_option("--seed", options->seed, "Seed for --random-inputs")->capture_default_str();
  command->add_flag("--interpreter", options->interpreter,
                    "Run the imported graph on the reference interpreter instead of compiling it");
  add_threads_option(*command, options->threads);
  options->compile.add_to(*command);
  options->shapes.add_to(*command);
  command->callback([options, &status] {
    run(*options);
    status = 0;
  });
}

}  // namespace orchid::cli
