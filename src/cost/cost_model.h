// The cost stage's one entry point for orchestration: measured costs from
// the cache, the calibrated analytical estimate for what is not measured
// yet, and measuring (timing + storing) a built kernel.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "backend/backend.h"
#include "cost/analytical_model.h"
#include "cost/cost_cache.h"
#include "cost/profiler.h"

namespace orchid::cost {

struct CostModelOptions {
  // The target: its machine fingerprint keys the cache, its peaks bound
  // kernels; nullptr: the CPU.
  const backend::Backend* backend = nullptr;
  std::string cache_path;  // the SQLite file; empty: <default_cache_dir()>/costs.sqlite
  int threads = 1;         // the thread count kernels will run with (part of the machine fingerprint)
  ProfileOptions profile;
};

class CostModel {
 public:
  // Opens the cache, reads (or measures once and stores) this machine's
  // peaks, and calibrates the analytical model from the cached records.
  explicit CostModel(const CostModelOptions& options);

  // The measured cost of this kernel on this machine, when cached.
  std::optional<double> cached(const Graph& graph, const runtime::KernelGroup& group) const;
  // The calibrated analytical estimate.
  double estimate(const Graph& graph, const runtime::KernelGroup& group, KernelClass kind) const;
  // Times the built kernel, stores the result with its raw estimate, returns seconds.
  double measure(runtime::Kernel& kernel, const Graph& graph, const runtime::KernelGroup& group, KernelClass kind);
  // The same with the kernel's inputs in their native layouts (a oneDNN
  // conv's src as a oneDNN producer writes it: time_kernel's native_inputs),
  // kept under a key of its own; measure_native times a fresh kernel, and
  // store_native records the row-major time of one with no native inputs.
  std::optional<double> cached_native(const Graph& graph, const runtime::KernelGroup& group) const;
  double measure_native(runtime::Kernel& kernel, const Graph& graph, const runtime::KernelGroup& group,
                        KernelClass kind);
  void store_native(const Graph& graph, const runtime::KernelGroup& group, double seconds, KernelClass kind);
  // The same with row-major inputs and outputs (time_kernel's
  // native_outputs off: a oneDNN kernel whose output a row-major kernel
  // reads), under a key of its own; measure_row_major times a fresh kernel.
  std::optional<double> cached_row_major(const Graph& graph, const runtime::KernelGroup& group) const;
  double measure_row_major(runtime::Kernel& kernel, const Graph& graph, const runtime::KernelGroup& group,
                           KernelClass kind);
  // Calibrates the analytical model again, with what was measured since.
  void recalibrate();

  const std::string& machine() const { return machine_; }
  const MachinePeaks& peaks() const { return peaks_; }
  CostCache& cache() { return *cache_; }

 private:
  // The cached seconds under `key`; a timing stored under it with the
  // group's raw estimate.
  std::optional<double> cached_at(const std::string& key) const;
  double store_at(const std::string& key, const Graph& graph, const runtime::KernelGroup& group, double seconds,
                  KernelClass kind);

  std::unique_ptr<CostCache> cache_;
  std::string machine_;
  MachinePeaks peaks_;
  std::unique_ptr<AnalyticalModel> model_;
  ProfileOptions profile_;
};

}  // namespace orchid::cost
