#include "backend/backend.h"
#include "cost/cost_cache.h"

namespace orchid::backend {

cost::MachinePeaks cached_peaks(const Backend& target, const std::string& cache_dir, int threads) {
  cost::CostCache cache(cost::cost_cache_path(cache_dir));
  return cost::machine_peaks(cache, target.fingerprint(threads), [&] { return target.measure_peaks(threads); });
}

}  // namespace orchid::backend
