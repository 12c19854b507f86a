// orchid check MODEL.onnx [--test-dir DIR]: runs each test_data_set_* of an
// ONNX test folder and compares with its expected outputs.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "backend/backend.h"
#include "common.h"
#include "runtime/random_inputs.h"
#include "fission/fission.h"
#include "pipeline.h"
#include "runtime/executable.h"
#include "runtime/memory_check.h"
#include "support/parallel.h"
#include "frontend/onnx/importer.h"
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
  bool rtol_given = false;  // on the command line: overrides the folder's data.json
  bool atol_given = false;
  bool fission = false;      // interpret the graph after fission
  bool interpreter = false;  // interpret the imported graph
  int threads = 0;
  CompileFlags compile;
  ShapeOptions shapes;
};

// Runs the engine under test: by default the compiled program on the CPU
// runtime; the reference interpreter on the imported graph (--interpreter) or
// on its primitive form (--fission).
// On the runtime, `kernels` receives the program's kernels, so the caller can
// say which implementations ran.
std::vector<Tensor> run_under_test(const CheckOptions& options, const Graph& imported,
                                   const std::map<std::string, Tensor>& feeds,
                                   std::vector<runtime::KernelInfo>* kernels = nullptr) {
  if (options.interpreter) return reference::run_graph(imported, feeds);
  if (options.fission) return reference::run_graph(fission::fission(imported), feeds);
  runtime::Executable executable(compile(imported, options.compile.pipeline(options.threads, /*quiet=*/true)));
  if (kernels) *kernels = executable.kernel_info();
  return executable.run(feeds);
}

// "ran 3 kernels: elementwise 2, reference 1; specialized on 1 input": what a
// runtime check exercised. A test folded to constants at import runs no
// kernel at all ("ran 0 kernels"); a "reference" kernel is the interpreter
// standing in for a missing native one. The conformance runner reads this line.
std::string ran_line(const std::vector<runtime::KernelInfo>& kernels, size_t specialized_inputs) {
  std::map<std::string, int> per_implementation;
  for (const runtime::KernelInfo& kernel : kernels) ++per_implementation[kernel.implementation];
  std::string line = fmt::format("  ran {} kernel{}", kernels.size(), kernels.size() == 1 ? "" : "s");
  const char* separator = ": ";
  for (const auto& [implementation, count] : per_implementation) {
    line += fmt::format("{}{} {}", separator, implementation, count);
    separator = ", ";
  }
  if (specialized_inputs) {
    line += fmt::format("; specialized on {} input{}", specialized_inputs, specialized_inputs == 1 ? "" : "s");
  }
  return line;
}

const char* engine_name(const CheckOptions& options) {
  return options.interpreter ? "interpreter" : options.fission ? "interpreter after fission" : "runtime";
}

// A graph input or output as the model declares it.
struct DeclaredValue {
  std::string name;
  std::string kind = "tensor";  // tensor, sequence, optional, map, sparse tensor
  int elem_type = 0;            // ONNX element type code of a tensor; 0 if unknown
  bool has_shape = false;
  std::vector<int64_t> dims;    // -1 for a symbolic or unknown dimension
};

struct ModelSignature {
  std::vector<DeclaredValue> inputs;  // initializers excluded, in order
  std::vector<DeclaredValue> outputs;
};

std::string type_kind(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kSequenceType: return "sequence";
    case onnx::TypeProto::kOptionalType: return "optional";
    case onnx::TypeProto::kMapType: return "map";
    case onnx::TypeProto::kSparseTensorType: return "sparse tensor";
    default: return "tensor";
  }
}

DeclaredValue declared_value(const onnx::ValueInfoProto& info) {
  DeclaredValue value;
  value.name = info.name();
  if (info.has_type()) {
    value.kind = type_kind(info.type());
    if (info.type().has_tensor_type()) {
      const auto& tensor_type = info.type().tensor_type();
      value.elem_type = tensor_type.elem_type();
      value.has_shape = tensor_type.has_shape();
      for (const auto& dim : tensor_type.shape().dim()) {
        value.dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
      }
    }
  }
  return value;
}

// Reads the declared inputs and outputs without importing the graph.
ModelSignature read_signature(const std::string& path) {
  const std::string bytes = onnx_frontend::read_model_file(path);
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    ORCHID_FAIL() << path << ": not a valid ONNX model (the protobuf is corrupt or truncated)";
  }
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  ModelSignature signature;
  for (const auto& input : model.graph().input()) {
    if (!initializers.count(input.name())) signature.inputs.push_back(declared_value(input));
  }
  for (const auto& output : model.graph().output()) signature.outputs.push_back(declared_value(output));
  return signature;
}

// Only tensors are supported: sequence, optional and map values (stored in
// test data as SequenceProto / OptionalProto) are not.
void require_tensor(const DeclaredValue& value, const char* what, const std::string& model) {
  if (value.kind != "tensor") {
    const char* article = value.kind == "optional" ? "an" : "a";
    ORCHID_FAIL() << model << ": " << what << " '" << value.name << "' is " << article << " " << value.kind
                  << " value; " << value.kind << " values are not supported (tensors only)";
  }
}

// ONNX's test generator stores bfloat16 tensors as their uint16 bit patterns
// (numpy has no bfloat16): reinterpret them where the model declares bfloat16.
Tensor as_declared(Tensor tensor, const DeclaredValue* declared) {
  constexpr int kOnnxBFloat16 = 16;
  if (declared && declared->elem_type == kOnnxBFloat16 && tensor.dtype() == DType::UInt16) {
    Tensor bits(DType::BFloat16, tensor.shape());
    if (tensor.nbytes()) std::memcpy(bits.raw(), tensor.raw(), tensor.nbytes());
    return bits;
  }
  return tensor;
}

// A test folder may carry a data.json with its own "rtol" / "atol" (ONNX's
// model tests do); the command line takes precedence.
void read_folder_tolerance(const fs::path& dir, CheckOptions& options) {
  fs::path json_path = dir / "data.json";
  if (!fs::is_regular_file(json_path)) return;
  std::ifstream file(json_path);
  nlohmann::json data = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
  if (data.is_discarded() || !data.is_object()) {
    ORCHID_FAIL() << json_path.string() << ": not valid JSON";
  }
  std::string taken;
  for (auto [key, value, given] : {std::tuple{"rtol", &options.rtol, options.rtol_given},
                                   std::tuple{"atol", &options.atol, options.atol_given}}) {
    if (given || !data.contains(key) || !data[key].is_number()) continue;
    *value = data[key].get<double>();
    taken += fmt::format(" {}={:g}", key, *value);
  }
  if (!taken.empty()) std::cerr << "note: tolerance from " << json_path.string() << ":" << taken << "\n";
}

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
std::map<std::string, Tensor> read_inputs(const fs::path& data_set, const ModelSignature& signature,
                                          const std::string& model) {
  const auto& declared = signature.inputs;
  std::map<std::string, Tensor> inputs;
  auto files = sorted_files(data_set, "input_");
  for (size_t k = 0; k < files.size(); ++k) {
    // Before parsing: a SequenceProto read as a TensorProto gives nonsense.
    if (k < declared.size()) require_tensor(declared[k], "input", model);
    onnx_frontend::NamedTensor named = onnx_frontend::read_tensor_file(files[k].string());
    std::string name = named.name;
    if (name.empty()) {
      if (k >= declared.size()) ORCHID_FAIL() << files[k].string() << ": the model has only " << declared.size() << " inputs";
      name = declared[k].name;
    }
    auto it = std::find_if(declared.begin(), declared.end(), [&](const auto& d) { return d.name == name; });
    inputs[name] = as_declared(named.tensor, it == declared.end() ? nullptr : &*it);
  }
  return inputs;
}

// Runs one data set; prints one line; returns whether every output matched.
bool check_data_set(const CheckOptions& options, const fs::path& data_set, const ModelSignature& signature) {
  onnx_frontend::ImportOptions import_options;
  import_options.input_shapes = options.shapes.parse();
  import_options.specializable_inputs = read_inputs(data_set, signature, options.model);
  // The model runs on the data's shapes: they bind symbolic dimensions, and
  // where a fixed dimension disagrees (a few ONNX test models declare the
  // wrong shape) the data wins, with a note. --shape takes precedence; a rank
  // mismatch is left for the interpreter to report.
  for (const auto& declared : signature.inputs) {
    auto data = import_options.specializable_inputs.find(declared.name);
    if (data == import_options.specializable_inputs.end()) continue;
    if (import_options.input_shapes.count(declared.name)) continue;
    const Shape& shape = data->second.shape();
    if (declared.has_shape && declared.dims.size() != shape.size()) continue;
    bool conflict = false;
    for (size_t i = 0; i < declared.dims.size(); ++i) {
      conflict |= declared.dims[i] >= 0 && declared.dims[i] != shape[i];
    }
    if (conflict) {
      Shape model_shape(declared.dims.begin(), declared.dims.end());
      std::cerr << fmt::format("note: input '{}': the test data's shape {} differs from the declared {}; "
                               "using the data's\n",
                               declared.name, shape_to_string(shape), shape_to_string(model_shape));
    }
    import_options.input_shapes[declared.name] = shape;
  }
  auto imported = onnx_frontend::import_model(options.model, import_options);
  print_notes(imported);
  for (const auto& output : signature.outputs) require_tensor(output, "output", options.model);
  std::vector<runtime::KernelInfo> kernels;
  const bool on_runtime = !options.interpreter && !options.fission;
  std::vector<Tensor> actual =
      run_under_test(options, imported.graph, import_options.specializable_inputs, on_runtime ? &kernels : nullptr);
  auto expected_files = sorted_files(data_set, "output_");
  if (expected_files.size() != actual.size()) {
    ORCHID_FAIL() << data_set.string() << ": has " << expected_files.size() << " expected outputs, the model computes "
                  << actual.size();
  }
  bool ok = true;
  double max_abs = 0, max_rel = 0;
  std::string first_failure;
  for (size_t k = 0; k < actual.size(); ++k) {
    Tensor expected = as_declared(onnx_frontend::read_tensor_file(expected_files[k].string()).tensor,
                                  k < signature.outputs.size() ? &signature.outputs[k] : nullptr);
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
  if (on_runtime) {
    std::cout << ran_line(kernels, imported.specialized_inputs.size()) << "\n";
  }
  return ok;
}

// Without a test folder: random inputs. The engine under test is compared
// with the reference interpreter on the imported graph; with --interpreter
// (nothing to compare with) every float output must be finite.
bool check_random(const CheckOptions& options) {
  onnx_frontend::ImportOptions import_options;
  import_options.input_shapes = options.shapes.parse();
  auto imported = onnx_frontend::import_model(options.model, import_options);
  print_notes(imported);
  runtime::check_values_fit(imported.graph);  // before making inputs
  std::mt19937_64 rng(options.seed);
  std::map<std::string, Tensor> feeds;
  for (ValueId id : imported.graph.inputs()) {
    const Value& input = imported.graph.value(id);
    feeds[input.name] = runtime::random_tensor(input.type, rng);
  }
  auto outputs = reference::run_graph(imported.graph, feeds);
  std::vector<Tensor> tested;
  if (!options.interpreter) tested = run_under_test(options, imported.graph, feeds);
  bool ok = true;
  for (size_t k = 0; k < outputs.size(); ++k) {
    std::string verdict;
    if (!options.interpreter) {
      auto cmp = reference::compare_tensors(tested[k], outputs[k], options.rtol, options.atol);
      verdict = fmt::format("{} ({} against the interpreter)  max_abs_error={:.3g}  max_rel_error={:.3g}{}",
                            cmp.ok ? "PASS" : "FAIL", engine_name(options), cmp.max_abs_error, cmp.max_rel_error,
                            cmp.ok ? "" : "  (" + cmp.mismatch + ")");
      ok &= cmp.ok;
    } else {
      int64_t bad = 0;
      if (is_float(outputs[k].dtype())) {
        for (int64_t i = 0; i < outputs[k].numel(); ++i) bad += !std::isfinite(outputs[k].at_f64(i));
      }
      verdict = bad ? fmt::format("FAIL ({} non-finite values)", bad) : "PASS (finite)";
      ok &= bad == 0;
    }
    std::cout << fmt::format("random inputs (seed {}): output {} '{}' {}: {}\n", options.seed, k,
                             imported.graph.value(imported.graph.outputs()[k]).name,
                             outputs[k].type().to_string(), verdict);
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
      "error. Without it, runs random inputs and compares with the reference interpreter.\n"
      "By default the model is compiled and runs on the CPU runtime, as `orchid run` does; "
      "--interpreter and --fission check the reference interpreter instead.\n"
      "Exit status: 0 all passed, 1 a comparison failed, 2 bad input.");
  command->add_option("model", options->model, "The ONNX model file")->required();
  command->add_option("--test-dir", options->test_dir,
                      "Folder holding test_data_set_* subfolders (often the model's own folder)");
  command->add_option("--rtol", options->rtol, "Relative tolerance (default: the test folder's data.json, else 1e-3)");
  command->add_option("--atol", options->atol, "Absolute tolerance (default: the test folder's data.json, else 1e-7)");
  command->add_option("--seed", options->seed, "Seed for random inputs")->capture_default_str();
  command->add_flag("--fission", options->fission,
                    "Check the reference interpreter on the graph after fission into primitives");
  command->add_flag("--interpreter", options->interpreter,
                    "Check the reference interpreter on the imported graph (without --test-dir: only "
                    "that outputs are finite)");
  add_threads_option(*command, options->threads);
  options->compile.add_to(*command);
  options->shapes.add_to(*command);
  command->callback([options, command, &status] {
    if (options->fission && options->interpreter) ORCHID_FAIL() << "--fission and --interpreter exclude each other";
    backend::cpu_backend().set_threads(options->threads);
    options->rtol_given = command->count("--rtol") > 0;
    options->atol_given = command->count("--atol") > 0;
    bool ok = true;
    if (options->test_dir.empty()) {
      ok = check_random(*options);
    } else {
      fs::path dir(options->test_dir);
      if (!fs::is_directory(dir)) ORCHID_FAIL() << options->test_dir << ": no such folder";
      auto data_sets = sorted_files(dir, "test_data_set_");
      if (data_sets.empty()) ORCHID_FAIL() << options->test_dir << ": no test_data_set_* folders";
      read_folder_tolerance(dir, *options);
      ModelSignature signature = read_signature(options->model);
      for (const auto& data_set : data_sets) ok &= check_data_set(*options, data_set, signature);
    }
    status = ok ? 0 : 1;
  });
}

}  // namespace orchid::cli
