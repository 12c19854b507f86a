// libFuzzer target for the ONNX importer: arbitrary bytes are imported as a
// model and, when that succeeds and the graph is small, run by the reference
// interpreter on all-zero inputs.
//
// A user error (orchid::Error) is the expected answer to bad bytes. Anything
// else is a finding: an InternalError or another exception (printed, then
// abort), a crash, or a sanitizer report. Graphs above the size caps are not
// run, so that a legitimately large model is not reported as out-of-memory.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>

#include "frontend/onnx/importer.h"
#include "reference/interpreter.h"
#include "support/error.h"

namespace {

constexpr long double kMaxTotalElements = 1e6;  // over all values of the graph
constexpr size_t kMaxNodes = 64;

// Whether running the graph stays cheap: few nodes, small tensors. Computed
// in long double so that absurd dimensions cannot overflow here.
bool small_enough(const orchid::Graph& graph) {
  if (graph.nodes().size() > kMaxNodes) return false;
  long double total = 0;
  for (size_t id = 0; id < graph.num_values(); ++id) {
    // Zero dimensions count as 1: loops over [0, 2^40] need not be cheap.
    long double size = 1;
    for (int64_t d : graph.value(orchid::ValueId(id)).type.shape) size *= (long double)std::max<int64_t>(d, 1);
    total += size;
    if (total > kMaxTotalElements) return false;
  }
  return true;
}

[[noreturn]] void finding(const char* kind, const char* what) {
  std::fprintf(stderr, "fuzz_importer: %s: %s\n", kind, what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    auto imported = orchid::onnx_frontend::import_model_bytes(bytes, "fuzz.onnx", "/nonexistent", {});
    if (!small_enough(imported.graph)) return 0;
    std::map<std::string, orchid::Tensor> feeds;
    for (orchid::ValueId id : imported.graph.inputs()) {
      const orchid::Value& input = imported.graph.value(id);
      feeds[input.name] = orchid::Tensor(input.type);
    }
    orchid::reference::run_graph(imported.graph, feeds);
  } catch (const orchid::Error&) {
    // The expected outcome for malformed or unsupported models.
  } catch (const orchid::InternalError& e) {
    finding("internal error", e.what());
  } catch (const std::exception& e) {
    finding("unexpected exception", e.what());
  } catch (...) {
    finding("unexpected exception", "(not a std::exception)");
  }
  return 0;
}
