#include "reference/ops/elementwise_utils.h"

#include "support/error.h"

namespace orchid::reference {

bool dtype_in_class(DType dtype, TypeClass cls) {
  switch (cls) {
    case TypeClass::Float: return is_float(dtype);
    case TypeClass::Numeric: return dtype != DType::Bool;
    case TypeClass::Signed: return is_signed(dtype);
    case TypeClass::Integer: return is_integer(dtype);
    case TypeClass::Unsigned: return is_integer(dtype) && !is_signed(dtype);
    case TypeClass::Bool: return dtype == DType::Bool;
    case TypeClass::NumericOrBool: return true;
  }
  return false;
}

namespace {

const char* class_name(TypeClass cls) {
  switch (cls) {
    case TypeClass::Float: return "a float";
    case TypeClass::Numeric: return "a numeric";
    case TypeClass::Signed: return "a signed numeric";
    case TypeClass::Integer: return "an integer";
    case TypeClass::Unsigned: return "an unsigned integer";
    case TypeClass::Bool: return "a bool";
    case TypeClass::NumericOrBool: return "a numeric or bool";
  }
  return "a";
}

}  // namespace

void require_dtype(DType dtype, TypeClass cls, size_t index, const char* name) {
  if (!dtype_in_class(dtype, cls)) {
    ORCHID_FAIL() << "expected " << class_name(cls) << " tensor for input " << index << " (" << name
                  << "), got " << dtype_name(dtype);
  }
}

void require_same_dtype(const InferContext& ctx, size_t a, size_t b) {
  DType da = ctx.input(a).dtype;
  DType db = ctx.input(b).dtype;
  if (da != db) {
    ORCHID_FAIL() << "inputs " << a << " and " << b << " must have the same dtype, got "
                  << dtype_name(da) << " and " << dtype_name(db);
  }
}

BroadcastPlan make_broadcast_plan(const Shape& out_shape, const std::vector<Shape>& in_shapes) {
  size_t rank = out_shape.size();
  size_t n = in_shapes.size();
  // Aligned per-input strides over the output dimensions (0 where broadcast).
  std::vector<std::vector<int64_t>> aligned(n, std::vector<int64_t>(rank, 0));
  for (size_t j = 0; j < n; ++j) {
    const Shape& s = in_shapes[j];
    ORCHID_CHECK(s.size() <= rank) << "broadcast input has higher rank than the output";
    std::vector<int64_t> strides = shape_strides(s);
    size_t offset = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      ORCHID_CHECK(s[i] == out_shape[i + offset] || s[i] == 1)
          << "shape " << shape_to_string(s) << " does not broadcast to " << shape_to_string(out_shape);
      aligned[j][i + offset] = s[i] == 1 ? 0 : strides[i];
    }
  }
  BroadcastPlan plan;
  plan.strides.assign(n, {});
  for (size_t d = 0; d < rank; ++d) {
    if (out_shape[d] == 1) continue;  // contributes nothing to any offset
    bool merge = !plan.dims.empty();
    for (size_t j = 0; j < n && merge; ++j) {
      // The previous merged dimension continues this one when its stride is
      // this dimension's stride times its extent.
      merge = plan.strides[j].back() == aligned[j][d] * out_shape[d];
    }
    if (merge) {
      plan.dims.back() *= out_shape[d];
      for (size_t j = 0; j < n; ++j) plan.strides[j].back() = aligned[j][d];
    } else {
      plan.dims.push_back(out_shape[d]);
      for (size_t j = 0; j < n; ++j) plan.strides[j].push_back(aligned[j][d]);
    }
  }
  if (plan.dims.empty()) {  // a single element
    plan.dims.push_back(1);
    for (size_t j = 0; j < n; ++j) plan.strides[j].push_back(0);
  }
  return plan;
}

}  // namespace orchid::reference
