// Times a compiled program the way `orchid bench` does: warm-up runs, then
// timed runs on random inputs, each whole-program run (for the latency)
// followed by one with per-kernel timing (whose clock reads would add to
// the latency of programs of many small kernels).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/executable.h"
#include "runtime/program.h"

namespace orchid::report {

struct ProgramTiming {
  int runs = 0;
  double median_ms = 0;                   // whole-program runs
  double min_ms = 0;
  std::vector<double> kernel_ms;          // per kernel, mean per run
  std::vector<runtime::KernelInfo> kernels;  // name, ops, implementation, per kernel
};

// Runs a copy of `program` (copies share constant tensors) `warmup` times,
// then times `runs` runs (runs >= 1; orchid::Error otherwise).
ProgramTiming time_program(const runtime::Program& program, int runs, int warmup = 3, uint64_t seed = 0);
// The same on an executable made elsewhere, with the given inputs.
ProgramTiming time_executable(runtime::Executable& executable, const std::map<std::string, Tensor>& feeds, int runs,
                              int warmup = 3);

}  // namespace orchid::report
