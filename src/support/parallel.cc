#include "support/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace orchid {

namespace {
std::atomic<int> g_threads{0};  // the process's count; 0: not set yet, all cores
thread_local int t_threads = 0;  // the calling thread's ThreadCountScope; 0: none
}  // namespace

int num_cores() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : int(n);
}

void set_num_threads(int n) {
  g_threads = n <= 0 ? num_cores() : n;
#ifdef _OPENMP
  omp_set_num_threads(g_threads);
#endif
}

int num_threads() {
  if (t_threads > 0) return t_threads;
  const int process = g_threads;
  return process > 0 ? process : num_cores();
}

// OpenMP's thread count is an internal control variable of each thread, so
// setting it here leaves other threads' parallel regions as they were.
ThreadCountScope::ThreadCountScope(int n) : previous_(t_threads), previous_openmp_(0) {
  t_threads = n <= 0 ? num_cores() : n;
#ifdef _OPENMP
  previous_openmp_ = omp_get_max_threads();
  omp_set_num_threads(t_threads);
#endif
}

ThreadCountScope::~ThreadCountScope() {
  t_threads = previous_;
#ifdef _OPENMP
  omp_set_num_threads(previous_openmp_);
#endif
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body) {
  if (n <= 0) return;
  const int64_t threads = std::min<int64_t>(num_threads(), std::max<int64_t>(1, n / std::max<int64_t>(1, grain)));
  if (threads <= 1) {
    body(0, n);
    return;
  }
#ifdef _OPENMP
#pragma omp parallel for num_threads(int(threads)) schedule(static)
#endif
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t begin = n * t / threads;
    const int64_t end = n * (t + 1) / threads;
    if (begin < end) body(begin, end);
  }
}

}  // namespace orchid
