// A loaded program, ready to run many times: kernels created (weights packed
// once), memory planned into one arena, allocated once.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "runtime/layout_negotiation.h"
#include "runtime/memory_plan.h"
#include "runtime/program.h"
#include "runtime/shared_constants.h"

namespace orchid::runtime {

struct KernelInfo {
  std::string name;            // the group's name
  std::string ops;             // "Conv+Relu"
  std::string implementation;  // Kernel::implementation()
};

// The program's generated kernel module, loaded (nullptr when no kernel is
// generated); orchid::Error when its library is missing or altered.
std::shared_ptr<const backend::KernelModule> load_generated_module(const Program& program,
                                                                   const backend::Backend& target);

class Executable {
 public:
  // The program's kernels made by `target` (generated ones from its module).
  explicit Executable(Program program, const backend::Backend& target = backend::cpu_backend());
  // With its generated kernels from `module` (load_generated_module's; null:
  // loaded here), and
  // what kernels derive from constants (packed weights) kept in `shared`,
  // both of which several executables of one program may share.
  Executable(Program program, const backend::Backend& target, std::shared_ptr<const backend::KernelModule> module,
             std::shared_ptr<SharedConstants> shared = nullptr);
  ~Executable();
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  // Runs the program on one tensor per graph input (by name; dtype and shape
  // must match: orchid::Error otherwise) and returns the graph outputs in
  // order. When kernel_seconds is given, it receives each kernel's wall time.
  std::vector<Tensor> run(const std::map<std::string, Tensor>& feeds, std::vector<double>* kernel_seconds = nullptr);
  // The same into given output tensors (one per graph output, of its type,
  // not overlapping each other or the inputs: orchid::Error otherwise), which
  // may borrow the caller's memory.
  void run_into(const std::map<std::string, Tensor>& feeds, std::vector<Tensor>& outputs,
                std::vector<double>* kernel_seconds = nullptr);

  const Program& program() const { return program_; }
  const MemoryPlan& memory_plan() const { return memory_plan_; }
  const std::vector<KernelInfo>& kernel_info() const { return kernel_info_; }
  size_t num_kernels() const { return kernels_.size(); }
  // Intermediates kept in a kernel-native layout (no conversion between kernels).
  size_t num_native_tensors() const { return num_native_; }
  // Bytes of the program's constants as loaded (before packed ones are freed).
  size_t weight_bytes() const { return weight_bytes_; }

 private:
  void* buffer_of(ValueId id, const std::vector<Tensor>& outputs, const std::map<ValueId, const Tensor*>& inputs);
  std::vector<std::pair<ValueId, ValueId>> same_bytes(const NegotiatedLayouts& layouts);

  Program program_;
  MemoryPlan memory_plan_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
  std::vector<KernelInfo> kernel_info_;
  std::shared_ptr<std::byte[]> arena_;  // Backend::allocate: 64-byte aligned
  std::vector<bool> skipped_;     // per kernel: its output shares its input's buffer (same_bytes)
  std::vector<int> output_slot_;  // per ValueId: index into graph outputs, -1 if none
  size_t weight_bytes_ = 0;
  size_t num_native_ = 0;

  void make_kernels(const backend::Backend& target, const std::shared_ptr<const backend::KernelModule>& module,
                    std::shared_ptr<SharedConstants> shared);
};

}  // namespace orchid::runtime
