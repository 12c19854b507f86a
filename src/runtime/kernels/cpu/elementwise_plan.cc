#include "runtime/kernels/cpu/elementwise_plan.h"

#include "support/error.h"

namespace orchid::runtime::cpu {

namespace {

// Row-major strides of `shape` aligned to the right of an output of rank
// `rank`, 0 along dimensions the input broadcasts (absent or of size 1).
std::vector<int64_t> aligned_strides(const Shape& shape, const Shape& out_shape) {
  const size_t rank = out_shape.size();
  ORCHID_CHECK(shape.size() <= rank) << "input of rank " << shape.size() << " for an output of rank " << rank;
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    const size_t d = rank - shape.size() + i;
    ORCHID_CHECK(shape[i] == out_shape[d] || shape[i] == 1)
        << "shape " << shape_to_string(shape) << " does not broadcast to " << shape_to_string(out_shape);
    strides[d] = shape[i] == 1 ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

}  // namespace

BroadcastPlan make_broadcast_plan(const Shape& out_shape, const std::vector<Shape>& in_shapes) {
  BroadcastPlan plan;
  plan.numel = shape_numel(out_shape);
  const size_t n = in_shapes.size();
  std::vector<std::vector<int64_t>> full(n);
  for (size_t j = 0; j < n; ++j) full[j] = aligned_strides(in_shapes[j], out_shape);
  plan.strides.assign(n, {});
  for (size_t d = 0; d < out_shape.size(); ++d) {
    if (out_shape[d] == 1) continue;  // contributes nothing to any offset
    // Dimension d continues the previous merged one when, for every input,
    // stepping the previous one equals stepping d over its whole extent.
    bool merge = !plan.dims.empty();
    for (size_t j = 0; j < n && merge; ++j) merge = plan.strides[j].back() == full[j][d] * out_shape[d];
    if (merge) {
      plan.dims.back() *= out_shape[d];
      for (size_t j = 0; j < n; ++j) plan.strides[j].back() = full[j][d];
    } else {
      plan.dims.push_back(out_shape[d]);
      for (size_t j = 0; j < n; ++j) plan.strides[j].push_back(full[j][d]);
    }
  }
  if (plan.dims.empty()) {  // a single element
    plan.dims.push_back(1);
    for (size_t j = 0; j < n; ++j) plan.strides[j].push_back(1);
  }
  for (size_t j = 0; j < n; ++j) {
    const int64_t inner = plan.strides[j].back();
    ORCHID_CHECK(inner == 0 || inner == 1) << "inner stride " << inner;
    if (inner == 1) plan.contiguous_mask |= 1u << j;
  }
  return plan;
}

}  // namespace orchid::runtime::cpu
