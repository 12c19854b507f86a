// What a Model (include/orchid/orchid.h) holds: the compiled program with its
// weights, what the artifact records beside it, and the pool of instances
// that run it. Internal: the CLI reaches the program and the reports here.
#pragma once

#include <atomic>

#include "api/instance_pool.h"
#include "orchid/orchid.h"
#include "pipeline.h"
#include "runtime/artifact.h"
#include "runtime/memory_plan.h"
#include "runtime/program.h"

namespace orchid {

struct Model::Impl {
  Impl(runtime::Program program, runtime::ArtifactInfo info, int threads, size_t max_instances);

  // The program as compiled or loaded; instances run copies of it (copies
  // share the weights' memory).
  const runtime::Program program;
  const runtime::ArtifactInfo info;
  // Its generated kernels, loaded once for all instances: the model keeps
  // running if the kernel cache is cleared.
  const std::shared_ptr<const backend::KernelModule> module;
  // What kernels derive from the weights (packed copies), made by the first
  // instance and shared by the others.
  const std::shared_ptr<runtime::SharedConstants> shared_constants = std::make_shared<runtime::SharedConstants>();
  std::vector<TensorInfo> inputs, outputs;
  // The ONNX model's declared inputs, those the importer specialized away
  // included (feeding one is not an error for the CLI); a loaded model's inputs.
  std::vector<std::string> declared_inputs;
  CompileSummary summary;
  std::string cache_dir;  // the compile's cost cache (the report reads the machine's peaks there)
  std::atomic<int> threads;
  mutable api::InstancePool pool;  // run() is const: the pool hands out instances

  // Writes the artifact; returns the memory plan it records.
  runtime::MemoryPlan save(const std::string& dir) const;
  // Runs body on an instance with the model's thread count.
  void with_instance(const std::function<void(runtime::Executable&)>& body) const;
};

namespace api {

// Compile options in the pipeline's terms (the progress callback included).
PipelineOptions pipeline_options(const CompileOptions& options);

}  // namespace api
}  // namespace orchid
