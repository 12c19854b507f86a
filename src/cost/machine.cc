#include "cost/machine.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "cost/cost_cache.h"
#include "support/error.h"
#include "support/parallel.h"
#include "support/version.h"

namespace orchid::cost {

namespace {

// The GEMM size for the flop peak: large enough that oneDNN reaches its
// steady rate, small enough (2 GFLOP) to run a few times in well under a
// second even on one slow core.
constexpr int64_t kGemmSize = 1024;
// The streaming buffers: far beyond any last-level cache, so the copy
// measures memory, not cache, bandwidth.
constexpr size_t kStreamBytes = size_t(64) << 20;
// Each peak is the best of at least kMinRuns runs, stopping once a run
// would start after kMeasureSeconds: about half a second per peak.
constexpr int kMinRuns = 3;
constexpr int kMaxRuns = 20;
constexpr double kMeasureSeconds = 0.4;

// The "model name" of the first CPU in /proc/cpuinfo (x86); other
// architectures name the core differently, and fall back to "unknown cpu".
std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    size_t begin = line.find_first_not_of(" \t", colon + 1);
    return begin == std::string::npos ? "unknown cpu" : line.substr(begin);
  }
  return "unknown cpu";
}

// The least wall time of `run` over a few calls, after one warm-up call.
double best_seconds(const std::function<void()>& run) {
  using Clock = std::chrono::steady_clock;
  run();
  const Clock::time_point start = Clock::now();
  double best = 1e30;
  for (int i = 0; i < kMaxRuns; ++i) {
    Clock::time_point before = Clock::now();
    run();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - before).count());
    if (i + 1 >= kMinRuns && std::chrono::duration<double>(Clock::now() - start).count() > kMeasureSeconds) break;
  }
  return best;
}

double measure_gemm_flops() {
  const size_t elements = size_t(kGemmSize * kGemmSize);
  std::vector<float> a(elements, 0.5f), b(elements, 0.25f), c(elements, 0.0f);
  auto gemm = [&] {
    dnnl_status_t status = dnnl_sgemm('N', 'N', kGemmSize, kGemmSize, kGemmSize, 1.0f, a.data(), kGemmSize, b.data(),
                                      kGemmSize, 0.0f, c.data(), kGemmSize);
    ORCHID_CHECK(status == dnnl_success) << "dnnl_sgemm failed with status " << int(status);
  };
  const double flops = 2.0 * double(kGemmSize) * double(kGemmSize) * double(kGemmSize);
  return flops / best_seconds(gemm);
}

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};

std::unique_ptr<std::byte, AlignedFree> aligned_buffer(size_t bytes) {
  void* p = std::aligned_alloc(64, bytes);
  ORCHID_CHECK(p != nullptr) << "cannot allocate " << bytes << " bytes for the bandwidth measurement";
  return std::unique_ptr<std::byte, AlignedFree>(static_cast<std::byte*>(p));
}

// Memory bandwidth as a kernel sees it: a parallel copy between two
// buffers, counting the bytes read and the bytes written.
double measure_stream_bandwidth() {
  auto source = aligned_buffer(kStreamBytes);
  auto target = aligned_buffer(kStreamBytes);
  // Chunks of 1 MiB are each thread's unit of work.
  constexpr int64_t kChunk = int64_t(1) << 20;
  const int64_t chunks = int64_t(kStreamBytes) / kChunk;
  // First touch from the same threads that copy, so pages sit near them.
  parallel_for(chunks, 1, [&](int64_t begin, int64_t end) {
    std::memset(source.get() + begin * kChunk, 1, size_t((end - begin) * kChunk));
    std::memset(target.get() + begin * kChunk, 0, size_t((end - begin) * kChunk));
  });
  auto copy = [&] {
    parallel_for(chunks, 1, [&](int64_t begin, int64_t end) {
      std::memcpy(target.get() + begin * kChunk, source.get() + begin * kChunk, size_t((end - begin) * kChunk));
    });
  };
  return 2.0 * double(kStreamBytes) / best_seconds(copy);
}

std::string format_double(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

std::optional<double> parse_positive(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(text->c_str(), &end);
  if (end == text->c_str() || !(value > 0)) return std::nullopt;
  return value;
}

}  // namespace

std::string machine_fingerprint(int threads) {
  return cpu_model_name() + "; " + std::to_string(std::thread::hardware_concurrency()) + " cores; " +
         std::to_string(threads) + " threads; orchid " + kVersion;
}

MachinePeaks measure_peaks(int threads) {
  const int previous = num_threads();
  set_num_threads(threads);
  MachinePeaks peaks;
  try {
    peaks.flops_per_second = measure_gemm_flops();
    peaks.bytes_per_second = measure_stream_bandwidth();
  } catch (...) {
    set_num_threads(previous);
    throw;
  }
  set_num_threads(previous);
  return peaks;
}

MachinePeaks machine_peaks(CostCache& cache, const std::string& machine, const std::function<MachinePeaks()>& measure) {
  std::optional<double> flops = parse_positive(cache.get_meta(machine, kPeakFlopsMeta));
  std::optional<double> bytes = parse_positive(cache.get_meta(machine, kPeakBytesMeta));
  const bool stored = flops && bytes;
  const std::optional<double> count = parse_positive(cache.get_meta(machine, kPeakSamplesMeta));
  const int samples = !stored ? 0 : count ? int(*count) : 1;
  if (samples >= kPeakSamples) return {*flops, *bytes};
  MachinePeaks peaks = measure();
  if (stored) {
    peaks.flops_per_second = std::max(peaks.flops_per_second, *flops);
    peaks.bytes_per_second = std::max(peaks.bytes_per_second, *bytes);
  }
  cache.set_meta(machine, kPeakFlopsMeta, format_double(peaks.flops_per_second));
  cache.set_meta(machine, kPeakBytesMeta, format_double(peaks.bytes_per_second));
  cache.set_meta(machine, kPeakSamplesMeta, std::to_string(samples + 1));
  return peaks;
}

}  // namespace orchid::cost
