// Linear quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
// QLinearMatMul, QLinearConv. (MatMulInteger and ConvInteger are in
// linear.cc.)
//
// QuantizeLinear (opset 13..21 semantics, integer outputs only):
//   y = saturate(round_half_even(x / y_scale) + y_zero_point)
// in float32 arithmetic like onnxruntime, with the output dtype of
// y_zero_point (uint8 when it is omitted; opset 21's `output_dtype` attribute
// is honoured when there is no zero point). DequantizeLinear:
//   y = (x - x_zero_point) * x_scale, output dtype = x_scale's dtype.
// The scale (and zero point) is per tensor (one element), per axis (1-D, the
// length of x's dimension `axis`, default 1), or blocked (opset 21: x's rank,
// dimension `axis` is ceil(dim / block_size)).
//
// QLinearMatMul / QLinearConv subtract the zero points, run the float64
// MatMul / Conv of the registry on the (exactly representable) integer values,
// then requantize: y = saturate(round_half_even(acc * (a_scale * b_scale /
// y_scale)) + y_zero_point) with the multiplier computed in float32.
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/ops/extra_utils.h"
#include "reference/ops/op_utils.h"
#include "reference/ops/ops.h"

namespace orchid::reference {
namespace {

using extra::f64;

bool is_quantized_type(DType d) {
  return d == DType::Int8 || d == DType::UInt8 || d == DType::Int16 || d == DType::UInt16 || d == DType::Int32;
}

std::pair<double, double> type_range(DType d) {
  switch (d) {
    case DType::Int8: return {-128, 127};
    case DType::UInt8: return {0, 255};
    case DType::Int16: return {-32768, 32767};
    case DType::UInt16: return {0, 65535};
    case DType::Int32: return {double(std::numeric_limits<int32_t>::min()), double(std::numeric_limits<int32_t>::max())};
    default: ORCHID_FAIL() << "unsupported quantized type " << dtype_name(d);
  }
}

double saturate(double v, DType d) {
  auto [lo, hi] = type_range(d);
  return std::clamp(v, lo, hi);
}

// Maps each element of x to the element of a scale/zero-point tensor.
class ParamIndex {
 public:
  ParamIndex(const Shape& x_shape, const Shape& param_shape, int64_t axis_attr, int64_t block_size)
      : x_shape_(x_shape), param_shape_(param_shape), block_(block_size) {
    int64_t n = shape_numel(param_shape);
    if (param_shape.empty() || (param_shape.size() == 1 && n == 1 && block_size <= 0)) {
      kind_ = Kind::Tensor;
      return;
    }
    axis_ = normalize_axis(axis_attr, int64_t(x_shape.size()));
    if (block_size > 0) {
      kind_ = Kind::Blocked;
      Shape expected = x_shape;
      expected[size_t(axis_)] = (x_shape[size_t(axis_)] + block_size - 1) / block_size;
      if (param_shape != expected) {
        ORCHID_FAIL() << "a blocked scale/zero point (block_size " << block_size << ") must have shape "
                      << shape_to_string(expected) << ", got " << shape_to_string(param_shape);
      }
      return;
    }
    if (param_shape.size() != 1 || param_shape[0] != x_shape[size_t(axis_)]) {
      ORCHID_FAIL() << "a per-axis scale/zero point must have shape [" << x_shape[size_t(axis_)] << "] (dimension "
                    << axis_ << " of the input), got " << shape_to_string(param_shape);
    }
    kind_ = Kind::Axis;
    stride_ = 1;
    for (size_t i = size_t(axis_) + 1; i < x_shape.size(); ++i) stride_ *= x_shape[i];
  }

  int64_t operator()(int64_t flat) const {
    switch (kind_) {
      case Kind::Tensor: return 0;
      case Kind::Axis: return (flat / stride_) % x_shape_[size_t(axis_)];
      case Kind::Blocked: {
        int64_t out = 0, rem = flat, mult = 1;
        for (size_t d = x_shape_.size(); d-- > 0;) {
          int64_t i = rem % x_shape_[d];
          rem /= x_shape_[d];
          if (int64_t(d) == axis_) i /= block_;
          out += i * mult;
          mult *= param_shape_[d];
        }
        return out;
      }
    }
    return 0;
  }

 private:
  enum class Kind { Tensor, Axis, Blocked };
  Kind kind_ = Kind::Tensor;
  Shape x_shape_, param_shape_;
  int64_t block_ = 0;
  int64_t axis_ = 0;
  int64_t stride_ = 1;
};

void check_zero_point(const InferContext& ctx, size_t scale, size_t zp) {
  if (!ctx.has_input(zp)) return;
  if (ctx.input(zp).shape != ctx.input(scale).shape) {
    ORCHID_FAIL() << "input " << zp << " (zero point) must have the shape of input " << scale << " (scale), "
                  << shape_to_string(ctx.input(scale).shape) << ", got " << shape_to_string(ctx.input(zp).shape);
  }
}

// Division in float32 unless an operand is float64 (onnxruntime divides in
// float); then round half to even.
double quantize_value(double x, double scale, bool in_double) {
  double q = in_double ? x / scale : double(float(x) / float(scale));
  return std::nearbyint(q);
}

// ---- QuantizeLinear / DequantizeLinear -----------------------------------------

OpSchema quantize_schema() {
  OpSchema s;
  s.op = "QuantizeLinear";
  s.min_inputs = 2;
  s.max_inputs = 3;
  s.infer = [](const InferContext& ctx) {
    const TensorType& x = ctx.input(0);
    if (!is_float(x.dtype) && x.dtype != DType::Int32) {
      ORCHID_FAIL() << "expected a float or int32 tensor for input 0 (x), got " << dtype_name(x.dtype);
    }
    require_dtype(ctx.input(1).dtype, TypeClass::Float, 1, "y_scale");
    check_zero_point(ctx, 1, 2);
    DType out = DType::UInt8;
    if (ctx.has_input(2)) {
      out = ctx.input(2).dtype;
    } else if (ctx.attrs().has("output_dtype") && ctx.attrs().get_int("output_dtype", 0) != 0) {
      int code = int(ctx.attrs().get_int("output_dtype", 0));
      if (!dtype_from_onnx(code, &out)) ORCHID_FAIL() << "unsupported output_dtype " << onnx_dtype_name(code);
    }
    if (!is_quantized_type(out)) {
      ORCHID_FAIL() << "unsupported quantized type " << dtype_name(out)
                    << " (supported: int8, uint8, int16, uint16, int32)";
    }
    ParamIndex(x.shape, ctx.input(1).shape, ctx.attrs().get_int("axis", 1), ctx.attrs().get_int("block_size", 0));
    return one(out, x.shape);
  };
  s.eval = [](const EvalContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    DType out_type = ctx.output_types[0].dtype;
    ParamIndex index(x.shape(), scale.shape(), ctx.attrs().get_int("axis", 1), ctx.attrs().get_int("block_size", 0));
    bool in_double = x.dtype() == DType::Float64 || scale.dtype() == DType::Float64;
    std::vector<double> xv = f64(x), sv = f64(scale);
    std::vector<double> zp = ctx.has_input(2) ? f64(ctx.input(2)) : std::vector<double>(sv.size(), 0.0);
    std::vector<double> y(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) {
      size_t p = size_t(index(int64_t(i)));
      y[i] = saturate(quantize_value(xv[i], sv[p], in_double) + zp[p], out_type);
    }
    return std::vector<Tensor>{extra::make_tensor(ctx.output_types[0], y)};
  };
  return s;
}

OpSchema dequantize_schema() {
  OpSchema s;
  s.op = "DequantizeLinear";
  s.min_inputs = 2;
  s.max_inputs = 3;
  s.infer = [](const InferContext& ctx) {
    const TensorType& x = ctx.input(0);
    if (!is_quantized_type(x.dtype)) {
      ORCHID_FAIL() << "expected an int8, uint8, int16, uint16 or int32 tensor for input 0 (x), got "
                    << dtype_name(x.dtype);
    }
    require_dtype(ctx.input(1).dtype, TypeClass::Float, 1, "x_scale");
    check_zero_point(ctx, 1, 2);
    if (ctx.has_input(2) && ctx.input(2).dtype != x.dtype) {
      ORCHID_FAIL() << "input 2 (x_zero_point) must have the dtype of input 0, " << dtype_name(x.dtype) << ", got "
                    << dtype_name(ctx.input(2).dtype);
    }
    ParamIndex(x.shape, ctx.input(1).shape, ctx.attrs().get_int("axis", 1), ctx.attrs().get_int("block_size", 0));
    return one(ctx.input(1).dtype, x.shape);
  };
  s.eval = [](const EvalContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    ParamIndex index(x.shape(), scale.shape(), ctx.attrs().get_int("axis", 1), ctx.attrs().get_int("block_size", 0));
    std::vector<double> xv = f64(x), sv = f64(scale);
    std::vector<double> zp = ctx.has_input(2) ? f64(ctx.input(2)) : std::vector<double>(sv.size(), 0.0);
    std::vector<double> y(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) {
      size_t p = size_t(index(int64_t(i)));
      y[i] = (xv[i] - zp[p]) * sv[p];
    }
    return std::vector<Tensor>{extra::make_tensor(ctx.output_types[0], y)};
  };
  return s;
}

// DynamicQuantizeLinear(x float32) -> (y uint8, y_scale float32 scalar,
// y_zero_point uint8 scalar), in float32 arithmetic like the ONNX reference:
//   scale = (max(0, max x) - min(0, min x)) / 255
//   zero_point = saturate(round_half_even(0 - min(0, min x) / scale))
//   y = saturate(round_half_even(x / scale) + zero_point)
// An all-zero x (scale 0) gives scale 0, zero point 0 and y 0.
OpSchema dynamic_quantize_schema() {
  OpSchema s;
  s.op = "DynamicQuantizeLinear";
  s.min_inputs = 1;
  s.max_inputs = 1;
  s.infer = [](const InferContext& ctx) {
    const TensorType& x = ctx.input(0);
    if (x.dtype != DType::Float32) ORCHID_FAIL() << "expected a float32 tensor for input 0 (x), got " << dtype_name(x.dtype);
    return std::vector<TensorType>{{DType::UInt8, x.shape}, {DType::Float32, {}}, {DType::UInt8, {}}};
  };
  s.eval = [](const EvalContext& ctx) {
    const Tensor& x = ctx.input(0);
    const float* xv = x.data<float>();
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      lo = std::min(lo, xv[i]);
      hi = std::max(hi, xv[i]);
    }
    float scale = (hi - lo) / 255.0f;
    float zero_point = 0;
    if (scale != 0) zero_point = float(saturate(std::nearbyint(0.0f - lo / scale), DType::UInt8));
    Tensor y(ctx.output_types[0]);
    uint8_t* yv = y.data<uint8_t>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      yv[i] = scale == 0 ? uint8_t(0)
                         : uint8_t(saturate(std::nearbyint(xv[i] / scale) + zero_point, DType::UInt8));
    }
    Tensor scale_t(ctx.output_types[1]);
    scale_t.data<float>()[0] = scale;
    Tensor zp_t(ctx.output_types[2]);
    zp_t.data<uint8_t>()[0] = uint8_t(zero_point);
    return std::vector<Tensor>{y, scale_t, zp_t};
  };
  return s;
}

// ---- QLinearMatMul / QLinearConv ---------------------------------------------

// A float64 tensor of `values` minus the zero point, which is a scalar or
// varies along `axis` of `x` (per-row/column/channel).
Tensor centered(const Tensor& x, const Tensor* zero_point, int64_t axis) {
  std::vector<double> v = f64(x);
  if (zero_point) {
    std::vector<double> zp = f64(*zero_point);
    if (zp.size() == 1) {
      for (double& e : v) e -= zp[0];
    } else {
      ParamIndex index(x.shape(), {int64_t(zp.size())}, axis, 0);
      for (size_t i = 0; i < v.size(); ++i) v[i] -= zp[size_t(index(int64_t(i)))];
    }
  }
  return extra::make_tensor({DType::Float64, x.shape()}, v);
}

// Checks an 8-bit quantized input with its scale and zero point, which must be
// scalars or 1-D with `per_axis_length` elements (-1: scalars only).
void check_quantized_input(const InferContext& ctx, size_t i, const char* name, int64_t per_axis_length) {
  const TensorType& x = ctx.input(i);
  if (x.dtype != DType::Int8 && x.dtype != DType::UInt8) {
    ORCHID_FAIL() << "expected an int8 or uint8 tensor for input " << i << " (" << name << "), got "
                  << dtype_name(x.dtype);
  }
  require_dtype(ctx.input(i + 1).dtype, TypeClass::Float, i + 1, "scale");
  for (size_t p : {i + 1, i + 2}) {
    if (!ctx.has_input(p)) continue;
    const TensorType& t = ctx.input(p);
    int64_t n = t.numel();
    if (t.rank() > 1 || (n != 1 && n != per_axis_length)) {
      ORCHID_FAIL() << "input " << p << " (scale/zero point of " << name << ") must be a scalar"
                    << (per_axis_length > 0 ? " or have shape [" + std::to_string(per_axis_length) + "]" : "")
                    << ", got " << shape_to_string(t.shape);
    }
  }
  if (ctx.has_input(i + 2) && ctx.input(i + 2).dtype != x.dtype) {
    ORCHID_FAIL() << "input " << i + 2 << " (zero point of " << name << ") must have dtype " << dtype_name(x.dtype)
                  << ", got " << dtype_name(ctx.input(i + 2).dtype);
  }
}

// y_scale (input 6, float) and y_zero_point (input 7, int8/uint8): scalars.
// Returns the output dtype, that of y_zero_point.
DType check_output_params(const InferContext& ctx) {
  require_dtype(ctx.input(6).dtype, TypeClass::Float, 6, "y_scale");
  DType d = ctx.input(7).dtype;
  if (d != DType::Int8 && d != DType::UInt8) {
    ORCHID_FAIL() << "expected an int8 or uint8 tensor for input 7 (y_zero_point), got " << dtype_name(d);
  }
  for (size_t i : {size_t(6), size_t(7)}) {
    if (ctx.input(i).numel() != 1) {
      ORCHID_FAIL() << "input " << i << (i == 6 ? " (y_scale)" : " (y_zero_point)") << " must be a scalar, got shape "
                    << shape_to_string(ctx.input(i).shape);
    }
  }
  return d;
}

// y = saturate(round_half_even(acc * (a_scale * b_scale / y_scale)) + y_zp),
// the multiplier in float32; a scale with more than one element varies along
// its axis of acc (a_axis / b_axis).
Tensor requantize(const Tensor& acc, const Tensor& a_scale, int64_t a_axis, const Tensor& b_scale, int64_t b_axis,
                  const Tensor& y_scale, const Tensor& y_zp, const TensorType& out_type) {
  std::vector<double> v = f64(acc), as = f64(a_scale), bs = f64(b_scale);
  auto param_shape = [](const std::vector<double>& p) { return p.size() == 1 ? Shape{} : Shape{int64_t(p.size())}; };
  ParamIndex a_index(acc.shape(), param_shape(as), a_axis, 0);
  ParamIndex b_index(acc.shape(), param_shape(bs), b_axis, 0);
  float ys = float(y_scale.at_f64(0));
  double zp = y_zp.at_f64(0);
  for (size_t i = 0; i < v.size(); ++i) {
    float multiplier = float(as[size_t(a_index(int64_t(i)))]) * float(bs[size_t(b_index(int64_t(i)))]) / ys;
    v[i] = saturate(std::nearbyint(v[i] * double(multiplier)) + zp, out_type.dtype);
  }
  return extra::make_tensor(out_type, v);
}

Node inner_node(const Node& node, const char* op) {
  Node inner;
  inner.name = node.name;
  inner.op = op;
  inner.attrs = node.attrs;
  return inner;
}

// QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale,
// y_zero_point): per-tensor scales and zero points (a's may also be per row
// of a 2-D a, b's per column of a 2-D b, as onnxruntime allows).
OpSchema qlinear_matmul_schema() {
  OpSchema s;
  s.op = "QLinearMatMul";
  s.min_inputs = 8;
  s.max_inputs = 8;
  s.infer = [](const InferContext& ctx) {
    const TensorType& a = ctx.input(0);
    const TensorType& b = ctx.input(3);
    check_quantized_input(ctx, 0, "a", a.rank() == 2 ? a.shape[0] : -1);
    check_quantized_input(ctx, 3, "b", b.rank() == 2 ? b.shape[1] : -1);
    DType out = check_output_params(ctx);
    TensorType fa{DType::Float64, a.shape}, fb{DType::Float64, b.shape};
    std::vector<TensorType> mm = infer_node(inner_node(ctx.node(), "MatMul"), {&fa, &fb}, {nullptr, nullptr});
    return one(out, mm[0].shape);
  };
  s.eval = [](const EvalContext& ctx) {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    Tensor ca = centered(a, &ctx.input(2), -2);
    Tensor cb = centered(b, &ctx.input(5), -1);
    Tensor acc = evaluate_node(inner_node(ctx.node, "MatMul"), {&ca, &cb}).at(0);
    return std::vector<Tensor>{requantize(acc, ctx.input(1), -2, ctx.input(4), -1, ctx.input(6), ctx.input(7),
                                          ctx.output_types[0])};
  };
  return s;
}

// QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
// y_zero_point, B?): Conv attributes; w_scale and w_zero_point may be per
// output channel; B is int32 [M], added to the accumulator.
OpSchema qlinear_conv_schema() {
  OpSchema s;
  s.op = "QLinearConv";
  s.min_inputs = 8;
  s.max_inputs = 9;
  s.infer = [](const InferContext& ctx) {
    const TensorType& x = ctx.input(0);
    const TensorType& w = ctx.input(3);
    check_quantized_input(ctx, 0, "x", -1);
    check_quantized_input(ctx, 3, "w", w.rank() >= 1 ? w.shape[0] : -1);
    DType out = check_output_params(ctx);
    if (ctx.has_input(8)) {
      const TensorType& bias = ctx.input(8);
      if (bias.dtype != DType::Int32) ORCHID_FAIL() << "expected an int32 tensor for input 8 (B), got " << dtype_name(bias.dtype);
      if (w.rank() < 1 || bias.shape != Shape{w.shape[0]}) {
        ORCHID_FAIL() << "input 8 (B) must have shape [" << (w.rank() ? w.shape[0] : 0) << "], got "
                      << shape_to_string(bias.shape);
      }
    }
    TensorType fx{DType::Float64, x.shape}, fw{DType::Float64, w.shape};
    std::vector<TensorType> conv = infer_node(inner_node(ctx.node(), "Conv"), {&fx, &fw}, {nullptr, nullptr});
    return one(out, conv[0].shape);
  };
  s.eval = [](const EvalContext& ctx) {
    Tensor cx = centered(ctx.input(0), &ctx.input(2), 0);
    Tensor cw = centered(ctx.input(3), &ctx.input(5), 0);
    Tensor acc = evaluate_node(inner_node(ctx.node, "Conv"), {&cx, &cw}).at(0);
    if (ctx.has_input(8)) {
      std::vector<double> v = f64(acc), bias = f64(ctx.input(8));
      ParamIndex channel(acc.shape(), {int64_t(bias.size())}, 1, 0);
      for (size_t i = 0; i < v.size(); ++i) v[i] += bias[size_t(channel(int64_t(i)))];
      acc = extra::make_tensor(acc.type(), v);
    }
    return std::vector<Tensor>{
        requantize(acc, ctx.input(1), 1, ctx.input(4), 1, ctx.input(6), ctx.input(7), ctx.output_types[0])};
  };
  return s;
}

}  // namespace

void register_quantize_ops(OpRegistry& registry) {
  registry.add(quantize_schema());
  registry.add(dequantize_schema());
  registry.add(dynamic_quantize_schema());
  registry.add(qlinear_matmul_schema());
  registry.add(qlinear_conv_schema());
}

}  // namespace orchid::reference
