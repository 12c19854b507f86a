// Kernels: the unit of execution of a compiled program. A kernel computes one
// group of primitive nodes of the program's graph (one node, or a linear
// primitive with the epilogue nodes that oneDNN's post-ops absorb; later,
// fused groups from orchestration). Values inside a group never reach memory;
// the group's inputs and outputs live in buffers the executor owns.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace orchid::runtime {

// A group of nodes of a graph that one kernel computes.
struct KernelGroup {
  std::string name;           // for reports: the first node's name, or "a+b+c"
  std::vector<size_t> nodes;  // indices into graph.nodes(), in topological order; nodes[0] is the anchor
  // Values the group reads from outside (constants included; kNoValue for an
  // omitted optional input is never listed), in the order the kernel expects
  // them, and values it writes that are read outside or are graph outputs.
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
};

// Builds the KernelGroup of `nodes`: inputs are the values read and not
// produced inside (first use order), outputs the values produced and used
// outside the group or listed as graph outputs.
KernelGroup make_group(const Graph& graph, std::vector<size_t> nodes);

// make_group for many groups of one graph: the value readers are indexed
// once, so each group costs time in its own size, not the graph's.
class GroupMaker {
 public:
  explicit GroupMaker(const Graph& graph);
  KernelGroup operator()(std::vector<size_t> nodes) const;

 private:
  const Graph& graph_;
  std::vector<std::vector<size_t>> readers_;  // per value: the nodes that read it
  std::vector<bool> graph_output_;            // per value
};

// Pointers to the data of a kernel's inputs and outputs, in KernelGroup order.
// Buffers are dense, row-major, of the value's TensorType; they do not alias
// each other (an input and an output never share memory).
struct KernelArgs {
  std::vector<const void*> inputs;
  std::vector<void*> outputs;
};

// A memory layout other than dense row-major that a kernel can write an
// output in, or read an input in (oneDNN's blocked and channels-last
// formats). Kernels of the same backend recognize each other's layouts by
// `kind`; `desc` is the backend's own description of it.
struct NativeLayout {
  std::string kind;
  std::shared_ptr<const void> desc;
  size_t bytes = 0;  // the buffer size a tensor takes in this layout
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Computes the outputs from the inputs. May use the process thread pool
  // (support/parallel.h); must not keep pointers between calls.
  virtual void run(const KernelArgs& args) = 0;
  // Which implementation runs: "onednn conv", "elementwise", "reference", ...
  virtual std::string implementation() const = 0;
  // False for a constant input the kernel copied (packed) at construction and
  // never reads again: once no kernel reads a constant, the executor frees it
  // and passes nullptr in its place.
  virtual bool reads_input_at_run(size_t /*input*/) const { return true; }

  // Layout negotiation, before the first run (Executable): when the producer
  // of an intermediate offers a native layout and every kernel that reads it
  // can take that layout, the tensor lives in it and the conversions to and
  // from row-major are skipped. By default a kernel offers and takes none.
  virtual std::optional<NativeLayout> native_output_layout(size_t /*output*/) const { return std::nullopt; }
  virtual void use_native_output(size_t /*output*/) {}
  virtual bool can_read_input_as(size_t /*input*/, const NativeLayout& /*layout*/) const { return false; }
  virtual void read_input_as(size_t /*input*/, const NativeLayout& /*layout*/) {}
};

// Creates a kernel for a group. Weights (constant inputs) may be read and
// packed here, once; the constant's pointer is still passed to run().
// Throws orchid::Error when no implementation can run the group.
std::unique_ptr<Kernel> make_cpu_kernel(const Graph& graph, const KernelGroup& group);

}  // namespace orchid::runtime
