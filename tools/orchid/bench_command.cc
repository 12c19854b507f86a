// orchid bench MODEL.onnx|DIR: compiles (or loads), warms up, then times runs
// of the whole program and reports median / min latency, the kernels that
// take the time, each against its own roofline bound (its bytes at the
// measured bandwidth, its flops at the measured GEMM peak), and the arena size.
#include <algorithm>
#include <chrono>
#include <map>
#include <iostream>
#include <numeric>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "api/model_impl.h"
#include "common.h"
#include "cost/analytical_model.h"
#include "cost/machine.h"
#include "report/program_timing.h"
#include "runtime/executable.h"
#include "runtime/random_inputs.h"
#include "support/error.h"
#include "support/parallel.h"

namespace orchid::cli {

namespace {

struct BenchOptions {
  std::string model;
  int threads = 0;
  int top = 10;
  CompileFlags compile;
  int runs = 20;
  int warmup = 3;
  bool json = false;
  uint64_t seed = 0;
  ShapeOptions shapes;
};

struct KernelTime {
  size_t index;
  double seconds;  // summed over the timed runs
};

// One kernel's mean time per run against its roofline bound.
struct KernelEfficiency {
  double ms = 0;
  double bound_ms = 0;
  bool memory_bound = false;
  cost::KernelWork work;
  double share() const { return ms > 0 ? bound_ms / ms : 0; }  // of the bound reached
  double lost_ms() const { return std::max(0.0, ms - bound_ms); }
};

nlohmann::json kernel_json(const runtime::KernelInfo& info, const KernelEfficiency& e) {
  return {{"name", info.name},        {"ops", info.ops},
          {"implementation", info.implementation}, {"ms", e.ms},
          {"bound_ms", e.bound_ms},   {"bound_share", e.share()},
          {"limit", e.memory_bound ? "memory" : "compute"},
          {"flops", e.work.flops},    {"bytes", e.work.bytes}};
}

void print_bench(const BenchOptions& options, const runtime::Executable& executable, const cost::ProgramWork& work,
            const std::vector<cost::KernelWork>& kernel_works, const cost::MachinePeaks& peaks, double compile_s,
            const report::ProgramTiming& timing);

void bench(const BenchOptions& options) {
  if (options.runs < 1) ORCHID_FAIL() << "--runs must be at least 1";
  backend::cpu_backend().set_threads(options.threads);
  const auto compile_start = std::chrono::steady_clock::now();
  LoadedModel loaded = load_model(options.model, options.shapes, /*interpreter=*/false, options.threads,
                                  options.compile);
  const Model::Impl& model = loaded.model->impl();
  const cost::ProgramWork work = cost::program_work(model.program);
  std::vector<cost::KernelWork> kernel_works;
  for (const runtime::KernelGroup& group : model.program.kernels)
    kernel_works.push_back(cost::kernel_work(model.program.graph, group));
  const cost::MachinePeaks peaks = backend::cached_peaks(backend::cpu_backend(), options.compile.cache_dir, num_threads());
  const std::map<std::string, Tensor> feeds = runtime::random_inputs(loaded.graph, options.seed);
  model.with_instance([&](runtime::Executable& executable) {
    const double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_start).count();
    const report::ProgramTiming timing = report::time_executable(executable, feeds, options.runs, options.warmup);
    print_bench(options, executable, work, kernel_works, peaks, compile_s, timing);
  });
}

// The latency, the kernels that take the time and their bounds, as text or JSON.
void print_bench(const BenchOptions& options, const runtime::Executable& executable, const cost::ProgramWork& work,
            const std::vector<cost::KernelWork>& kernel_works, const cost::MachinePeaks& peaks, double compile_s,
            const report::ProgramTiming& timing) {
  std::vector<double> kernel_total;  // seconds over all timed runs
  for (double ms : timing.kernel_ms) kernel_total.push_back(ms * options.runs / 1e3);
  std::vector<KernelTime> by_time;
  for (size_t k = 0; k < kernel_total.size(); ++k) by_time.push_back({k, kernel_total[k]});
  std::sort(by_time.begin(), by_time.end(), [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
  const double all_kernels = std::accumulate(kernel_total.begin(), kernel_total.end(), 0.0);
  const double median_ms = timing.median_ms;
  const double min_ms = timing.min_ms;
  const auto& memory = executable.memory_plan();
  std::vector<KernelEfficiency> efficiency;
  for (size_t k = 0; k < kernel_total.size(); ++k) {
    const cost::RooflineBound bound = cost::roofline_bound(kernel_works.at(k), peaks);
    efficiency.push_back({kernel_total[k] * 1e3 / options.runs, bound.seconds * 1e3, bound.memory_bound,
                          kernel_works[k]});
  }
  double bound_total_ms = 0;
  for (const KernelEfficiency& e : efficiency) bound_total_ms += e.bound_ms;

  std::cout << fmt::format("{}: {} kernels, {} threads, compile+load {:.2f} s\n", options.model,
                           executable.num_kernels(), num_threads(), compile_s)
            << fmt::format("latency over {} runs (after {} warm-up): median {:.3f} ms, min {:.3f} ms\n", options.runs,
                           options.warmup, median_ms, min_ms)
            << fmt::format("arena {:.2f} MB (intermediates {:.2f} MB without reuse), weights {:.2f} MB\n",
                           memory.arena_bytes / 1e6, memory.intermediate_bytes / 1e6, executable.weight_bytes() / 1e6)
            << fmt::format("work: {:.3f} GFLOP ({:.3f} in linear primitives), at least {:.2f} MB moved (weights, "
                           "inputs, outputs once)\n",
                           work.flops / 1e9, work.linear_flops / 1e9, work.min_bytes / 1e6)
            << fmt::format("kernels {:.3f} ms per run; their bounds {:.3f} ms ({:.0f}%): bytes at {:.1f} GB/s, "
                           "flops at {:.0f} GFLOP/s (this machine's measured peaks at {} threads)\n",
                           all_kernels * 1e3 / options.runs, bound_total_ms,
                           all_kernels > 0 ? 100 * bound_total_ms / (all_kernels * 1e3 / options.runs) : 0,
                           peaks.bytes_per_second / 1e9, peaks.flops_per_second / 1e9, num_threads())
            << "top kernels (mean time per run; bound: its roofline time, and the share of it reached):\n";
  nlohmann::json top = nlohmann::json::array();
  const size_t listed = std::min<size_t>(options.top ? size_t(options.top) : by_time.size(), by_time.size());
  for (size_t i = 0; i < listed; ++i) {
    const runtime::KernelInfo& info = executable.kernel_info()[by_time[i].index];
    const KernelEfficiency& e = efficiency[by_time[i].index];
    const double percent = all_kernels > 0 ? 100 * by_time[i].seconds / all_kernels : 0;
    std::cout << fmt::format("  {:8.3f} ms {:5.1f}%  bound {:8.3f} ms {:4.0f}% {}  {:<24} {:<16} {}\n", e.ms, percent,
                             e.bound_ms, 100 * e.share(), e.memory_bound ? "mem" : "flop", info.ops,
                             info.implementation, info.name);
    nlohmann::json entry = kernel_json(info, e);
    entry["percent"] = percent;
    top.push_back(std::move(entry));
  }
  // Where the most time goes beyond the bounds: what to work on first.
  std::vector<size_t> by_lost(efficiency.size());
  std::iota(by_lost.begin(), by_lost.end(), 0);
  std::sort(by_lost.begin(), by_lost.end(),
            [&](size_t a, size_t b) { return efficiency[a].lost_ms() > efficiency[b].lost_ms(); });
  std::cout << "most time above the bound:\n";
  for (size_t i = 0; i < std::min<size_t>(5, by_lost.size()); ++i) {
    const runtime::KernelInfo& info = executable.kernel_info()[by_lost[i]];
    const KernelEfficiency& e = efficiency[by_lost[i]];
    std::cout << fmt::format("  {:8.3f} ms above ({:.3f} ms, bound {:.3f} ms)  {:<24} {:<16} {}\n", e.lost_ms(), e.ms,
                             e.bound_ms, info.ops, info.implementation, info.name);
  }
  nlohmann::json all = nlohmann::json::array();
  for (size_t k = 0; k < efficiency.size(); ++k) all.push_back(kernel_json(executable.kernel_info()[k], efficiency[k]));
  // Where the time goes by implementation: "onednn conv 61%, generated 20%, ...".
  std::map<std::string, double> by_implementation;
  for (size_t k = 0; k < kernel_total.size(); ++k) {
    const std::string& implementation = executable.kernel_info()[k].implementation;
    by_implementation[implementation.substr(0, implementation.find(" ("))] += kernel_total[k];
  }
  std::vector<std::pair<double, std::string>> shares;
  for (const auto& [name, seconds] : by_implementation) shares.push_back({seconds, name});
  std::sort(shares.rbegin(), shares.rend());
  std::string summary;
  nlohmann::json implementations = nlohmann::json::object();
  for (const auto& [seconds, name] : shares) {
    const double percent = all_kernels > 0 ? 100 * seconds / all_kernels : 0;
    summary += fmt::format("{}{} {:.0f}%", summary.empty() ? "" : ", ", name, percent);
    implementations[name] = seconds * 1e3 / options.runs;
  }
  std::cout << "by implementation: " << summary << "\n";
  if (options.json) {
    nlohmann::json result = {{"model", options.model}, {"threads", num_threads()},    {"runs", options.runs},
                              {"median_ms", median_ms}, {"min_ms", min_ms},            {"kernels", executable.num_kernels()},
                              {"arena_bytes", memory.arena_bytes}, {"intermediate_bytes", memory.intermediate_bytes},
                              {"weight_bytes", executable.weight_bytes()}, {"compile_s", compile_s},
                              {"top_kernels", top}, {"implementation_ms", implementations},
                              {"kernel_list", all}, {"bound_ms", bound_total_ms},
                              {"peaks", {{"flops_per_second", peaks.flops_per_second},
                                         {"bytes_per_second", peaks.bytes_per_second}}},
                              {"work", {{"flops", work.flops}, {"linear_flops", work.linear_flops},
                                        {"min_bytes", work.min_bytes}}}};
    std::cout << result.dump() << "\n";
  }
}

}  // namespace

void add_bench_command(CLI::App& app, int& status) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* command = app.add_subcommand(
      "bench",
      "Time a model: compile it (or load a compiled folder), warm up, time --runs runs on random inputs, "
      "and print the median and minimum latency, the ten kernels that take the most time, each against "
      "its roofline bound (its bytes at the measured bandwidth or its flops at the measured GEMM peak, "
      "whichever takes longer), the kernels furthest above their bounds, the arena size, and the "
      "program's work (flops; bytes of weights, inputs and outputs). --json adds one JSON object on "
      "the last line (median_ms, min_ms, kernels, arena_bytes, work, kernel_list: every kernel's time, "
      "bound and work, ...).");
  command->add_option("model", options->model, "An ONNX model file or a compiled artifact folder")->required();
  add_threads_option(*command, options->threads);
  options->compile.add_to(*command);
  command->add_option("--top", options->top, "Kernels to list, slowest first (0: all)")->check(CLI::NonNegativeNumber);
  command->add_option("--runs", options->runs, "Timed runs")->capture_default_str();
  command->add_option("--warmup", options->warmup, "Untimed runs first")->capture_default_str();
  command->add_flag("--json", options->json, "Print the results as JSON on the last line");
  command->add_option("--seed", options->seed, "Seed for the random inputs")->capture_default_str();
  options->shapes.add_to(*command);
  command->callback([options, &status] {
    bench(*options);
    status = 0;
  });
}

}  // namespace orchid::cli
