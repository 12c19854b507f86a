#include "cost/analytical_model.h"

#include <algorithm>
#include <set>

#include "fission/primitive.h"
#include "reference/ops/banded.h"
#include "support/error.h"

namespace orchid::cost {

namespace {

// The fixed cost of running any kernel: the call, the thread pool's fork and
// join, touching the arguments. 2 µs is the order of an OpenMP parallel
// region's start on a few cores; without it tiny kernels would look free and
// the planner would not value fusing them. Calibration scales it with the rest.
constexpr double kKernelOverheadSeconds = 2e-6;

int64_t numel(const Graph& graph, ValueId id) { return id == kNoValue ? 0 : graph.type(id).numel(); }

double value_bytes(const Graph& graph, ValueId id) {
  const TensorType& type = graph.type(id);
  return double(type.numel()) * double(dtype_size(type.dtype));
}

// A multiply and an add per output element and reduction step; the
// reduction length is the weight's elements per output channel
// (C_in / groups * kernel elements).
double conv_flops(const Graph& graph, const Node& node) {
  const TensorType& weight = graph.type(node.inputs.at(1));
  const double per_output = double(weight.numel()) / double(std::max<int64_t>(1, weight.shape.at(0)));
  return 2.0 * double(numel(graph, node.outputs.at(0))) * per_output;
}

// Each input element scatters into C_out / groups * kernel outputs; the
// weight is [C_in, C_out / groups, kernel...].
double conv_transpose_flops(const Graph& graph, const Node& node) {
  const TensorType& weight = graph.type(node.inputs.at(1));
  const double per_input = double(weight.numel()) / double(std::max<int64_t>(1, weight.shape.at(0)));
  return 2.0 * double(numel(graph, node.inputs.at(0))) * per_input;
}

// batch * M * N outputs (broadcast batch included) each summing K products.
double matmul_flops(const Graph& graph, const Node& node) {
  const Shape& a = graph.type(node.inputs.at(0)).shape;
  const double k = a.empty() ? 1.0 : double(a.back());
  return 2.0 * double(numel(graph, node.outputs.at(0))) * k;
}

double gemm_flops(const Graph& graph, const Node& node) {
  const Shape& a = graph.type(node.inputs.at(0)).shape;
  const bool trans_a = node.attrs.get_int("transA", 0) != 0;
  const double k = a.size() == 2 ? double(trans_a ? a[0] : a[1]) : 1.0;
  return 2.0 * double(numel(graph, node.outputs.at(0))) * k;
}

bool is_reduction(const std::string& op) {
  return op.rfind("Reduce", 0) == 0 || op == "ArgMax" || op == "ArgMin" || op == "CumSum";
}

// About one operation per element: reductions touch each input element,
// elementwise and layout primitives each output element.
double memory_bound_flops(const Graph& graph, const Node& node) {
  if (is_reduction(node.op) && !node.inputs.empty()) return double(numel(graph, node.inputs[0]));
  double elements = 0;
  for (ValueId id : node.outputs) elements += double(numel(graph, id));
  return elements;
}

// G2BMM and GBMM: Bt * M * (2W + 1) * K multiply-adds, whichever of the
// band and K is the output's last dimension (the other is A's). Taps whose
// B row falls outside [0, N) are counted too.
double banded_flops(const Graph& graph, const Node& node) {
  const Shape& a = graph.type(node.inputs.at(0)).shape;
  return 2.0 * double(numel(graph, node.outputs.at(0))) * (a.empty() ? 1.0 : double(a.back()));
}

double node_flops(const Graph& graph, const Node& node) {
  if (reference::is_banded_op(node)) return banded_flops(graph, node);
  if (node.op == "Conv") return conv_flops(graph, node);
  if (node.op == "ConvTranspose") return conv_transpose_flops(graph, node);
  if (node.op == "MatMul") return matmul_flops(graph, node);
  if (node.op == "Gemm") return gemm_flops(graph, node);
  return memory_bound_flops(graph, node);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace

KernelWork kernel_work(const Graph& graph, const runtime::KernelGroup& group) {
  KernelWork work;
  for (size_t index : group.nodes) work.flops += node_flops(graph, graph.nodes().at(index));
  // Inputs (weights included) are read once and outputs written once;
  // values inside the group stay in registers or cache.
  std::set<ValueId> moved(group.inputs.begin(), group.inputs.end());
  moved.insert(group.outputs.begin(), group.outputs.end());
  moved.erase(kNoValue);
  for (ValueId id : moved) work.bytes += value_bytes(graph, id);
  return work;
}

RooflineBound roofline_bound(const KernelWork& work, const MachinePeaks& peaks) {
  const double compute = work.flops / peaks.flops_per_second, memory = work.bytes / peaks.bytes_per_second;
  return {std::max(compute, memory), memory >= compute};
}

ProgramWork program_work(const runtime::Program& program) {
  const Graph& graph = program.graph;
  std::set<size_t> computed;
  for (const runtime::KernelGroup& group : program.kernels) computed.insert(group.nodes.begin(), group.nodes.end());
  ProgramWork work;
  std::set<ValueId> moved(graph.inputs().begin(), graph.inputs().end());
  moved.insert(graph.outputs().begin(), graph.outputs().end());
  for (size_t index : computed) {
    const Node& node = graph.nodes().at(index);
    const double flops = node_flops(graph, node);
    work.flops += flops;
    if (fission::primitive_kind(node, graph) == fission::PrimitiveKind::Linear) work.linear_flops += flops;
    for (ValueId id : node.inputs) {
      if (id != kNoValue && graph.value(id).is_constant()) moved.insert(id);
    }
  }
  for (ValueId id : moved) work.min_bytes += value_bytes(graph, id);
  return work;
}

AnalyticalModel::AnalyticalModel(MachinePeaks peaks) : peaks_(peaks) {
  ORCHID_CHECK(peaks_.flops_per_second > 0 && peaks_.bytes_per_second > 0)
      << "machine peaks must be positive, got " << peaks_.flops_per_second << " flop/s and " << peaks_.bytes_per_second
      << " B/s";
}

double AnalyticalModel::raw_estimate(const Graph& graph, const runtime::KernelGroup& group) const {
  return roofline_bound(kernel_work(graph, group), peaks_).seconds + kKernelOverheadSeconds;
}

double AnalyticalModel::estimate(const Graph& graph, const runtime::KernelGroup& group, KernelClass kind) const {
  return raw_estimate(graph, group) * scale(kind);
}

void AnalyticalModel::calibrate(const std::vector<CostRecord>& records) {
  constexpr size_t kMinRecords = 3;  // fewer say more about noise than about the class
  std::map<KernelClass, std::vector<double>> ratios;
  for (const CostRecord& record : records) {
    if (record.estimate > 0 && record.seconds > 0) ratios[record.kind].push_back(record.seconds / record.estimate);
  }
  scale_.clear();
  for (auto& [kind, values] : ratios) {
    if (values.size() >= kMinRecords) scale_[kind] = median(std::move(values));
  }
}

double AnalyticalModel::scale(KernelClass kind) const {
  auto it = scale_.find(kind);
  return it == scale_.end() ? 1.0 : it->second;
}

}  // namespace orchid::cost
