#include "reference/ops/op_utils.h"

#include "support/error.h"

namespace orchid::reference {

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      ORCHID_FAIL() << "shapes " << shape_to_string(a) << " and " << shape_to_string(b)
                    << " cannot be broadcast together";
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  Shape out;
  for (const Shape& s : shapes) out = broadcast_shapes(out, s);
  return out;
}

int64_t normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    ORCHID_FAIL() << "axis " << axis << " is out of range for rank " << rank;
  }
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t axis : axes) out.push_back(normalize_axis(axis, rank));
  return out;
}

BroadcastIndexer::BroadcastIndexer(const Shape& in_shape, const Shape& out_shape)
    : out_strides_(shape_strides(out_shape)), out_dims_(out_shape) {
  ORCHID_CHECK(in_shape.size() <= out_shape.size()) << "broadcast input has higher rank";
  std::vector<int64_t> in_strides = shape_strides(in_shape);
  size_t offset = out_shape.size() - in_shape.size();
  in_strides_.assign(out_shape.size(), 0);
  for (size_t i = 0; i < in_shape.size(); ++i) {
    in_strides_[i + offset] = in_shape[i] == 1 ? 0 : in_strides[i];
  }
}

int64_t BroadcastIndexer::operator()(int64_t out_flat) const {
  int64_t in_flat = 0;
  for (size_t d = 0; d < out_dims_.size(); ++d) {
    int64_t coordinate = out_flat / out_strides_[d];
    out_flat -= coordinate * out_strides_[d];
    in_flat += coordinate * in_strides_[d];
  }
  return in_flat;
}

}  // namespace orchid::reference
