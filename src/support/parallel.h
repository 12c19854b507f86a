// The one thread pool of a process: OpenMP's, which oneDNN (Debian's build
// uses the OpenMP runtime) also runs on, so linear kernels and Orchid's own
// loops share the same threads instead of two pools competing for the cores.
#pragma once

#include <cstdint>
#include <functional>

namespace orchid {

// Sets the process's number of threads for every later parallel region
// (oneDNN's included); n <= 0 means all cores.
void set_num_threads(int n);
// The calling thread's count: its ThreadCountScope's, else the process's.
int num_threads();
int num_cores();

// While alive, parallel regions started by this thread (Orchid's and
// oneDNN's) use `n` threads (n <= 0: all cores), whatever other threads use:
// a model's thread count applies to its own runs. Scopes nest.
class ThreadCountScope {
 public:
  explicit ThreadCountScope(int n);
  ~ThreadCountScope();
  ThreadCountScope(const ThreadCountScope&) = delete;
  ThreadCountScope& operator=(const ThreadCountScope&) = delete;

 private:
  int previous_;
  int previous_openmp_;
};

// Calls body(begin, end) on disjoint ranges covering [0, n), in parallel when
// the work is large enough: `grain` is the least number of iterations worth a
// thread of its own. Runs inline when one range suffices.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t begin, int64_t end)>& body);

}  // namespace orchid
