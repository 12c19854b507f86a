// orchid check MODEL.onnx [--test-dir DIR]: runs each test_data_set_* of an
// ONNX test folder and compares with its expected outputs.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "common.h"
#include "frontend/onnx/tensor_proto.h"
#include "reference/compare.h"
#include "reference/interpreter.h"
#include "support/error.h"

namespace orchid::cli {

namespace fs = std::filesystem;

namespace {

struct CheckOptions {
  std::string model;
  std::string test_dir;
  double rtol = 1e-3;
  double atol = 1e-7;
  uint64_t seed = 0;
  ShapeOptions shapes;
};

std::vector<fs::path> sorted_files(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) files.push_back(entry.path());
  }
  // input_10.pb sorts after input_9.pb: compare the numeric suffix.
  auto number = [&](const fs::path& p) {
    std::string stem = p.stem().string().substr(prefix.size());
    return stem.empty() ? 0L : std::strtol(stem.c_str(), nullptr, 10);
  };
  std::sort(files.begin(), files.end(), [&](const auto& a, const auto& b) { return number(a) < number(b); });
  return files;
}

// Reads input_<k>.pb; a tensor without a name feeds the k-th declared input.
std::map<std::string, Tensor> read_inputs(const fs::path& data_set,
                                          const std::vector<std::string>& declared) {
  std::map<std::string, Tensor> inputs;
  auto files = sorted_files(data_set, "input_");
  for (size_t k = 0; k < files.size(); ++k) {
    onnx_frontend::NamedTensor named = onnx_frontend::read_tensor_file(files[k].string());
    std::string name = named.name;
    if (name.empty()) {
      if (k >= declared.size()) ORCHID_FAIL() << files[k].string() << ": the model has only " << declared.size() << " inputs";
      name = declared[k];
    }
    inputs[name] = named.tensor;
  }
  return inputs;
}

// Runs one data set; prints one line; returns whether every output matched.
bool check_data_set(const CheckOptions& options, const fs::path& data_set,
                    const std::vector<std::string>& declared) {
  onnx_frontend::ImportOptions import_options;
  import_options.input_shapes = options.shapes.parse();
  import_options.specializable_inputs = read_inputs(data_set, declared);
  auto imported = onnx_frontend::import_model(options.model, import_options);
  print_notes(imported);
  std::vector<Tensor> actual = reference::run_graph(imported.graph, import_options.specializable_inputs);
  auto expected_files = sorted_files(data_set, "output_");
  if (expected_files.size() != actual.size()) {
    ORCHID_FAIL() << data_set.string() << ": has " << expected_files.size() << " expected outputs, the model computes "
                  << actual.size();
  }
  bool ok = true;
  double max_abs = 0, max_rel = 0;
  std::string first_failure;
  for (size_t k = 0; k < actual.size(); ++k) {
    Tensor expected = onnx_frontend::read_tensor_file(expected_files[k].string()).tensor;
    auto cmp = reference::compare_tensors(actual[k], expected, options.rtol, options.atol);
    max_abs = std::max(max_abs, cmp.max_abs_error);
    max_rel = std::max(max_rel, cmp.max_rel_error);
    if (!cmp.ok && first_failure.empty()) {
      first_failure = "output " + std::to_string(k) + " '" + imported.graph.value(imported.graph.outputs()[k]).name + "' " + cmp.mismatch;
    }
    ok &= cmp.ok;
  }
  std::cout << fmt::format("{}: {}  max_abs_error={:.3g}  max_rel_error={:.3g}{}\n",
                           data_set.filename().string(), ok ? "PASS" : "FAIL", max_abs, max_rel,
                           first_failure.empty() ? "" : "  (" + first_failure + ")");
  return ok;
}

// Without a test folder: random inputs through the reference interpreter;
// checks that every float output is finite.
bool check_random(const CheckOptions& options) {
  onnx_frontend::ImportOptions import_options;
  import_options.input_shapes = options.shapes.parse();
  auto imported = onnx_frontend::import_model(options.model, import_options);
  print_notes(imported);
  std::mt19937_64 rng(options.seed);
  std::map<std::string, Tensor> feeds;
  for (ValueId id : imported.graph.inputs()) {
    const Value& input = imported.graph.value(id);
    feeds[input.name] = random_tensor(input.type, rng);
  }
  auto outputs = reference::run_graph(imported.graph, feeds);
  bool ok = true;
  for (size_t k = 0; k < outputs.size(); ++k) {
    int64_t bad = 0;
    if (is_float(outputs[k].dtype())) {
      for (int64_t i = 0; i < outputs[k].numel(); ++i) bad += !std::isfinite(outputs[k].at_f64(i));
    }
    std::cout << fmt::format("random inputs (seed {}): output {} '{}' {}: {}\n", options.seed, k,
                             imported.graph.value(imported.graph.outputs()[k]).name,
                             outputs[k].type().to_string(),
                             bad ? fmt::format("FAIL ({} non-finite values)", bad) : "PASS (finite)");
    ok &= bad == 0;
  }
  return ok;
}

}  // namespace

void add_check_command(CLI::App& app, int& status) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App* command = app.add_subcommand(
      "check",
      "Run a model on test data and compare with the expected outputs.\n"
      "With --test-dir, runs every test_data_set_* folder (ONNX test format: input_<k>.pb, "
      "output_<k>.pb) and prints one line per data set with the largest absolute and relative "
      "error. Without it, runs random inputs and checks the outputs are finite.\n"
      "Exit status: 0 all passed, 1 a comparison failed, 2 bad input.");
  command->add_option("model", options->model, "The ONNX model file")->required();
  command->add_option("--test-dir", options->test_dir,
                      "Folder holding test_data_set_* subfolders (often the model's own folder)");
  command->add_option("--rtol", options->rtol, "Relative tolerance")->capture_default_str();
  command->add_option("--atol", options->atol, "Absolute tolerance")->capture_default_str();
  command->add_option("--seed", options->seed, "Seed for random inputs")->capture_default_str();
  options->shapes.add_to(*command);
  command->callback([options, &status] {
    bool ok = true;
    if (options->test_dir.empty()) {
      ok = check_random(*options);
    } else {
      fs::path dir(options->test_dir);
      if (!fs::is_directory(dir)) ORCHID_FAIL() << options->test_dir << ": no such folder";
      auto data_sets = sorted_files(dir, "test_data_set_");
      if (data_sets.empty()) ORCHID_FAIL() << options->test_dir << ": no test_data_set_* folders";
      auto declared = onnx_frontend::declared_model_inputs(options->model);
      for (const auto& data_set : data_sets) ok &= check_data_set(*options, data_set, declared);
    }
    status = ok ? 0 : 1;
  });
}

}  // namespace orchid::cli
