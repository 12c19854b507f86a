// The last-resort kernel: one node evaluated by the reference interpreter's
// implementation over the runtime's buffers. Slow but exact, so every
// primitive (and every opaque operator) the interpreter supports runs.
#include <cstring>

#include "reference/op_registry.h"
#include "runtime/kernels/cpu/registry.h"
#include "support/error.h"

namespace orchid::runtime::cpu {

namespace {

class ReferenceKernel : public Kernel {
 public:
  ReferenceKernel(const Graph& graph, const KernelGroup& group) : node_(graph.nodes()[group.nodes[0]]) {
    for (ValueId id : node_.inputs) input_types_.push_back(id == kNoValue ? TensorType{} : graph.type(id));
    for (ValueId id : group.inputs) group_input_slot_.push_back(slots_of(node_.inputs, id));
    for (ValueId id : group.outputs) group_output_slot_.push_back(slots_of(node_.outputs, id).front());
  }

  void run(const KernelArgs& args) override {
    std::vector<Tensor> views(node_.inputs.size());
    for (size_t k = 0; k < group_input_slot_.size(); ++k) {
      for (size_t slot : group_input_slot_[k]) {
        views[slot] = Tensor::borrow(input_types_[slot], const_cast<void*>(args.inputs[k]));
      }
    }
    std::vector<const Tensor*> inputs(node_.inputs.size(), nullptr);
    for (size_t i = 0; i < views.size(); ++i) {
      if (node_.inputs[i] != kNoValue) inputs[i] = &views[i];
    }
    std::vector<Tensor> results = reference::evaluate_node(node_, inputs);
    for (size_t k = 0; k < group_output_slot_.size(); ++k) {
      const Tensor& result = results.at(group_output_slot_[k]);
      std::memcpy(args.outputs[k], result.raw(), result.nbytes());
    }
  }

  std::string implementation() const override { return "reference"; }

 private:
  static std::vector<size_t> slots_of(const std::vector<ValueId>& ids, ValueId id) {
    std::vector<size_t> slots;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] == id) slots.push_back(i);
    }
    ORCHID_CHECK(!slots.empty()) << "value " << id << " is not used by the node";
    return slots;
  }

  Node node_;
  std::vector<TensorType> input_types_;
  std::vector<std::vector<size_t>> group_input_slot_;
  std::vector<size_t> group_output_slot_;
};

}  // namespace

std::unique_ptr<Kernel> make_reference_kernel(const Graph& graph, const KernelGroup& group) {
  if (group.nodes.size() != 1) return nullptr;
  return std::make_unique<ReferenceKernel>(graph, group);
}

}  // namespace orchid::runtime::cpu
