// Reduce kernels: ReduceSum/Max/Min/Prod over constant axes, plus the
// single-axis ArgMax/ArgMin and CumSum (reduce_axis.cc).
//
// A ReduceX is planned once: size-1 axes are dropped and adjacent axes that
// are both kept or both reduced are merged, so the input becomes rows of
// `inner` contiguous kept elements, each row the reduction of the elements at
// outer[o] + reduced[r]. The common cases (softmax or layernorm over the last
// axis, global pooling over H, W) end with one contiguous reduced run: inner
// == 1 and a dense row, reduced with independent lane accumulators that the
// compiler vectorizes without reassociating. Semantics follow
// reference/ops/reduce.cc: floats sum and multiply in double, Max/Min
// propagate NaN, integers wrap around in their own width.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "reference/ops/op_utils.h"
#include "runtime/kernels/cpu/reduce_axis.h"
#include "runtime/kernels/cpu/registry.h"
#include "support/error.h"
#include "support/parallel.h"

namespace orchid::runtime::cpu {

namespace {

constexpr int64_t kBlock = 256;             // inner elements whose accumulators live on the stack
constexpr int64_t kLanes = 64;              // independent accumulators of a dense row
constexpr int64_t kElementsPerTask = 32768;  // input elements worth a thread

// ------------------------------------------------------------ accumulators
// Floats accumulate in double; integers in the unsigned type of their width,
// which wraps like the interpreter's modulo-2^64 arithmetic once narrowed.

template <typename T>
struct SumOp {
  using Acc = WideAcc<T>;
  static Acc init() { return Acc(0); }
  static Acc step(Acc a, T v) { return a + Acc(v); }
  static Acc combine(Acc a, Acc b) { return a + b; }
  static T finish(Acc a) { return T(a); }
};

template <typename T>
struct ProdOp {
  using Acc = WideAcc<T>;
  static Acc init() { return Acc(1); }
  static Acc step(Acc a, T v) { return a * Acc(v); }
  static Acc combine(Acc a, Acc b) { return a * b; }
  static T finish(Acc a) { return T(a); }
};

// Max (kMax) or Min in the element type. A NaN, once taken, stays: no
// comparison with it is true. The bitwise | keeps the select branch-free.
template <typename T, bool kMax>
struct ExtremeOp {
  using Acc = T;
  static Acc init() {
    if constexpr (std::is_floating_point_v<T>) {
      return kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    } else {
      return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
  }
  static Acc step(Acc a, T v) {
    bool take = kMax ? v > a : v < a;
    if constexpr (std::is_floating_point_v<T>) take = take | (v != v);
    return take ? v : a;
  }
  static Acc combine(Acc a, Acc b) { return step(a, b); }
  static T finish(Acc a) { return a; }
};

// ------------------------------------------------------------ plan
struct ReducePlan {
  std::vector<int64_t> outer;    // input offset of each row of outputs
  std::vector<int64_t> reduced;  // offsets, relative to a row, of the elements that reduce together
  int64_t inner = 1;             // contiguous kept elements (and outputs) per row
  bool dense = false;            // inner == 1 and reduced[r] == r: one contiguous run
};

struct Run {
  int64_t size;
  bool reduced;
  int64_t stride = 0;
};

// The flat offsets of every index over the runs with reduced == `which`.
std::vector<int64_t> offsets_over(const std::vector<Run>& runs, bool which) {
  std::vector<int64_t> offsets = {0};
  for (const Run& run : runs) {
    if (run.reduced != which) continue;
    std::vector<int64_t> next;
    next.reserve(offsets.size() * size_t(run.size));
    for (int64_t base : offsets) {
      for (int64_t i = 0; i < run.size; ++i) next.push_back(base + i * run.stride);
    }
    offsets = std::move(next);
  }
  return offsets;
}

ReducePlan plan_reduce(const Shape& shape, const std::vector<bool>& mask) {
  std::vector<Run> runs;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!runs.empty() && runs.back().reduced == mask[d]) {
      runs.back().size *= shape[d];
    } else {
      runs.push_back({shape[d], mask[d]});
    }
  }
  int64_t stride = 1;
  for (size_t i = runs.size(); i-- > 0;) {
    runs[i].stride = stride;
    stride *= runs[i].size;
  }
  ReducePlan plan;
  if (!runs.empty() && !runs.back().reduced) {
    plan.inner = runs.back().size;
    runs.pop_back();
  }
  plan.outer = offsets_over(runs, false);
  plan.reduced = offsets_over(runs, true);
  plan.dense = plan.inner == 1;
  for (size_t r = 0; plan.dense && r < plan.reduced.size(); ++r) plan.dense = plan.reduced[r] == int64_t(r);
  return plan;
}

// ------------------------------------------------------------ loops
// One output from `n` elements, at x[r] (dense) or x[reduced[r]]: kLanes
// independent accumulators, then a pairwise combine. The lane loops have a
// run-time trip count, which GCC vectorizes (a fixed 16 it unrolls into
// scalar code instead), and need no reassociation of the element order.
template <typename Op, bool kDense, typename T>
T reduce_row(const T* x, const int64_t* reduced, int64_t n) {
  using Acc = typename Op::Acc;
  Acc lane[kLanes];
  for (int64_t j = 0; j < kLanes; ++j) lane[j] = Op::init();
  for (int64_t r = 0; r < n; r += kLanes) {
    int64_t m = std::min(kLanes, n - r);
    if constexpr (kDense) {
      const T* src = x + r;
      for (int64_t j = 0; j < m; ++j) lane[j] = Op::step(lane[j], src[j]);
    } else {
      const int64_t* offsets = reduced + r;
      for (int64_t j = 0; j < m; ++j) lane[j] = Op::step(lane[j], x[offsets[j]]);
    }
  }
  for (int64_t width = kLanes / 2; width >= 1; width /= 2) {
    for (int64_t j = 0; j < width; ++j) lane[j] = Op::combine(lane[j], lane[j + width]);
  }
  return Op::finish(lane[0]);
}

// Rows of one output each.
template <typename Op, typename T>
void reduce_single(const ReducePlan& p, const T* x, T* y) {
  int64_t n = int64_t(p.reduced.size());
  parallel_for(int64_t(p.outer.size()), std::max<int64_t>(1, kElementsPerTask / std::max<int64_t>(n, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t o = begin; o < end; ++o) {
                   const T* row = x + p.outer[size_t(o)];
                   y[o] = p.dense ? reduce_row<Op, true>(row, nullptr, n)
                                  : reduce_row<Op, false>(row, p.reduced.data(), n);
                 }
               });
}

// Rows of `inner` outputs: each block of kBlock outputs accumulates over the
// reduced elements, reading kBlock contiguous inputs at a time.
template <typename Op, typename T>
void reduce_blocks(const ReducePlan& p, const T* x, T* y) {
  using Acc = typename Op::Acc;
  int64_t blocks = (p.inner + kBlock - 1) / kBlock;
  int64_t n = int64_t(p.reduced.size());
  int64_t grain = std::max<int64_t>(1, kElementsPerTask / std::max<int64_t>(1, n * std::min(p.inner, kBlock)));
  parallel_for(int64_t(p.outer.size()) * blocks, grain, [&](int64_t begin, int64_t end) {
    Acc acc[kBlock];
    for (int64_t t = begin; t < end; ++t) {
      int64_t o = t / blocks, i0 = (t % blocks) * kBlock, m = std::min(kBlock, p.inner - i0);
      std::fill_n(acc, m, Op::init());
      for (int64_t r = 0; r < n; ++r) {
        const T* src = x + p.outer[size_t(o)] + p.reduced[size_t(r)] + i0;
        for (int64_t i = 0; i < m; ++i) acc[i] = Op::step(acc[i], src[i]);
      }
      T* dst = y + o * p.inner + i0;
      for (int64_t i = 0; i < m; ++i) dst[i] = Op::finish(acc[i]);
    }
  });
}

template <typename Op, typename T>
void reduce_typed(const ReducePlan& p, const void* x, void* y) {
  const T* in = static_cast<const T*>(x);
  T* out = static_cast<T*>(y);
  if (p.inner == 1) {
    reduce_single<Op>(p, in, out);
  } else {
    reduce_blocks<Op>(p, in, out);
  }
}

enum class ReduceKind { Sum, Prod, Max, Min };

template <typename T>
void reduce_kind(ReduceKind kind, const ReducePlan& p, const void* x, void* y) {
  switch (kind) {
    case ReduceKind::Sum: return reduce_typed<SumOp<T>, T>(p, x, y);
    case ReduceKind::Prod: return reduce_typed<ProdOp<T>, T>(p, x, y);
    case ReduceKind::Max: return reduce_typed<ExtremeOp<T, true>, T>(p, x, y);
    case ReduceKind::Min: return reduce_typed<ExtremeOp<T, false>, T>(p, x, y);
  }
}

class ReduceKernel : public Kernel {
 public:
  ReduceKernel(std::string op, ReduceKind kind, DType dtype, ReducePlan plan, int64_t out_numel)
      : op_(std::move(op)), kind_(kind), dtype_(dtype), plan_(std::move(plan)), out_numel_(out_numel) {}

  void run(const KernelArgs& args) override {
    if (out_numel_ == 0) return;
    const void* x = args.inputs[0];
    void* y = args.outputs[0];
    switch (dtype_) {
      case DType::Float32: return reduce_kind<float>(kind_, plan_, x, y);
      case DType::Float64: return reduce_kind<double>(kind_, plan_, x, y);
      case DType::Int32: return reduce_kind<int32_t>(kind_, plan_, x, y);
      case DType::Int64: return reduce_kind<int64_t>(kind_, plan_, x, y);
      default: ORCHID_CHECK(false) << op_ << " kernel made for " << dtype_name(dtype_);
    }
  }

  std::string implementation() const override { return "reduce " + op_; }

 private:
  std::string op_;
  ReduceKind kind_;
  DType dtype_;
  ReducePlan plan_;
  int64_t out_numel_;
};

std::optional<ReduceKind> reduce_kind_of(const std::string& op) {
  if (op == "ReduceSum") return ReduceKind::Sum;
  if (op == "ReduceProd") return ReduceKind::Prod;
  if (op == "ReduceMax") return ReduceKind::Max;
  if (op == "ReduceMin") return ReduceKind::Min;
  return std::nullopt;
}

// ReduceX with a non-empty constant axes input (the primitive form; fission
// spells out "reduce all" and noop_with_empty_axes).
std::unique_ptr<Kernel> make_reducex_kernel(const Graph& graph, const KernelGroup& group, const Node& node,
                                            ReduceKind kind) {
  const TensorType& x = graph.type(node.inputs[0]);
  if (x.dtype != DType::Float32 && x.dtype != DType::Float64 && x.dtype != DType::Int32 && x.dtype != DType::Int64) {
    return nullptr;
  }
  if (node.inputs.size() != 2 || node.inputs[1] == kNoValue || group.inputs[0] != node.inputs[0]) return nullptr;
  const Value& axes_value = graph.value(node.inputs[1]);
  if (!axes_value.is_constant() || axes_value.constant->numel() == 0 || node.inputs[1] == node.inputs[0]) {
    return nullptr;
  }
  std::vector<bool> mask(x.rank(), false);
  for (int64_t axis : reference::normalize_axes(axes_value.constant->to_i64_vector(), int64_t(x.rank()))) {
    if (mask[size_t(axis)]) return nullptr;  // the interpreter reports the repeated axis
    mask[size_t(axis)] = true;
  }
  return std::make_unique<ReduceKernel>(node.op, kind, x.dtype, plan_reduce(x.shape, mask),
                                        graph.type(node.outputs[0]).numel());
}

}  // namespace

std::unique_ptr<Kernel> make_reduce_kernel(const Graph& graph, const KernelGroup& group) {
  if (group.nodes.size() != 1 || group.outputs.size() != 1) return nullptr;
  const Node& node = graph.nodes()[group.nodes[0]];
  if (!node.domain.empty() || node.outputs.size() != 1 || group.outputs[0] != node.outputs[0]) return nullptr;
  if (node.inputs.empty() || node.inputs[0] == kNoValue || group.inputs.empty()) return nullptr;
  if (group.inputs[0] != node.inputs[0]) return nullptr;
  if (std::optional<ReduceKind> kind = reduce_kind_of(node.op)) return make_reducex_kernel(graph, group, node, *kind);
  if (node.op == "ArgMax" || node.op == "ArgMin") return make_arg_kernel(graph, group, node);
  if (node.op == "CumSum") return make_cumsum_kernel(graph, group, node);
  return nullptr;
}

}  // namespace orchid::runtime::cpu
