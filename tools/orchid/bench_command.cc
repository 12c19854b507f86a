// orchid bench MODEL.onnx|DIR: compiles (or loads), warms up, then times runs
// of the whole program and reports median / min latency, the kernels that
// take the time, and the arena size.
#include <algorithm>
#include <chrono>
#include <map>
#include <iostream>
#include <numeric>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common.h"
#include "cost/analytical_model.h"
#include "runtime/executable.h"
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

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

void bench(const BenchOptions& options) {
  if (options.runs < 1) ORCHID_FAIL() << "--runs must be at least 1";
  set_num_threads(options.threads);
  const auto compile_start = std::chrono::steady_clock::now();
  LoadedModel loaded = load_model(options.model, options.shapes, /*interpreter=*/false, options.compile);
  const cost::ProgramWork work = cost::program_work(*loaded.program);
  runtime::Executable executable(std::move(*loaded.program));
  const double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_start).count();
  std::mt19937_64 rng(options.seed);
  std::map<std::string, Tensor> feeds;
  for (ValueId id : loaded.graph.inputs()) feeds[loaded.graph.value(id).name] = random_tensor(loaded.graph.type(id), rng);
  for (int i = 0; i < options.warmup; ++i) executable.run(feeds);
  std::vector<double> run_ms;
  std::vector<double> kernel_total(executable.num_kernels(), 0.0), kernel_seconds;
  for (int i = 0; i < options.runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    executable.run(feeds, &kernel_seconds);
    run_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    for (size_t k = 0; k < kernel_seconds.size(); ++k) kernel_total[k] += kernel_seconds[k];
  }
  std::vector<KernelTime> by_time;
  for (size_t k = 0; k < kernel_total.size(); ++k) by_time.push_back({k, kernel_total[k]});
  std::sort(by_time.begin(), by_time.end(), [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
  const double all_kernels = std::accumulate(kernel_total.begin(), kernel_total.end(), 0.0);
  const double median_ms = median(run_ms);
  const double min_ms = *std::min_element(run_ms.begin(), run_ms.end());
  const auto& memory = executable.memory_plan();

  std::cout << fmt::format("{}: {} kernels, {} threads, compile+load {:.2f} s\n", options.model,
                           executable.num_kernels(), num_threads(), compile_s)
            << fmt::format("latency over {} runs (after {} warm-up): median {:.3f} ms, min {:.3f} ms\n", options.runs,
                           options.warmup, median_ms, min_ms)
            << fmt::format("arena {:.2f} MB (intermediates {:.2f} MB without reuse), weights {:.2f} MB\n",
                           memory.arena_bytes / 1e6, memory.intermediate_bytes / 1e6, executable.weight_bytes() / 1e6)
            << fmt::format("work: {:.3f} GFLOP ({:.3f} in linear primitives), at least {:.2f} MB moved (weights, "
                           "inputs, outputs once)\n",
                           work.flops / 1e9, work.linear_flops / 1e9, work.min_bytes / 1e6)
            << "top kernels (mean time per run):\n";
  nlohmann::json top = nlohmann::json::array();
  for (size_t i = 0; i < std::min<size_t>(options.top ? size_t(options.top) : by_time.size(), by_time.size()); ++i) {
    const runtime::KernelInfo& info = executable.kernel_info()[by_time[i].index];
    const double ms = by_time[i].seconds * 1e3 / options.runs;
    const double percent = all_kernels > 0 ? 100 * by_time[i].seconds / all_kernels : 0;
    std::cout << fmt::format("  {:8.3f} ms {:5.1f}%  {:<24} {:<16} {}\n", ms, percent, info.ops, info.implementation,
                             info.name);
    top.push_back({{"name", info.name}, {"ops", info.ops}, {"implementation", info.implementation}, {"ms", ms},
                   {"percent", percent}});
  }
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
      "and print the median and minimum latency, the ten kernels that take the most time, the arena "
      "size, and the program's work (flops; bytes of weights, inputs and outputs). --json adds one JSON "
      "object on the last line (median_ms, min_ms, kernels, arena_bytes, work, ...).");
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
