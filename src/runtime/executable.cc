#include "runtime/executable.h"

#include <chrono>
#include <cstring>

#include "reference/interpreter.h"
#include "support/error.h"

namespace orchid::runtime {

namespace {

std::string group_ops(const Graph& graph, const KernelGroup& group) {
  std::string ops;
  for (size_t index : group.nodes) ops += (ops.empty() ? "" : "+") + graph.nodes()[index].op;
  return ops;
}

}  // namespace

Executable::Executable(Program program) : program_(std::move(program)) {
  verify_program(program_);
  memory_plan_ = plan_memory(program_);
  const Graph& graph = program_.graph;
  for (const KernelGroup& group : program_.kernels) {
    kernels_.push_back(make_cpu_kernel(graph, group));
    kernel_info_.push_back({group.name, group_ops(graph, group), kernels_.back()->implementation()});
  }
  const size_t bytes = memory_plan_.arena_bytes + kArenaAlignment;
  arena_ = std::shared_ptr<std::byte[]>(new std::byte[bytes]);
  const auto address = reinterpret_cast<uintptr_t>(arena_.get());
  arena_base_ = arena_.get() + (kArenaAlignment - address % kArenaAlignment) % kArenaAlignment;
  output_slot_.assign(graph.num_values(), -1);
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    if (output_slot_[size_t(graph.outputs()[i])] < 0) output_slot_[size_t(graph.outputs()[i])] = int(i);
  }
}

Executable::~Executable() = default;

size_t Executable::weight_bytes() const {
  size_t bytes = 0;
  for (size_t id = 0; id < program_.graph.num_values(); ++id) {
    const Value& value = program_.graph.value(ValueId(id));
    if (value.constant) bytes += value.constant->nbytes();
  }
  return bytes;
}

void* Executable::buffer_of(ValueId id, const std::vector<Tensor>& outputs,
                            const std::map<ValueId, const Tensor*>& inputs) {
  const Value& value = program_.graph.value(id);
  if (value.constant) return const_cast<void*>(value.constant->raw());
  if (auto it = inputs.find(id); it != inputs.end()) return const_cast<void*>(it->second->raw());
  if (output_slot_[size_t(id)] >= 0) return const_cast<void*>(outputs[size_t(output_slot_[size_t(id)])].raw());
  ORCHID_CHECK(memory_plan_.offset[size_t(id)] >= 0) << "value '" << value.name << "' has no buffer";
  return arena_base_ + memory_plan_.offset[size_t(id)];
}

std::vector<Tensor> Executable::run(const std::map<std::string, Tensor>& feeds, std::vector<double>* kernel_seconds) {
  const Graph& graph = program_.graph;
  std::map<ValueId, const Tensor*> inputs;
  for (ValueId input : graph.inputs()) {
    const Value& value = graph.value(input);
    auto it = feeds.find(value.name);
    if (it == feeds.end()) ORCHID_FAIL() << "no tensor given for graph input '" << value.name << "'";
    reference::check_feed(value, it->second);
    inputs[input] = &it->second;
  }
  std::vector<Tensor> outputs;
  for (ValueId id : graph.outputs()) outputs.emplace_back(graph.type(id));
  if (kernel_seconds) kernel_seconds->assign(kernels_.size(), 0.0);
  KernelArgs args;
  for (size_t k = 0; k < kernels_.size(); ++k) {
    const KernelGroup& group = program_.kernels[k];
    args.inputs.clear();
    args.outputs.clear();
    for (ValueId id : group.inputs) args.inputs.push_back(buffer_of(id, outputs, inputs));
    for (ValueId id : group.outputs) args.outputs.push_back(buffer_of(id, outputs, inputs));
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
    if (output_slot_[size_t(id)] != int(i)) {
      outputs[i] = outputs[size_t(output_slot_[size_t(id)])].clone();
    } else if (graph.value(id).constant) {
      outputs[i] = graph.value(id).constant->clone();
    } else if (inputs.count(id)) {
      outputs[i] = inputs[id]->clone();
    }
  }
  return outputs;
}

}  // namespace orchid::runtime
