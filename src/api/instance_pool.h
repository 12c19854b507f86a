// The program instances behind one Model (include/orchid/orchid.h): each
// concurrent run() takes an idle instance (its kernels, packed weights and
// arena), or makes a new one while fewer than `max` exist, or waits for one;
// it gives the instance back when done. An instance serves one call at a
// time, so kernels and arenas need no locks.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/executable.h"

namespace orchid::api {

class InstancePool {
 public:
  using Make = std::function<std::unique_ptr<runtime::Executable>()>;
  // max == 0: no limit.
  InstancePool(Make make, size_t max);

  // Runs body on an instance of its own.
  void with_instance(const std::function<void(runtime::Executable&)>& body);
  // Makes the first instance now (errors surface at compile or load).
  void prime();
  size_t size() const;

 private:
  std::unique_ptr<runtime::Executable> acquire();
  void release(std::unique_ptr<runtime::Executable> instance);

  Make make_;
  size_t max_;
  mutable std::mutex mutex_;
  std::condition_variable idle_changed_;
  std::vector<std::unique_ptr<runtime::Executable>> idle_;
  size_t made_ = 0;
};

}  // namespace orchid::api
