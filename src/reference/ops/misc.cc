// Miscellaneous operators: Identity, Dropout (inference only), Shape, Size,
// Constant, ConstantOfShape, Range, EyeLike.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "reference/ops/elementwise_utils.h"
#include "reference/ops/op_utils.h"
#include "reference/ops/ops.h"
#include "support/error.h"

namespace orchid::reference {
namespace {

OpSchema identity_schema() {
  OpSchema schema;
  schema.op = "Identity";
  schema.min_inputs = 1;
  schema.max_inputs = 1;
  schema.infer = [](const InferContext& ctx) { return std::vector<TensorType>{ctx.input(0)}; };
  schema.eval = [](const EvalContext& ctx) { return std::vector<Tensor>{ctx.input(0)}; };
  return schema;
}

// Dropout(data, ratio?, training_mode?) -> (output, mask). Orchid only does
// inference: output = data and mask is all true. Training mode with a nonzero
// ratio is random and rejected; with ratio 0 it is the identity too. (Before
// opset 12 ratio was an attribute: the importer makes it input 1.)
void check_not_training(const Tensor* ratio, const Tensor* training_mode) {
  if (!training_mode || training_mode->numel() == 0 || training_mode->at_f64(0) == 0) return;
  if (ratio && ratio->numel() == 1 && ratio->at_f64(0) == 0) return;
  ORCHID_FAIL() << "training mode is not supported (training_mode is true and ratio is "
                << (ratio ? "not 0" : "the default 0.5") << ")";
}

OpSchema dropout_schema() {
  OpSchema schema;
  schema.op = "Dropout";
  schema.min_inputs = 1;
  schema.max_inputs = 3;
  schema.infer = [](const InferContext& ctx) {
    const TensorType& x = ctx.input(0);
    if (ctx.has_input(1)) require_dtype(ctx.input(1).dtype, TypeClass::Float, 1, "ratio");
    if (ctx.has_input(2)) require_dtype(ctx.input(2).dtype, TypeClass::Bool, 2, "training_mode");
    // Checked here when training_mode is a constant, else at evaluation.
    if (ctx.value(2)) check_not_training(ctx.value(1), ctx.value(2));
    return std::vector<TensorType>{x, TensorType{DType::Bool, x.shape}};
  };
  schema.eval = [](const EvalContext& ctx) {
    check_not_training(ctx.has_input(1) ? ctx.inputs[1] : nullptr,
                       ctx.has_input(2) ? ctx.inputs[2] : nullptr);
    Tensor mask(ctx.output_types[1]);
    bool* m = mask.data<bool>();
    for (int64_t i = 0; i < mask.numel(); ++i) m[i] = true;
    return std::vector<Tensor>{ctx.input(0), mask};
  };
  return schema;
}

// Shape(data) with start/end (opset 15): negative values count from the back,
// both are clamped to [0, rank]; an empty slice gives an empty vector.
std::pair<int64_t, int64_t> shape_slice(int64_t rank, const Attributes& attrs) {
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return std::min(std::max<int64_t>(v, 0), rank);
  };
  int64_t start = clamp(attrs.get_int("start", 0));
  int64_t end = clamp(attrs.get_int("end", rank));
  return {start, std::max(start, end)};
}

void register_shape_size(OpRegistry& r) {
  OpSchema shape;
  shape.op = "Shape";
  shape.min_inputs = 1;
  shape.max_inputs = 1;
  shape.infer = [](const InferContext& ctx) {
    auto [start, end] = shape_slice(int64_t(ctx.input(0).rank()), ctx.attrs());
    return one(DType::Int64, {end - start});
  };
  shape.eval = [](const EvalContext& ctx) {
    const Shape& dims = ctx.input(0).shape();
    auto [start, end] = shape_slice(int64_t(dims.size()), ctx.attrs());
    return std::vector<Tensor>{Tensor::vector_i64(Shape(dims.begin() + start, dims.begin() + end))};
  };
  r.add(std::move(shape));

  OpSchema size;
  size.op = "Size";
  size.min_inputs = 1;
  size.max_inputs = 1;
  size.infer = [](const InferContext&) { return one(DType::Int64, {}); };
  size.eval = [](const EvalContext& ctx) {
    return std::vector<Tensor>{Tensor::scalar_i64(ctx.input(0).numel())};
  };
  r.add(std::move(size));
}

// Constant: exactly one of value (a tensor), value_float(s), value_int(s).
// String and sparse values are unsupported.
Tensor constant_value(const Attributes& attrs) {
  for (const char* unsupported : {"value_string", "value_strings", "sparse_value"}) {
    if (attrs.has(unsupported)) ORCHID_FAIL() << "Constant with attribute '" << unsupported << "' is not supported";
  }
  int present = 0;
  for (const char* name : {"value", "value_float", "value_floats", "value_int", "value_ints"}) {
    present += attrs.has(name) ? 1 : 0;
  }
  if (present != 1) {
    ORCHID_FAIL() << "Constant needs exactly one of the attributes value, value_float, value_floats, "
                     "value_int, value_ints; got "
                  << present;
  }
  if (const Tensor* value = attrs.get_tensor("value")) return *value;
  if (attrs.has("value_float")) return Tensor::scalar_f32(float(attrs.get_float("value_float", 0)));
  if (attrs.has("value_int")) return Tensor::scalar_i64(attrs.get_int("value_int", 0));
  if (attrs.has("value_ints")) return Tensor::vector_i64(attrs.get_ints("value_ints"));
  std::vector<double> floats = attrs.get_floats("value_floats");
  return Tensor::from_vector(DType::Float32, {int64_t(floats.size())}, floats);
}

// ConstantOfShape(shape): the shape input must be known at load time; the
// fill value is the 1-element tensor attribute `value` (default float32 0).
Tensor fill_value(const Attributes& attrs) {
  const Tensor* value = attrs.get_tensor("value");
  if (!value) return Tensor::scalar_f32(0.0f);
  if (value->numel() != 1) {
    ORCHID_FAIL() << "attribute 'value' must hold one element, got shape " << shape_to_string(value->shape());
  }
  return *value;
}

void register_constants(OpRegistry& r) {
  OpSchema constant;
  constant.op = "Constant";
  constant.min_inputs = 0;
  constant.max_inputs = 0;
  constant.infer = [](const InferContext& ctx) {
    return std::vector<TensorType>{constant_value(ctx.attrs()).type()};
  };
  constant.eval = [](const EvalContext& ctx) {
    return std::vector<Tensor>{constant_value(ctx.attrs())};
  };
  r.add(std::move(constant));

  OpSchema of_shape;
  of_shape.op = "ConstantOfShape";
  of_shape.min_inputs = 1;
  of_shape.max_inputs = 1;
  of_shape.infer = [](const InferContext& ctx) {
    require_dtype(ctx.input(0).dtype, TypeClass::Integer, 0, "input");
    if (ctx.input(0).rank() != 1) {
      ORCHID_FAIL() << "input 0 (input) must be a 1-D shape, got shape " << shape_to_string(ctx.input(0).shape);
    }
    Shape shape = ctx.require_value(0, "shape").to_i64_vector();
    for (int64_t d : shape) {
      if (d < 0) ORCHID_FAIL() << "shape " << shape_to_string(shape) << " has a negative dimension";
    }
    return one(fill_value(ctx.attrs()).dtype(), shape);
  };
  of_shape.eval = [](const EvalContext& ctx) {
    Tensor value = fill_value(ctx.attrs());
    Tensor out(ctx.output_types[0]);
    size_t bytes = dtype_size(out.dtype());
    auto* dst = static_cast<std::byte*>(out.raw());
    for (int64_t i = 0; i < out.numel(); ++i) std::memcpy(dst + size_t(i) * bytes, value.raw(), bytes);
    return std::vector<Tensor>{out};
  };
  r.add(std::move(of_shape));
}

// Range(start, limit, delta): max(ceil((limit - start) / delta), 0) elements
// start + i * delta. All three are scalars known at load time.
bool range_dtype(DType dtype) {
  return dtype == DType::Float32 || dtype == DType::Float64 || dtype == DType::Int16 ||
         dtype == DType::Int32 || dtype == DType::Int64;
}

OpSchema range_schema() {
  OpSchema schema;
  schema.op = "Range";
  schema.min_inputs = 3;
  schema.max_inputs = 3;
  schema.infer = [](const InferContext& ctx) {
    static const char* names[] = {"start", "limit", "delta"};
    double v[3];
    for (size_t i = 0; i < 3; ++i) {
      DType dtype = ctx.input(i).dtype;
      if (!range_dtype(dtype)) {
        ORCHID_FAIL() << "expected a float32, float64, int16, int32 or int64 tensor for input " << i << " ("
                      << names[i] << "), got " << dtype_name(dtype);
      }
      require_same_dtype(ctx, 0, i);
      const Tensor& value = ctx.require_value(i, names[i]);
      if (value.numel() != 1) {
        ORCHID_FAIL() << "input " << i << " (" << names[i] << ") must be a scalar, got shape "
                      << shape_to_string(value.shape());
      }
      v[i] = value.at_f64(0);
    }
    if (v[2] == 0) ORCHID_FAIL() << "delta must not be 0";
    double count = std::ceil((v[1] - v[0]) / v[2]);
    return one(ctx.input(0).dtype, {count > 0 ? int64_t(count) : 0});
  };
  schema.eval = [](const EvalContext& ctx) {
    Tensor out(ctx.output_types[0]);
    visit_dtype(out.dtype(), [&]<typename T>() {
      if constexpr (kIsInteger<T>) {
        int64_t start = ctx.input(0).at_i64(0);
        int64_t delta = ctx.input(2).at_i64(0);
        for (int64_t i = 0; i < out.numel(); ++i) out.data<T>()[i] = T(start + i * delta);
      } else if constexpr (kIsFloat<T>) {
        double start = ctx.input(0).at_f64(0);
        double delta = ctx.input(2).at_f64(0);
        for (int64_t i = 0; i < out.numel(); ++i) out.data<T>()[i] = to_storage<T>(start + double(i) * delta);
      }
    });
    return std::vector<Tensor>{out};
  };
  return schema;
}

// EyeLike(input): a 2-D tensor of input's shape with ones on the diagonal
// shifted by k (k > 0: above); dtype (an ONNX code) defaults to input's.
OpSchema eye_like_schema() {
  OpSchema schema;
  schema.op = "EyeLike";
  schema.min_inputs = 1;
  schema.max_inputs = 1;
  schema.infer = [](const InferContext& ctx) {
    const TensorType& x = ctx.input(0);
    if (x.rank() != 2) ORCHID_FAIL() << "input 0 (input) must be 2-D, got shape " << shape_to_string(x.shape);
    DType dtype = x.dtype;
    if (ctx.attrs().has("dtype")) {
      int code = int(ctx.attrs().get_int("dtype", 0));
      if (!dtype_from_onnx(code, &dtype)) {
        ORCHID_FAIL() << "EyeLike with dtype " << onnx_dtype_name(code) << " is not supported";
      }
    }
    return one(dtype, x.shape);
  };
  schema.eval = [](const EvalContext& ctx) {
    Tensor out(ctx.output_types[0]);
    int64_t rows = out.dim(0), cols = out.dim(1);
    int64_t k = ctx.attrs().get_int("k", 0);
    for (int64_t i = 0; i < rows; ++i) {
      int64_t j = i + k;
      if (j >= 0 && j < cols) out.set_f64(i * cols + j, 1.0);
    }
    return std::vector<Tensor>{out};
  };
  return schema;
}

}  // namespace

void register_misc_ops(OpRegistry& registry) {
  registry.add(identity_schema());
  registry.add(dropout_schema());
  register_shape_size(registry);
  register_constants(registry);
  registry.add(range_schema());
  registry.add(eye_like_schema());
}

}  // namespace orchid::reference
