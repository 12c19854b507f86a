#include "cost/cost_model.h"

#include "cost/kernel_key.h"

namespace orchid::cost {

namespace {

std::string cache_path_of(const CostModelOptions& options) {
  return options.cache_path.empty() ? cost_cache_path("") : options.cache_path;
}

// The key of a kernel timed in other layouts than time_kernel's default:
// its own key's text with the variant marked.
std::string layout_key(const Graph& graph, const runtime::KernelGroup& group, const char* layouts) {
  runtime::KernelGroup marked = group;
  marked.variant += layouts;
  return kernel_key(graph, marked);
}

std::string native_key(const Graph& graph, const runtime::KernelGroup& group) {
  return layout_key(graph, group, "+native-inputs");
}

std::string row_major_key(const Graph& graph, const runtime::KernelGroup& group) {
  return layout_key(graph, group, "+row-major-outputs");
}

}  // namespace

CostModel::CostModel(const CostModelOptions& options)
    : cache_(std::make_unique<CostCache>(cache_path_of(options))), profile_(options.profile) {
  const backend::Backend& target = options.backend ? *options.backend : backend::cpu_backend();
  machine_ = target.fingerprint(options.threads);
  peaks_ = machine_peaks(*cache_, machine_, [&] { return target.measure_peaks(options.threads); });
  model_ = std::make_unique<AnalyticalModel>(peaks_);
  model_->calibrate(cache_->records(machine_));
}

std::optional<double> CostModel::cached_at(const std::string& key) const {
  std::optional<CostRecord> record = cache_->lookup(key, machine_);
  if (!record) return std::nullopt;
  return record->seconds;
}

// The raw (uncalibrated) estimate is stored so later runs can calibrate
// against it whatever the scale was when this kernel was measured.
double CostModel::store_at(const std::string& key, const Graph& graph, const runtime::KernelGroup& group,
                           double seconds, KernelClass kind) {
  cache_->store(key, machine_, CostRecord{seconds, model_->raw_estimate(graph, group), kind});
  return seconds;
}

std::optional<double> CostModel::cached(const Graph& graph, const runtime::KernelGroup& group) const {
  return cached_at(kernel_key(graph, group));
}

double CostModel::estimate(const Graph& graph, const runtime::KernelGroup& group, KernelClass kind) const {
  return model_->estimate(graph, group, kind);
}

double CostModel::measure(runtime::Kernel& kernel, const Graph& graph, const runtime::KernelGroup& group,
                          KernelClass kind) {
  return store_at(kernel_key(graph, group), graph, group, time_kernel(kernel, graph, group, profile_), kind);
}

std::optional<double> CostModel::cached_native(const Graph& graph, const runtime::KernelGroup& group) const {
  return cached_at(native_key(graph, group));
}

double CostModel::measure_native(runtime::Kernel& kernel, const Graph& graph, const runtime::KernelGroup& group,
                                 KernelClass kind) {
  const double seconds = time_kernel(kernel, graph, group, profile_, TimedLayouts{.native_inputs = true});
  return store_at(native_key(graph, group), graph, group, seconds, kind);
}

void CostModel::store_native(const Graph& graph, const runtime::KernelGroup& group, double seconds, KernelClass kind) {
  store_at(native_key(graph, group), graph, group, seconds, kind);
}

std::optional<double> CostModel::cached_row_major(const Graph& graph, const runtime::KernelGroup& group) const {
  return cached_at(row_major_key(graph, group));
}

double CostModel::measure_row_major(runtime::Kernel& kernel, const Graph& graph, const runtime::KernelGroup& group,
                                    KernelClass kind) {
  const double seconds = time_kernel(kernel, graph, group, profile_, TimedLayouts{.native_outputs = false});
  return store_at(row_major_key(graph, group), graph, group, seconds, kind);
}

void CostModel::recalibrate() { model_->calibrate(cache_->records(machine_)); }

}  // namespace orchid::cost
