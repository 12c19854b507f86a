#include "cost/profiler.h"

#include <algorithm>
#include <optional>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "support/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace orchid::cost {

namespace {

// A 64-byte aligned buffer (a cache line, and what vector loads prefer), so
// that timings do not depend on where malloc happened to put the data.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(size_t bytes) {
    const size_t rounded = std::max<size_t>(64, (bytes + 63) / 64 * 64);
    data_.reset(static_cast<std::byte*>(std::aligned_alloc(64, rounded)));
    ORCHID_CHECK(data_ != nullptr) << "cannot allocate " << rounded << " bytes to profile a kernel";
    std::memset(data_.get(), 0, rounded);
  }
  std::byte* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte, Free> data_;
};

// Deterministic values in [-1, 1] for float inputs; integer and bool inputs
// stay zero, a valid index into any non-empty axis.
void fill_input(std::byte* data, const TensorType& type) {
  if (!is_float(type.dtype)) return;
  const int64_t n = type.numel();
  visit_dtype(type.dtype, [&]<typename T>() {
    T* values = reinterpret_cast<T*>(data);
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t mixed = uint64_t(i) * 2654435761u % 2001u;
      values[i] = T(float(double(mixed) / 1000.0 - 1.0));
    }
  });
}

// The kernel's arguments: constants point at their real data (a kernel may
// have packed them already, but passing them is always allowed), other
// inputs and all outputs at fresh buffers the returned owner keeps.
runtime::KernelArgs make_args(runtime::Kernel& kernel, const Graph& graph, const runtime::KernelGroup& group,
                              std::vector<AlignedBuffer>& owner, TimedLayouts layouts) {
  runtime::KernelArgs args;
  for (size_t k = 0; k < group.inputs.size(); ++k) {
    const ValueId id = group.inputs[k];
    ORCHID_CHECK(id != kNoValue) << "kernel group " << group.name << " lists an omitted input";
    const Value& value = graph.value(id);
    if (value.constant) {
      args.inputs.push_back(value.constant->raw());
      continue;
    }
    size_t bytes = value.type.nbytes();
    if (std::optional<runtime::NativeLayout> layout = layouts.native_inputs ? kernel.native_input_layout(k) : std::nullopt) {
      kernel.read_input_as(k, *layout);
      bytes = std::max(bytes, layout->bytes);
    }
    owner.emplace_back(bytes);
    fill_input(owner.back().data(), value.type);
    args.inputs.push_back(owner.back().data());
  }
  for (size_t k = 0; k < group.outputs.size(); ++k) {
    const TensorType& type = graph.type(group.outputs[k]);
    size_t bytes = type.nbytes();
    if (std::optional<runtime::NativeLayout> layout = layouts.native_outputs ? kernel.native_output_layout(k) : std::nullopt) {
      kernel.use_native_output(k);
      bytes = std::max(bytes, layout->bytes);
    }
    owner.emplace_back(bytes);
    args.outputs.push_back(owner.back().data());
  }
  return args;
}

// Evicts `buffers` from every level of the cache (where the target can).
void evict(const std::vector<std::span<const std::byte>>& buffers) {
#if defined(__x86_64__) || defined(__i386__)
  for (const std::span<const std::byte>& b : buffers) {
    const uintptr_t end = reinterpret_cast<uintptr_t>(b.data() + b.size());
    for (uintptr_t line = reinterpret_cast<uintptr_t>(b.data()) & ~uintptr_t(63); line < end; line += 64) {
      _mm_clflush(reinterpret_cast<const void*>(line));
    }
  }
  _mm_mfence();
#else
  (void)buffers;
#endif
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace

bool has_native_inputs(const runtime::Kernel& kernel, const runtime::KernelGroup& group) {
  for (size_t k = 0; k < group.inputs.size(); ++k) {
    if (kernel.native_input_layout(k)) return true;
  }
  return false;
}

bool has_native_outputs(const runtime::Kernel& kernel, const runtime::KernelGroup& group) {
  for (size_t k = 0; k < group.outputs.size(); ++k) {
    if (kernel.native_output_layout(k)) return true;
  }
  return false;
}

double time_kernel(runtime::Kernel& kernel, const Graph& graph, const runtime::KernelGroup& group,
                   const ProfileOptions& options, TimedLayouts layouts) {
  using Clock = std::chrono::steady_clock;
  ORCHID_CHECK(options.min_runs >= 1 && options.max_runs >= options.min_runs)
      << "profile options need 1 <= min_runs <= max_runs";
  std::vector<AlignedBuffer> buffers;
  const runtime::KernelArgs args = make_args(kernel, graph, group, buffers, layouts);
  std::vector<std::span<const std::byte>> weights;
  if (options.cold_weights) weights = kernel.weight_buffers();
  size_t weight_bytes = 0;
  for (const std::span<const std::byte>& b : weights) weight_bytes += b.size();
  if (weight_bytes < kColdWeightBytes) weights.clear();
  // One run, its weights evicted first if cold; `flushing` gets the eviction's seconds.
  double flushing = 0;
  const auto run_once = [&] {
    if (!weights.empty()) {
      const Clock::time_point start = Clock::now();
      evict(weights);
      flushing += std::chrono::duration<double>(Clock::now() - start).count();
    }
    const Clock::time_point before = Clock::now();
    kernel.run(args);
    return std::chrono::duration<double>(Clock::now() - before).count();
  };
  // Warm-up: caches, page faults of the outputs, lazily created primitives.
  int min_runs = options.min_runs;
  for (int i = 0; i < options.warmup; ++i) {
    if (run_once() >= options.slow_seconds && i == 0) {
      min_runs = std::min(min_runs, std::max(1, options.slow_runs));
      break;
    }
  }

  // Runs until min_seconds of wall time (evictions included) have passed.
  std::vector<double> seconds;
  double total = 0;
  flushing = 0;
  while (int(seconds.size()) < options.max_runs &&
         (int(seconds.size()) < min_runs || total + flushing < options.min_seconds)) {
    const double elapsed = run_once();
    seconds.push_back(elapsed);
    total += elapsed;
  }
  // The median ignores the odd run that an interrupt or another process
  // slowed down, without the optimism of the minimum.
  return median(std::move(seconds));
}

}  // namespace orchid::cost
