// Helpers shared by the linear (linear.cc) and pooling (pool.cc) reference
// operators: dtype checks and accumulator conversions, the sliding-window
// geometry of Conv / ConvTranspose / the pools (pads, auto_pad, output
// sizes), and the Conv and ConvTranspose loop nests.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <type_traits>
#include <utility>
#include <vector>

#include "ir/element_convert.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace orchid::reference {

// ---------------------------------------------------------------------------
// Element types
// ---------------------------------------------------------------------------

template <typename T>
inline constexpr bool kIsFloatType =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// The accumulator of dot products and sums over T: double for every float
// type (the oracle may be more precise than the models it checks), uint64_t
// for integers, whose wrap-around arithmetic is exactly the modular
// arithmetic of any narrower integer type once the result is truncated.
template <typename T>
using AccOf = std::conditional_t<kIsFloatType<T>, double, uint64_t>;

// Value conversions between element types (no undefined behaviour).
template <typename To, typename From>
inline To convert_value(From v) {
  return convert_element<To>(v);
}

// The elements of a tensor of any dtype converted to Acc.
template <typename Acc>
std::vector<Acc> to_acc(const Tensor& tensor) {
  std::vector<Acc> out(size_t(tensor.numel()));
  ORCHID_DISPATCH(tensor.dtype(), T, {
    const T* p = tensor.data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = convert_value<Acc>(p[i]);
  });
  return out;
}

// A tensor of the given type holding `values` converted to its dtype.
template <typename Acc>
Tensor from_acc(const std::vector<Acc>& values, const TensorType& type) {
  Tensor out(type);
  ORCHID_DISPATCH(type.dtype, T, {
    T* p = out.data<T>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = convert_value<T>(values[i]);
  });
  return out;
}

// orchid::Error unless `dtype` is one of `allowed`:
// "expected float32, float64, float16 or bfloat16 for input 0 (X), got int64".
void check_dtype(DType dtype, std::initializer_list<DType> allowed, size_t index, const char* name);
inline constexpr std::initializer_list<DType> kFloatTypes = {DType::Float32, DType::Float64,
                                                             DType::Float16, DType::BFloat16};

// ---------------------------------------------------------------------------
// Window geometry
// ---------------------------------------------------------------------------

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };
AutoPad parse_auto_pad(const Attributes& attrs);

// The geometry of a sliding window over the spatial dimensions: input
// position = output position * stride + kernel tap * dilation - pad_begin.
struct WindowGeometry {
  Shape in, out, kernel, strides, dilations, pad_begin, pad_end;
  size_t rank() const { return in.size(); }
};

// Conv and the pools: reads strides, dilations, pads and auto_pad (explicit
// pads are ignored unless auto_pad is NOTSET). ceil_mode is the pools'
// attribute; a window that would start in the end padding is dropped, as in
// the ONNX spec and PyTorch.
WindowGeometry window_geometry(const Attributes& attrs, const Shape& in_spatial,
                               const Shape& kernel, bool ceil_mode);

// ConvTranspose: output size and pads from output_shape, output_padding, pads
// and auto_pad, following the ONNX spec's formulas (pads may come out
// negative when output_shape asks for more than the natural size).
WindowGeometry conv_transpose_geometry(const Attributes& attrs, const Shape& in_spatial,
                                       const Shape& kernel);

// The kernel shape: the attribute when present (checked against the weight's
// spatial shape when that is given), else the weight's spatial shape.
Shape kernel_shape_attr(const Attributes& attrs, const Shape& weight_spatial);

// A geometry padded at the front to exactly three spatial dimensions (extra
// dimensions have size 1), so that the loop nests are written once for 1-D,
// 2-D and 3-D. orchid::Error for more than three spatial dimensions.
struct Window3 {
  int64_t in[3], out[3], k[3], s[3], d[3], p[3];  // p: pad_begin
  int64_t p_end[3];
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
};
Window3 to_window3(const WindowGeometry& geometry);

// The positions p in [0, count) with 0 <= p * stride + offset < limit, as a
// half-open range [first, second); empty ranges have first == second.
std::pair<int64_t, int64_t> valid_range(int64_t count, int64_t limit, int64_t stride,
                                        int64_t offset);

// Floor division for possibly negative numerators (positive divisor).
inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// ---------------------------------------------------------------------------
// Conv / ConvTranspose loop nests over accumulator arrays
// ---------------------------------------------------------------------------

struct ConvProblem {
  int64_t batch = 1;
  int64_t in_channels = 1;   // C
  int64_t out_channels = 1;  // M
  int64_t groups = 1;
  Window3 window{};
};

// Conv: x [N, C, in...], w [M, C/groups, k...], bias [M] or nullptr;
// y [N, M, out...] is overwritten.
template <typename Acc>
void conv_forward(const ConvProblem& problem, const Acc* x, const Acc* w, const Acc* bias, Acc* y);

// ConvTranspose: x [N, C, in...], w [C, M/groups, k...], bias [M] or nullptr;
// y [N, M, out...] is overwritten. The window maps input positions to output
// positions: out = in * stride + tap * dilation - pad_begin.
template <typename Acc>
void conv_transpose_forward(const ConvProblem& problem, const Acc* x, const Acc* w,
                            const Acc* bias, Acc* y);

}  // namespace orchid::reference
