#include "support/parallel.h"

#include <algorithm>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace orchid {

namespace {
int g_threads = 0;  // 0: not set yet, all cores
}

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

int num_threads() { return g_threads > 0 ? g_threads : num_cores(); }

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
