// The elementwise kernel template shared by the unary, binary, Where and Cast
// factories: out[i] = f(in_0[..], ..., in_{N-1}[..]) over a BroadcastPlan,
// cut into chunks for the thread pool.
//
// The innermost loop is instantiated for each combination of "walks the run"
// / "repeats one element" per input, so the compiler sees unit strides or a
// loop-invariant scalar and vectorizes the loop (-O3 -march=native); f must
// be an inline, branch-light function for that to happen.
#pragma once

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/kernels/cpu/elementwise_plan.h"
#include "support/parallel.h"

namespace orchid::runtime::cpu {

// What the elementwise factories need to know about the group's node.
struct ElementwiseNode {
  const Graph& graph;
  const Node& node;
  std::vector<TensorType> input_types;  // per node input
  TensorType output_type;
  std::vector<size_t> arg_index;  // per node input: its index in KernelArgs::inputs
  bool has_output = true;         // false when nothing outside reads the result

  // The constant value of node input i, or nullptr.
  const Tensor* constant(size_t i) const;
};

// The factories of the elementwise family; each returns nullptr for an
// operator or dtype it does not handle.
std::unique_ptr<Kernel> make_unary_kernel(const ElementwiseNode& node);
std::unique_ptr<Kernel> make_binary_kernel(const ElementwiseNode& node);
std::unique_ptr<Kernel> make_pow_kernel(const ElementwiseNode& node);
std::unique_ptr<Kernel> make_where_kernel(const ElementwiseNode& node);
std::unique_ptr<Kernel> make_cast_kernel(const ElementwiseNode& node);

// Output elements per parallel chunk: below this a thread costs more than it
// saves.
inline constexpr int64_t kElementwiseGrain = 16384;

// Operand j of a contiguous run: a unit-stride pointer, or the one element it
// repeats, read once per run so it stays in a register.
template <bool Contiguous, typename T>
struct Operand {
  const T* p;
  T operator[](int64_t i) const { return p[i]; }
};
template <typename T>
struct Operand<false, T> {
  T value;
  explicit Operand(const T* p) : value(*p) {}
  T operator[](int64_t) const { return value; }
};

template <typename Out, typename F, typename... In>
class MapKernel final : public Kernel {
 public:
  static constexpr size_t N = sizeof...(In);
  using Inputs = std::tuple<const In*...>;

  MapKernel(const ElementwiseNode& node, F f) : arg_index_(node.arg_index), has_output_(node.has_output), f_(f) {
    std::vector<Shape> shapes;
    for (const TensorType& type : node.input_types) shapes.push_back(type.shape);
    plan_ = make_broadcast_plan(node.output_type.shape, shapes);
  }

  void run(const KernelArgs& args) override {
    if (!has_output_ || plan_.numel == 0) return;
    Inputs in = inputs(args, std::index_sequence_for<In...>{});
    Out* out = static_cast<Out*>(args.outputs[0]);
    parallel_for(plan_.numel, kElementwiseGrain,
                 [&](int64_t begin, int64_t end) { dispatch<>(out, in, begin, end); });
  }

  std::string implementation() const override { return "elementwise"; }

 private:
  template <size_t... I>
  Inputs inputs(const KernelArgs& args, std::index_sequence<I...>) const {
    return Inputs{static_cast<const In*>(args.inputs[arg_index_[I]])...};
  }

  // Picks the instantiation of the inner loop for the plan's contiguity, one
  // input at a time.
  template <bool... Contiguous>
  void dispatch(Out* out, const Inputs& in, int64_t begin, int64_t end) const {
    constexpr size_t j = sizeof...(Contiguous);
    if constexpr (j == N) {
      runs<Contiguous...>(out, in, begin, end, std::index_sequence_for<In...>{});
    } else if (plan_.contiguous_mask >> j & 1u) {
      dispatch<Contiguous..., true>(out, in, begin, end);
    } else {
      dispatch<Contiguous..., false>(out, in, begin, end);
    }
  }

  template <bool... Contiguous, size_t... I>
  void runs(Out* out, const Inputs& in, int64_t begin, int64_t end, std::index_sequence<I...>) const {
    const F f = f_;
    for_each_run<N>(plan_, begin, end, [&](int64_t o, const std::array<int64_t, N>& offsets, int64_t n) {
      inner_loop(out + o, n, f, Operand<Contiguous, In>{std::get<I>(in) + offsets[I]}...);
    });
  }

  template <typename... Operands>
  static void inner_loop(Out* __restrict out, int64_t n, const F& f, Operands... operands) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(operands[i]...);
  }

  BroadcastPlan plan_;
  std::vector<size_t> arg_index_;
  bool has_output_;
  F f_;
};

// A MapKernel computing f over the node's inputs of storage types In....
template <typename Out, typename... In, typename F>
std::unique_ptr<Kernel> make_map_kernel(const ElementwiseNode& node, F f) {
  return std::make_unique<MapKernel<Out, F, In...>>(node, f);
}

}  // namespace orchid::runtime::cpu
