#include "runtime/memory_check.h"

#include <fmt/format.h>

#include "ir/graph_utils.h"
#include "runtime/memory_plan.h"
#include "support/error.h"
#include "support/memory_limit.h"

namespace orchid::runtime {

namespace {

size_t value_bytes(const Value& value) { return value.type.nbytes(); }

std::string human(size_t bytes) {
  if (bytes >= (size_t(1) << 30)) return fmt::format("{:.2f} GB", double(bytes) / double(size_t(1) << 30));
  if (bytes >= (size_t(1) << 20)) return fmt::format("{:.2f} MB", double(bytes) / double(size_t(1) << 20));
  return fmt::format("{:.1f} KB", double(bytes) / 1024.0);
}

// The largest value, for the message.
const Value& largest_value(const Graph& graph) {
  size_t best = 0;
  for (size_t id = 1; id < graph.num_values(); ++id) {
    if (value_bytes(graph.value(ValueId(id))) > value_bytes(graph.value(ValueId(best)))) best = id;
  }
  return graph.value(ValueId(best));
}

[[noreturn]] void refuse(const Graph& graph, size_t needed, size_t limit, const std::string& what) {
  const Value& largest = largest_value(graph);
  ORCHID_FAIL() << what << " needs " << human(needed) << ", more than the memory limit of " << human(limit)
                << " (physical memory, or $ORCHID_MEMORY_LIMIT); the largest tensor is '" << largest.name << "' ("
                << largest.type.to_string() << ", " << human(value_bytes(largest)) << ")";
}

size_t io_bytes(const Graph& graph) {
  size_t bytes = 0;
  for (ValueId id : graph.inputs()) bytes += value_bytes(graph.value(id));
  for (ValueId id : graph.outputs()) bytes += value_bytes(graph.value(id));
  return bytes;
}

}  // namespace

void check_values_fit(const Graph& graph) {
  if (graph.num_values() == 0) return;
  const size_t limit = memory_limit_bytes();
  const Value& largest = largest_value(graph);
  if (value_bytes(largest) > limit) refuse(graph, value_bytes(largest), limit, "tensor '" + largest.name + "'");
  const size_t held = io_bytes(graph) + constant_bytes(graph);
  if (held > limit) refuse(graph, held, limit, "the model's inputs, weights and outputs");
}

void check_program_fits(const Program& program) {
  const Graph& graph = program.graph;
  if (graph.num_values() == 0) return;
  const size_t limit = memory_limit_bytes();
  const size_t needed = plan_memory(program).arena_bytes + constant_bytes(graph) + io_bytes(graph);
  if (needed > limit) refuse(graph, needed, limit, "the program (weights, intermediates, inputs and outputs)");
}

}  // namespace orchid::runtime
