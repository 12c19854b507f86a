// orchid machine: measures this machine's two roofline ceilings, the peak
// float32 GEMM rate and the memory bandwidth, as the cost model sees them.
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "common.h"
#include "cost/machine.h"
#include "support/parallel.h"

namespace orchid::cli {

namespace {

struct MachineOptions {
  int threads = 0;
  bool json = false;
};

void report_peaks(const MachineOptions& options) {
  backend::cpu_backend().set_threads(options.threads);
  const int threads = num_threads();
  const cost::MachinePeaks peaks = backend::cpu_backend().measure_peaks(threads);
  const std::string machine = backend::cpu_backend().fingerprint(threads);
  std::cout << fmt::format("{}\npeak GEMM {:.1f} GFLOP/s (oneDNN sgemm, float32), memory bandwidth {:.1f} GB/s "
                           "(parallel copy, bytes read + written)\n",
                           machine, peaks.flops_per_second / 1e9, peaks.bytes_per_second / 1e9);
  if (options.json) {
    nlohmann::json result = {{"machine", machine},
                             {"threads", threads},
                             {"flops_per_second", peaks.flops_per_second},
                             {"bytes_per_second", peaks.bytes_per_second}};
    std::cout << result.dump() << "\n";
  }
}

}  // namespace

void add_machine_command(CLI::App& app, int& status) {
  auto options = std::make_shared<MachineOptions>();
  CLI::App* command = app.add_subcommand(
      "machine",
      "Measure this machine's peak float32 GEMM rate and memory bandwidth with --threads threads (about "
      "two seconds): the ceilings of the cost model and of roofline bounds. --json adds one JSON object on "
      "the last line (flops_per_second, bytes_per_second).");
  add_threads_option(*command, options->threads);
  command->add_flag("--json", options->json, "Print the results as JSON on the last line");
  command->callback([options, &status] {
    report_peaks(*options);
    status = 0;
  });
}

}  // namespace orchid::cli
