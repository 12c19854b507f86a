#include "report/program_timing.h"

#include <algorithm>
#include <chrono>

#include "runtime/random_inputs.h"
#include "support/error.h"

namespace orchid::report {

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

ProgramTiming time_program(const runtime::Program& program, int runs, int warmup, uint64_t seed) {
  runtime::Executable executable(program);
  return time_executable(executable, runtime::random_inputs(program.graph, seed), runs, warmup);
}

ProgramTiming time_executable(runtime::Executable& executable, const std::map<std::string, Tensor>& feeds, int runs,
                              int warmup) {
  if (runs < 1) ORCHID_FAIL() << "timing needs at least 1 run (runs = " << runs << ")";
  for (int i = 0; i < warmup; ++i) executable.run(feeds);
  ProgramTiming timing;
  timing.runs = runs;
  timing.kernels = executable.kernel_info();
  timing.kernel_ms.assign(executable.num_kernels(), 0.0);
  std::vector<double> run_ms, kernel_seconds;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    executable.run(feeds);
    run_ms.push_back(elapsed_ms(start));
    executable.run(feeds, &kernel_seconds);
    for (size_t k = 0; k < kernel_seconds.size() && k < timing.kernel_ms.size(); ++k) {
      timing.kernel_ms[k] += kernel_seconds[k] * 1e3 / runs;
    }
  }
  timing.median_ms = median(run_ms);
  timing.min_ms = *std::min_element(run_ms.begin(), run_ms.end());
  return timing;
}

}  // namespace orchid::report
