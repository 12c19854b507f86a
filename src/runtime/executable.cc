#include "runtime/executable.h"

#include "runtime/memory_check.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "ir/graph_utils.h"
#include "reference/interpreter.h"
#include "runtime/layout_negotiation.h"
#include "support/error.h"

namespace orchid::runtime {

std::shared_ptr<const backend::KernelModule> load_generated_module(const Program& program,
                                                                   const backend::Backend& target) {
  const bool any = std::any_of(program.kernels.begin(), program.kernels.end(),
                               [](const KernelGroup& group) { return !group.symbol.empty(); });
  if (!any) return nullptr;
  if (program.library_path.empty()) {
    ORCHID_FAIL() << "the program has generated kernels but no kernel library: compile the model again";
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(program.library_path, ec)) {
    ORCHID_FAIL() << program.library_path << ": the generated kernel library is missing: compile the model again";
  }
  return target.load_module(program.library_path, program.library_sha256);
}

namespace {

std::string group_ops(const Graph& graph, const KernelGroup& group) {
  std::string ops;
  for (size_t index : group.nodes) ops += (ops.empty() ? "" : "+") + graph.nodes()[index].op;
  return ops;
}

}  // namespace

Executable::Executable(Program program, const backend::Backend& target)
    : Executable(std::move(program), target, nullptr) {}

Executable::Executable(Program program, const backend::Backend& target,
                       std::shared_ptr<const backend::KernelModule> module, std::shared_ptr<SharedConstants> shared)
    : program_(std::move(program)) {
  verify_program(program_);
  check_program_fits(program_);  // before a byte of it is allocated
  const Graph& graph = program_.graph;
  weight_bytes_ = constant_bytes(graph);
  if (!module) module = load_generated_module(program_, target);
  make_kernels(target, module, std::move(shared));
  NegotiatedLayouts layouts = negotiate_layouts(program_, kernels_);
  num_native_ = layouts.native;
  memory_plan_ = plan_memory(program_, layouts.bytes, same_bytes(layouts));
  // A kernel may run another implementation in the layouts it now reads and
  // writes (a Concat between convolutions: oneDNN's concat).
  for (size_t k = 0; k < kernels_.size(); ++k) kernel_info_[k].implementation = kernels_[k]->implementation();
  static_assert(kArenaAlignment <= 64, "Backend::allocate aligns to 64 bytes");
  arena_ = target.allocate(memory_plan_.arena_bytes);
  output_slot_.assign(graph.num_values(), -1);
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    if (output_slot_[size_t(graph.outputs()[i])] < 0) output_slot_[size_t(graph.outputs()[i])] = int(i);
  }
}

Executable::~Executable() = default;

// The kernels whose output is their input's bytes in the layouts negotiated
// (a Reshape's, both row-major; a channels-last Transpose relabeled, one
// side native) where both are intermediates of one size: the memory plan
// gives the two one buffer, and those kernels are skipped.
std::vector<std::pair<ValueId, ValueId>> Executable::same_bytes(const NegotiatedLayouts& layouts) {
  const Graph& graph = program_.graph;
  auto bytes = [&](ValueId id) {
    const size_t native = size_t(id) < layouts.bytes.size() ? layouts.bytes[size_t(id)] : 0;
    return native != 0 ? native : size_t(graph.type(id).nbytes());
  };
  std::vector<std::pair<ValueId, ValueId>> pairs;
  skipped_.assign(kernels_.size(), false);
  for (size_t k = 0; k < kernels_.size(); ++k) {
    const KernelGroup& group = program_.kernels[k];
    const std::optional<size_t> slot = kernels_[k]->output_is_input_bytes();
    if (!slot || group.outputs.size() != 1 || *slot >= group.inputs.size()) continue;
    const ValueId source = group.inputs[*slot], alias = group.outputs[0];
    if (is_intermediate(graph, source) && is_intermediate(graph, alias) && bytes(source) == bytes(alias)) {
      pairs.emplace_back(alias, source);
      skipped_[k] = true;
    }
  }
  return pairs;
}

// Creates the kernels in order. A constant that every reader has packed into
// its own layout is freed as soon as the last reader is built, so loading
// never holds all weights twice (peak memory: weights + one layer's copy).
void Executable::make_kernels(const backend::Backend& target,
                              const std::shared_ptr<const backend::KernelModule>& module,
                              std::shared_ptr<SharedConstants> shared) {
  Graph& graph = program_.graph;
  std::vector<int> readers(graph.num_values(), 0);
  for (const KernelGroup& group : program_.kernels) {
    for (ValueId id : group.inputs) readers[size_t(id)] += graph.value(id).is_constant();
  }
  for (ValueId id : graph.outputs()) readers[size_t(id)] = -1;  // returned as is: kept
  const SharedConstantsScope scope(std::move(shared));  // kernels reading one constant pack it once
  for (const KernelGroup& group : program_.kernels) {
    kernels_.push_back(target.make_kernel(graph, group, module));
    const Kernel& kernel = *kernels_.back();
    kernel_info_.push_back({group.name, group_ops(graph, group), kernel.implementation()});
    for (size_t k = 0; k < group.inputs.size(); ++k) {
      const ValueId id = group.inputs[k];
      if (!graph.value(id).is_constant()) continue;
      if (kernel.reads_input_at_run(k)) {
        readers[size_t(id)] = -1;  // read at run time: kept
      } else if (readers[size_t(id)] > 0 && --readers[size_t(id)] == 0) {
        graph.value(id).constant = Tensor();  // still a constant, its data freed
      }
    }
  }
}

void* Executable::buffer_of(ValueId id, const std::vector<Tensor>& outputs,
                            const std::map<ValueId, const Tensor*>& inputs) {
  const Value& value = program_.graph.value(id);
  if (value.constant) return const_cast<void*>(value.constant->raw());
  if (auto it = inputs.find(id); it != inputs.end()) return const_cast<void*>(it->second->raw());
  if (output_slot_[size_t(id)] >= 0) return const_cast<void*>(outputs[size_t(output_slot_[size_t(id)])].raw());
  ORCHID_CHECK(memory_plan_.offset[size_t(id)] >= 0) << "value '" << value.name << "' has no buffer";
  return arena_.get() + memory_plan_.offset[size_t(id)];
}

std::vector<Tensor> Executable::run(const std::map<std::string, Tensor>& feeds, std::vector<double>* kernel_seconds) {
  std::vector<Tensor> outputs;
  // Every output is written whole (by its kernel, or copied below).
  for (ValueId id : program_.graph.outputs()) outputs.push_back(Tensor::uninitialized(program_.graph.type(id)));
  run_into(feeds, outputs, kernel_seconds);
  return outputs;
}

namespace {

bool overlap(const Tensor& a, const Tensor& b) {
  const auto* a0 = static_cast<const std::byte*>(a.raw());
  const auto* b0 = static_cast<const std::byte*>(b.raw());
  return a.nbytes() > 0 && b.nbytes() > 0 && a0 < b0 + b.nbytes() && b0 < a0 + a.nbytes();
}

// Output buffers given by a caller: one per graph output, of its type, none
// sharing memory with another output or an input (kernels assume it).
void check_output_buffers(const Graph& graph, const std::vector<Tensor>& outputs,
                          const std::map<ValueId, const Tensor*>& inputs) {
  if (outputs.size() != graph.outputs().size()) {
    ORCHID_FAIL() << graph.outputs().size() << " output buffers expected, " << outputs.size() << " given";
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Value& value = graph.value(graph.outputs()[i]);
    if (outputs[i].type() != value.type) {
      ORCHID_FAIL() << "output '" << value.name << "': a buffer of " << value.type.to_string() << " expected, "
                    << outputs[i].type().to_string() << " given";
    }
    for (size_t j = 0; j < i; ++j) {
      if (overlap(outputs[i], outputs[j])) {
        ORCHID_FAIL() << "output '" << value.name << "': its buffer overlaps output '"
                      << graph.value(graph.outputs()[j]).name << "''s";
      }
    }
    for (const auto& [id, input] : inputs) {
      if (overlap(outputs[i], *input)) {
        ORCHID_FAIL() << "output '" << value.name << "': its buffer overlaps input '" << graph.value(id).name << "''s";
      }
    }
  }
}

}  // namespace

void Executable::run_into(const std::map<std::string, Tensor>& feeds, std::vector<Tensor>& outputs,
                          std::vector<double>* kernel_seconds) {
  const Graph& graph = program_.graph;
  std::map<ValueId, const Tensor*> inputs;
  for (ValueId input : graph.inputs()) {
    const Value& value = graph.value(input);
    auto it = feeds.find(value.name);
    if (it == feeds.end()) ORCHID_FAIL() << "no tensor given for graph input '" << value.name << "'";
    reference::check_feed(value, it->second);
    inputs[input] = &it->second;
  }
  check_output_buffers(graph, outputs, inputs);
  if (kernel_seconds) kernel_seconds->assign(kernels_.size(), 0.0);
  KernelArgs args;
  for (size_t k = 0; k < kernels_.size(); ++k) {
    const KernelGroup& group = program_.kernels[k];
    args.inputs.clear();
    args.outputs.clear();
    for (ValueId id : group.inputs) args.inputs.push_back(buffer_of(id, outputs, inputs));
    for (ValueId id : group.outputs) args.outputs.push_back(buffer_of(id, outputs, inputs));
    if (skipped_[k]) continue;  // its output is its input's buffer
    if (!kernel_seconds) {
      kernels_[k]->run(args);
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    kernels_[k]->run(args);
    (*kernel_seconds)[k] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  // Outputs no kernel writes: graph inputs or constants returned as they are,
  // and a value listed twice among the outputs.
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const ValueId id = graph.outputs()[i];
    const Tensor* source = nullptr;
    if (output_slot_[size_t(id)] != int(i)) {
      source = &outputs[size_t(output_slot_[size_t(id)])];
    } else if (graph.value(id).constant) {
      source = &*graph.value(id).constant;
    } else if (inputs.count(id)) {
      source = inputs[id];
    }
    if (source) std::memcpy(outputs[i].raw(), source->raw(), outputs[i].nbytes());
  }
}

}  // namespace orchid::runtime
