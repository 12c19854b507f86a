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
// How many measurements the stored peaks are the best of.
inline constexpr const char* kPeakSamplesMeta = "peak_samples";
// A measurement taken while the shared host is busy reads low (one cache
// kept 119 GFLOP/s at 2 threads where fresh ones read 201-204), and every
// estimate and bound from that cache follows it: the first compiles with a
// cache measure again, and the best of kPeakSamples measurements is kept.
inline constexpr int kPeakSamples = 3;

// Measures both peaks with `threads` threads (about a second).
MachinePeaks measure_peaks(int threads);
// The cached peaks of `machine`: while fewer than kPeakSamples measurements
// stand behind them (none, where missing; peaks stored without a count count
// as one), `measure` runs once more and the better of it and the stored
// peaks, per peak, is stored and returned.
MachinePeaks machine_peaks(CostCache& cache, const std::string& machine, const std::function<MachinePeaks()>& measure);

}  // namespace orchid::cost
