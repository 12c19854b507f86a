#include "common.h"

#include <filesystem>
#include <iostream>

#include <unistd.h>

#include "api/model_impl.h"
#include "pipeline.h"
#include "reference/interpreter.h"
#include "runtime/artifact.h"
#include "runtime/memory_check.h"
#include "support/error.h"
#include "support/parallel.h"

namespace orchid::cli {

void ShapeOptions::add_to(CLI::App& command) {
  command.add_option("--shape", specs,
                     "Bind an input's shape, e.g. --shape input=1x3x224x224 (repeatable); "
                     "symbolic dimensions default to 1");
}

std::map<std::string, Shape> ShapeOptions::parse() const {
  std::map<std::string, Shape> shapes;
  for (const std::string& spec : specs) {
    size_t eq = spec.rfind('=');
    if (eq == std::string::npos || eq == 0) {
      ORCHID_FAIL() << "--shape '" << spec << "': expected NAME=DIMxDIMx..., e.g. input=1x3x224x224";
    }
    Shape shape;
    std::string dims = spec.substr(eq + 1);
    size_t start = 0;
    while (start <= dims.size()) {
      size_t end = dims.find('x', start);
      std::string dim = dims.substr(start, end == std::string::npos ? std::string::npos : end - start);
      try {
        size_t used = 0;
        long long value = std::stoll(dim, &used);
        if (used != dim.size() || value < 0) throw std::invalid_argument(dim);
        shape.push_back(value);
      } catch (const std::exception&) {
        ORCHID_FAIL() << "--shape '" << spec << "': '" << dim << "' is not a dimension";
      }
      if (end == std::string::npos) break;
      start = end + 1;
    }
    shapes[spec.substr(0, eq)] = shape;
  }
  return shapes;
}

void print_notes(const onnx_frontend::ImportResult& result) {
  for (const std::string& note : result.notes) std::cerr << "note: " << note << "\n";
}

namespace {

// A graph with only the model's inputs and outputs: names and types.
Graph interface_of(const Model& model) {
  Graph interface;
  auto copy = [&](const TensorInfo& info) {
    if (auto existing = interface.find_value(info.name)) return *existing;
    return interface.add_value(info.name, TensorType{info.dtype, info.shape});
  };
  for (const TensorInfo& info : model.inputs()) interface.inputs().push_back(copy(info));
  for (const TensorInfo& info : model.outputs()) interface.outputs().push_back(copy(info));
  return interface;
}

}  // namespace

void CompileFlags::add_to(CLI::App& command) {
  CLI::Option* no_fusion_flag =
      command.add_flag("--no-fusion", no_fusion,
                       "Compile the baseline plan: one kernel per primitive (linear primitives keep their oneDNN "
                       "epilogues), without derivation");
  command.add_flag("--no-profile", no_profile,
                   "Do not time candidate kernels: choose with cached measurements and the analytical model");
  CLI::Option* derive_flag =
      command.add_flag("--derive", derive,
                       "Derivation (OLLIE), the default with fusion: try derived forms of Conv, ConvTranspose and "
                       "MatMul (found by rewriting their expressions), measure them, and let the plan choose them "
                       "where they make it faster");
  command.add_flag("--no-derive", no_derive, "Plan without derivation (only the operators' own forms)")
      ->excludes(derive_flag);
  no_fusion_flag->excludes(derive_flag);
  command.add_option("--derive-budget", derive_budget,
                     "Seconds of derivation search and measurement per compile, the operators furthest above their roofline bound first; decisions "
                     "kept from earlier compiles take none (default 20)")
      ->check(CLI::NonNegativeNumber);
  command.add_flag("--derive-replace", derive_replace,
                   "With derivation: replace each primitive by its faster derived form before fusion is planned, "
                   "instead of letting the plan choose (for comparison)");
  command.add_option("--cache-dir", cache_dir,
                     "Where measured costs and built kernels are kept (default $ORCHID_CACHE_DIR, else ~/.cache/orchid)");
}

namespace {

// One line on stderr, rewritten in place: "profiling 12/40, about 8 s left".
void print_progress(const Progress& progress) {
  std::string line = "  " + progress.stage;
  if (progress.total > 0) line += " " + std::to_string(progress.done) + "/" + std::to_string(progress.total);
  if (progress.eta_seconds >= 0) line += ", about " + std::to_string(int(progress.eta_seconds + 0.5)) + " s left";
  std::cerr << "\r\033[K" << line << std::flush;
}

}  // namespace

CompileOptions CompileFlags::options(int threads, bool quiet) const {
  CompileOptions options;
  options.threads = threads;
  options.fusion = !no_fusion;
  options.derive = !no_derive && !no_fusion;
  options.derive_budget_seconds = derive_budget;
  options.derive_jointly = !derive_replace;
  options.profile = !no_profile;
  options.cache_dir = cache_dir;
  if (!quiet && isatty(STDERR_FILENO)) options.progress = print_progress;
  return options;
}

PipelineOptions CompileFlags::pipeline(int threads, bool quiet) const {
  return api::pipeline_options(options(threads, quiet));
}

// Clears the progress line when compiling ends, however it ends.
struct ProgressLineGuard {
  bool active;
  ~ProgressLineGuard() {
    if (active) std::cerr << "\r\033[K" << std::flush;
  }
};

LoadedModel load_model(const std::string& path, const ShapeOptions& shapes, bool interpreter, int threads,
                       const CompileFlags& flags, bool quiet) {
  LoadedModel loaded;
  const bool artifact = runtime::is_artifact(path);
  std::error_code ec;
  if (!artifact && std::filesystem::is_directory(path, ec)) {
    ORCHID_FAIL() << path << " is a folder but not a compiled artifact (no plan.json); pass an ONNX model file or "
                  << "a folder written by `orchid compile`";
  }
  if (artifact) {
    if (interpreter) ORCHID_FAIL() << path << ": a compiled artifact runs on the runtime; pass the ONNX model to use --interpreter";
    if (!shapes.specs.empty()) ORCHID_FAIL() << path << ": --shape applies when compiling; the artifact's shapes are fixed";
    loaded.model = Model::load(path, LoadOptions{threads});
  } else if (interpreter) {
    onnx_frontend::ImportOptions options;
    options.input_shapes = shapes.parse();
    auto imported = onnx_frontend::import_model(path, options);
    print_notes(imported);
    loaded.declared_inputs = imported.declared_inputs;
    runtime::check_values_fit(imported.graph);  // before any input is made (compile checks its own)
    loaded.graph = std::move(imported.graph);
    return loaded;
  } else {
    CompileOptions options = flags.options(threads, quiet);
    for (const auto& [name, shape] : shapes.parse()) options.input_shapes[name] = shape;
    ProgressLineGuard guard{bool(options.progress)};
    loaded.model = Model::compile(path, options);
    for (const std::string& note : loaded.model->summary().notes) std::cerr << "note: " << note << "\n";
  }
  loaded.graph = interface_of(*loaded.model);
  loaded.declared_inputs = loaded.model->impl().declared_inputs;
  return loaded;
}

std::vector<Tensor> execute(const LoadedModel& loaded, const std::map<std::string, Tensor>& feeds) {
  if (!loaded.model) return reference::run_graph(loaded.graph, feeds);
  std::map<std::string, TensorView> views;
  for (const auto& [name, tensor] : feeds) {
    views[name] = TensorView{tensor.dtype(), tensor.shape(), const_cast<void*>(tensor.raw())};
  }
  std::vector<Tensor> outputs;
  for (Array& output : loaded.model->run(views)) {
    auto owner = std::make_shared<Array>(output);
    outputs.push_back(Tensor::borrow(TensorType{output.dtype(), output.shape()}, owner->data(), owner));
  }
  return outputs;
}

void add_threads_option(CLI::App& command, int& threads) {
  command.add_option("--threads", threads, "Threads for kernels (default: all cores)")
      ->check(CLI::NonNegativeNumber);
}

}  // namespace orchid::cli
