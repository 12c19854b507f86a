// This machine, for the cost cache: a fingerprint (CPU model, core count,
// the thread count kernels run with, Orchid's version) and its measured
// peaks (GEMM rate and memory bandwidth), measured once and kept in the
// cache under the fingerprint.
#pragma once

#include <functional>
#include <string>

namespace orchid::cost {

class CostCache;

std::string machine_fingerprint(int threads);

struct MachinePeaks {
  double flops_per_second = 0;  // float32 GEMM (oneDNN sgemm, large square)
  double bytes_per_second = 0;  // streaming read + write bandwidth
};

// The names under which machine_peaks keeps the peaks in the cache's meta
// table (decimal text), per machine fingerprint.
inline constexpr const char* kPeakFlopsMeta = "peak_flops_per_second";
inline constexpr const char* kPeakBytesMeta = "peak_bytes_per_second";

// Measures both peaks with `threads` threads (about a second).
MachinePeaks measure_peaks(int threads);
// The cached peaks of `machine`, measured by `measure` and stored when missing.
MachinePeaks machine_peaks(CostCache& cache, const std::string& machine, const std::function<MachinePeaks()>& measure);

}  // namespace orchid::cost
