// Single-axis reduce-family kernels (ArgMax/ArgMin, CumSum), made by
// make_reduce_kernel (reduce.cc) for the nodes it recognizes. A single axis
// splits the input into [outer, axis, inner], always a strided-free form.
#pragma once

#include <memory>
#include <type_traits>

#include "runtime/kernel.h"

namespace orchid::runtime::cpu {

// The accumulator of sums over T, as the interpreter's: double for floats;
// for integers the unsigned type of their width, which wraps like the
// interpreter's modulo-2^64 arithmetic once narrowed back.
template <typename T, bool = std::is_floating_point_v<T>>
struct Wide {
  using type = double;
};
template <typename T>
struct Wide<T, false> {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
using WideAcc = typename Wide<T>::type;

// A shape seen as [outer, axis, inner] around one axis.
struct AxisSplit {
  int64_t outer = 1;
  int64_t axis = 1;
  int64_t inner = 1;
};
AxisSplit split_at_axis(const Shape& shape, size_t axis);

// ArgMax/ArgMin over float32/float64/int32/int64 data; nullptr otherwise.
std::unique_ptr<Kernel> make_arg_kernel(const Graph& graph, const KernelGroup& group, const Node& node);
// CumSum with a constant axis over float32/float64/int32/int64; nullptr otherwise.
std::unique_ptr<Kernel> make_cumsum_kernel(const Graph& graph, const KernelGroup& group, const Node& node);

}  // namespace orchid::runtime::cpu
