// Model (include/orchid/orchid.h): compile, load, save and run, on top of the
// pipeline (pipeline.h), the artifact (runtime/artifact.h) and the executor.
#include <algorithm>
#include <chrono>
#include <filesystem>

#include "api/model_impl.h"
#include "frontend/onnx/importer.h"
#include "ir/graph_utils.h"
#include "orchestration/orchestration_report.h"
#include "report/report.h"
#include "runtime/executable.h"
#include "support/error.h"
#include "support/parallel.h"

namespace orchid {

namespace {

std::vector<TensorInfo> describe(const Graph& graph, const std::vector<ValueId>& ids) {
  std::vector<TensorInfo> infos;
  for (ValueId id : ids) {
    const Value& value = graph.value(id);
    infos.push_back({value.name, value.type.dtype, value.type.shape});
  }
  return infos;
}

Tensor borrow(const TensorView& view, const std::string& what) {
  if (view.data == nullptr && view.nbytes() > 0) ORCHID_FAIL() << what << ": no data (a null pointer)";
  return Tensor::borrow(TensorType{view.dtype, view.shape}, view.data);
}

// The library's output as an Array sharing its memory.
Array to_array(const Tensor& tensor) {
  auto owner = std::make_shared<Tensor>(tensor);
  return Array(tensor.dtype(), tensor.shape(), owner->raw(), owner);
}

Model compile_imported(onnx_frontend::ImportResult imported, const std::string& source, const CompileOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const ThreadCountScope threads(options.threads);
  orchestration::OrchestrationReport report;
  derivation::DeriveReport derive_report;
  runtime::Program program = compile(imported.graph, api::pipeline_options(options), &report, &derive_report);
  runtime::ArtifactInfo info{source};
  if (options.fusion) info.orchestration_json = orchestration::orchestration_report_json(report, program);
  if (options.derive) info.derivation_json = derivation::derive_report_json(derive_report);
  auto impl = std::make_shared<Model::Impl>(std::move(program), std::move(info), options.threads,
                                            options.max_instances);
  CompileSummary& summary = impl->summary;
  summary.notes = imported.notes;
  impl->cache_dir = options.cache_dir;
  impl->declared_inputs = imported.declared_inputs;
  if (options.fusion) summary.orchestration_text = orchestration::format_orchestration_report(report);
  if (options.derive) summary.derivation_text = derivation::format_derive_report(derive_report);
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Model(std::move(impl));
}

onnx_frontend::ImportOptions import_options(const CompileOptions& options) {
  onnx_frontend::ImportOptions import;
  for (const auto& [name, shape] : options.input_shapes) import.input_shapes[name] = shape;
  return import;
}

}  // namespace

namespace api {

PipelineOptions pipeline_options(const CompileOptions& options) {
  PipelineOptions pipeline;
  pipeline.fusion = options.fusion;
  pipeline.derive = options.derive && options.fusion;  // the baseline plan has no derivation
  pipeline.derive_budget_seconds = options.derive_budget_seconds;
  pipeline.derive_jointly = options.derive_jointly;
  pipeline.orchestration.profile = options.profile;
  pipeline.orchestration.cache_dir = options.cache_dir;
  pipeline.orchestration.threads = options.threads > 0 ? options.threads : num_cores();
  if (options.progress) {
    pipeline.orchestration.progress = [callback = options.progress](const orchestration::Progress& p) {
      callback({p.stage, p.done, p.total, p.eta_seconds});
    };
  }
  return pipeline;
}

}  // namespace api

Model::Impl::Impl(runtime::Program program_, runtime::ArtifactInfo info_, int threads_, size_t max_instances)
    : program(std::move(program_)),
      info(std::move(info_)),
      module(runtime::load_generated_module(program, backend::cpu_backend())),
      threads(threads_),
      pool([this] {
             return std::make_unique<runtime::Executable>(program, backend::cpu_backend(), module, shared_constants);
           },
           max_instances) {
  inputs = describe(program.graph, program.graph.inputs());
  outputs = describe(program.graph, program.graph.outputs());
  summary.primitives = program.graph.nodes().size();
  summary.kernels = program.kernels.size();
  summary.weight_bytes = constant_bytes(program.graph);
  for (const TensorInfo& input : inputs) declared_inputs.push_back(input.name);
}

runtime::MemoryPlan Model::Impl::save(const std::string& dir) const { return runtime::save_artifact(program, info, dir); }

void Model::Impl::with_instance(const std::function<void(runtime::Executable&)>& body) const {
  const ThreadCountScope scope(threads);
  pool.with_instance(body);
}

Model::Model(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Model Model::compile(const std::string& onnx_path, const CompileOptions& options) {
  return compile_imported(onnx_frontend::import_model(onnx_path, import_options(options)), onnx_path, options);
}

Model Model::compile_bytes(const std::string& onnx_bytes, const CompileOptions& options, const std::string& name,
                           const std::string& base_dir) {
  return compile_imported(onnx_frontend::import_model_bytes(onnx_bytes, name, base_dir, import_options(options)),
                          name, options);
}

Model Model::load(const std::string& dir, const LoadOptions& options) {
  std::error_code ec;
  if (!runtime::is_artifact(dir)) {
    if (std::filesystem::is_directory(dir, ec)) {
      ORCHID_FAIL() << dir << " is a folder but not a compiled artifact (no plan.json); compile the ONNX model first";
    }
    ORCHID_FAIL() << dir << ": no such artifact folder";
  }
  auto impl = std::make_shared<Impl>(runtime::load_artifact(dir), runtime::load_artifact_info(dir), options.threads,
                                     options.max_instances);
  impl->pool.prime();
  return Model(std::move(impl));
}

void Model::save(const std::string& dir) const { impl_->save(dir); }

void Model::report(const std::string& html_path, const ReportOptions& options) const {
  report::ReportOptions report_options;
  report_options.runs = options.runs;
  report_options.compare_no_fusion = options.compare_no_fusion;
  report_options.cache_dir = impl_->cache_dir;
  impl_->with_instance([&](runtime::Executable& executable) {
    report::write_report(impl_->program, impl_->info, report_options, html_path, &executable);
  });
}

const std::vector<TensorInfo>& Model::inputs() const { return impl_->inputs; }
const std::vector<TensorInfo>& Model::outputs() const { return impl_->outputs; }
const CompileSummary& Model::summary() const { return impl_->summary; }

std::vector<Array> Model::run(const std::map<std::string, TensorView>& feeds) const {
  std::map<std::string, Tensor> tensors;
  for (const auto& feed : feeds) {
    const std::string& name = feed.first;
    const bool known = std::any_of(impl_->inputs.begin(), impl_->inputs.end(),
                                   [&](const TensorInfo& input) { return input.name == name; });
    if (!known) {
      std::string list;
      for (const TensorInfo& input : impl_->inputs) list += (list.empty() ? "'" : ", '") + input.name + "'";
      ORCHID_FAIL() << "the model has no input named '" << name << "' (its inputs: " << list << ")";
    }
    tensors[name] = borrow(feed.second, "input '" + name + "'");
  }
  std::vector<Tensor> outputs;
  impl_->with_instance([&](runtime::Executable& executable) { outputs = executable.run(tensors); });
  std::vector<Array> arrays;
  for (const Tensor& output : outputs) arrays.push_back(to_array(output));
  return arrays;
}

void Model::run(const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs) const {
  if (inputs.size() != impl_->inputs.size()) {
    ORCHID_FAIL() << "the model has " << impl_->inputs.size() << " inputs, " << inputs.size() << " given";
  }
  std::map<std::string, Tensor> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string& name = impl_->inputs[i].name;
    feeds[name] = borrow(inputs[i], "input '" + name + "'");
  }
  std::vector<Tensor> buffers;
  for (size_t i = 0; i < outputs.size(); ++i) {
    buffers.push_back(borrow(outputs[i], i < impl_->outputs.size() ? "output '" + impl_->outputs[i].name + "'"
                                                                   : "output " + std::to_string(i)));
  }
  impl_->with_instance([&](runtime::Executable& executable) { executable.run_into(feeds, buffers); });
}

int Model::threads() const { return impl_->threads; }
void Model::set_threads(int threads) { impl_->threads = threads; }
size_t Model::instances() const { return impl_->pool.size(); }

}  // namespace orchid
