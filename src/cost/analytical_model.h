// The analytical cost model: a kernel's work (flops; bytes of its inputs,
// outputs and weights moved once) against the machine's measured peaks,
// max(flops / peak, bytes / bandwidth) plus a fixed per-kernel overhead,
// then scaled per kernel class by calibration against measured costs. It
// ranks candidates before timing and serves alone under --no-profile.
#pragma once

#include <map>
#include <vector>

#include "cost/cost_cache.h"
#include "cost/machine.h"
#include "ir/graph.h"
#include "runtime/kernel.h"
#include "runtime/program.h"

namespace orchid::cost {

struct KernelWork {
  double flops = 0;
  double bytes = 0;
};

KernelWork kernel_work(const Graph& graph, const runtime::KernelGroup& group);

// A kernel's roofline bound: its flops at the peak GEMM rate or its bytes at
// the streaming bandwidth, whichever takes longer, with no per-kernel
// overhead. A kernel whose data stays in cache can beat it.
struct RooflineBound {
  double seconds = 0;
  bool memory_bound = false;  // bytes, not flops, set the bound
};
RooflineBound roofline_bound(const KernelWork& work, const MachinePeaks& peaks);

// The least work a whole program must do, for a roofline bound: the flops of
// every primitive its kernels compute (once, however many kernels compute
// it), those of linear primitives (Conv, ConvTranspose, MatMul, Gemm) apart,
// and the bytes of its weights, inputs and outputs, each moved once.
struct ProgramWork {
  double flops = 0;
  double linear_flops = 0;
  double min_bytes = 0;
};
ProgramWork program_work(const runtime::Program& program);

class AnalyticalModel {
 public:
  explicit AnalyticalModel(MachinePeaks peaks);
  // Uncalibrated seconds.
  double raw_estimate(const Graph& graph, const runtime::KernelGroup& group) const;
  // Calibrated seconds: raw_estimate times the class's scale.
  double estimate(const Graph& graph, const runtime::KernelGroup& group, KernelClass kind) const;
  // Sets each class's scale to the median of measured / raw estimate over
  // `records` (classes with fewer than 3 records keep scale 1).
  void calibrate(const std::vector<CostRecord>& records);
  double scale(KernelClass kind) const;

 private:
  MachinePeaks peaks_;
  std::map<KernelClass, double> scale_;
};

}  // namespace orchid::cost
