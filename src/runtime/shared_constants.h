// Data that kernels derive once from a constant (packed weights), shared by
// the kernels of one Executable that read the same constant. An unrolled
// recurrent layer's 64 steps all multiply by one R^T: packed once per kernel
// it took 64 MB instead of 1, and every step's product streamed its own copy
// from DRAM (30 us a step against 9 us from the cache).
//
// Executable::make_kernels opens a SharedConstantsScope; kernels made outside
// one (the cost profiler's single kernels, tests) derive their own copy.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "ir/graph.h"

namespace orchid::runtime {

// While alive, shared_derived() on this thread returns one object per
// (constant, kind). Scopes do not nest.
class SharedConstantsScope {
 public:
  SharedConstantsScope();
  ~SharedConstantsScope();
  SharedConstantsScope(const SharedConstantsScope&) = delete;
  SharedConstantsScope& operator=(const SharedConstantsScope&) = delete;
};

// make(), or what an earlier make() returned for the same constant `id` and
// `kind` in the current scope. `kind` names the derivation and every
// parameter it depends on ("direct matmul panels 256x1024").
std::shared_ptr<const void> shared_derived_any(ValueId id, const std::string& kind,
                                               const std::function<std::shared_ptr<const void>()>& make);

template <typename T, typename Make>
std::shared_ptr<const T> shared_derived(ValueId id, const std::string& kind, Make make) {
  return std::static_pointer_cast<const T>(
      shared_derived_any(id, kind, [&]() -> std::shared_ptr<const void> { return make(); }));
}

}  // namespace orchid::runtime
