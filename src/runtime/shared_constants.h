// Data that kernels derive once from a constant (packed weights), shared by
// the kernels of one Executable that read the same constant (and by the
// executables of one Model, which share a store). An unrolled
// recurrent layer's 64 steps all multiply by one R^T: packed once per kernel
// it took 64 MB instead of 1, and every step's product streamed its own copy
// from DRAM (30 us a step against 9 us from the cache).
//
// Executable::make_kernels opens a SharedConstantsScope; kernels made outside
// one (the cost profiler's single kernels, tests) derive their own copy.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "ir/graph.h"

namespace orchid::runtime {

// The derived objects of one program: kept by an Executable's scope while
// it builds its kernels, or by whoever runs several executables of the same
// program (a Model's instances share their packed weights through one).
// Safe to use from several threads.
class SharedConstants {
 public:
  std::shared_ptr<const void> get(ValueId id, const std::string& kind,
                                  const std::function<std::shared_ptr<const void>()>& make);

 private:
  std::mutex mutex_;
  std::map<std::pair<ValueId, std::string>, std::shared_ptr<const void>> derived_;
};

// While alive, shared_derived() on this thread returns one object per
// (constant, kind) from `store` (a new store when none is given). Scopes do
// not nest.
class SharedConstantsScope {
 public:
  explicit SharedConstantsScope(std::shared_ptr<SharedConstants> store = nullptr);
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
