// Times one kernel on this machine: inputs of the right shapes (constants
// with their real data, other inputs filled with deterministic values in
// [-1, 1], integer inputs zero), warm-up runs, then repeated runs until both
// a minimum count and a minimum time are reached; returns the median.
// Outputs are written in the kernel's native layout when it offers one
// (oneDNN's): in a plan its output stays native unless a row-major kernel
// reads it, and orchestration prices that conversion on its own
// (orchestration/layout_model.h), from a timing with `native_outputs` off.
// Inputs are row-major, or with `native_inputs` in the layouts the kernel
// computes them in where it has such (Kernel::native_input_layout): as a
// producer of its kind writes them. Weights a kernel packed
// (Kernel::weight_buffers), when they are at least kColdWeightBytes, are
// flushed from the caches before every run, as in a model, where they come
// from memory: with them in cache, RegNet's 400 -> 400 1x1 convs at 7x7
// were timed at 0.10-0.11 ms both in oneDNN and in the channels-last
// kernel, where the model runs them in 0.16 and 0.12 ms.
#pragma once

#include "ir/graph.h"
#include "runtime/kernel.h"

namespace orchid::cost {

struct ProfileOptions {
  int warmup = 2;
  int min_runs = 5;
  int max_runs = 200;
  double min_seconds = 0.02;
  // A kernel whose first warm-up run takes at least slow_seconds is warmed
  // up once and timed slow_runs times: its runs are long enough to be
  // steady, and a derived form's 0.4 s convolution, timed 7 times per
  // candidate, made a compile spend 15 s of its derivation budget on it.
  double slow_seconds = 0.02;
  int slow_runs = 3;
  // Flush the kernel's packed weights from the caches before each run.
  bool cold_weights = true;
};

inline constexpr size_t kColdWeightBytes = 64 * 1024;

// The layouts a kernel is timed with.
struct TimedLayouts {
  bool native_inputs = false;
  bool native_outputs = true;
};

double time_kernel(runtime::Kernel& kernel, const Graph& graph, const runtime::KernelGroup& group,
                   const ProfileOptions& options = {}, TimedLayouts layouts = {});

// Whether some input of the kernel has a native layout (native_inputs matters).
bool has_native_inputs(const runtime::Kernel& kernel, const runtime::KernelGroup& group);
// Whether some output of the kernel has a native layout (native_outputs matters).
bool has_native_outputs(const runtime::Kernel& kernel, const runtime::KernelGroup& group);

}  // namespace orchid::cost
