// Fission rules for the pooling operators.
//
// Global pools are reductions over the spatial axes. Windowed pools (MaxPool,
// AveragePool, LpPool) become a constant Pad followed by one strided Slice
// per kernel tap (the tap's input at every output position) folded with Max
// or Add; MaxPool without Indices folds one spatial axis at a time (exact for
// max, and sum(k) Slices instead of prod(k)). The geometry (pads, auto_pad, ceil_mode, dilations) comes from the
// reference's own window_geometry, so the rewrite reads exactly the inputs the
// reference reads; AveragePool divides by a count tensor computed here from
// that geometry, exact for count_include_pad = 0/1 and ceil_mode edge windows.
// Float16/BFloat16 sums are accumulated in float32 (the reference sums in
// double), max is computed in the input type (exact).
#include <algorithm>
#include <cmath>
#include <limits>
#include <variant>

#include "fission/rules.h"
#include "reference/ops/conv_utils.h"
#include "support/error.h"

namespace orchid::fission {
namespace {

using reference::WindowGeometry;

bool is_half(DType dtype) { return dtype == DType::Float16 || dtype == DType::BFloat16; }

// The type sums are computed in: float32 for the 16-bit floats.
ValueId to_sum_type(FissionBuilder& b, ValueId x) { return is_half(b.dtype(x)) ? b.cast(x, DType::Float32) : x; }

WindowGeometry pool_geometry(const Node& node, const Shape& x) {
  Shape kernel = node.attrs.get_ints("kernel_shape");
  if (kernel.empty()) ORCHID_FAIL() << node.describe() << ": attribute kernel_shape is required";
  bool ceil_mode = node.attrs.get_int("ceil_mode", 0) != 0;
  return reference::window_geometry(node.attrs, Shape(x.begin() + 2, x.end()), kernel, ceil_mode);
}

// Pads x by the geometry's pads, widened at the end where a ceil_mode window
// reaches past the end padding (those taps must read the pad value too).
ValueId pad_input(FissionBuilder& b, ValueId x, const WindowGeometry& g, double pad_value) {
  size_t n = g.rank(), rank = n + 2;
  std::vector<int64_t> pads(2 * rank, 0);
  bool any = false;
  for (size_t j = 0; j < n; ++j) {
    int64_t needed = (g.out[j] - 1) * g.strides[j] + (g.kernel[j] - 1) * g.dilations[j] + 1;
    pads[2 + j] = g.pad_begin[j];
    pads[rank + 2 + j] = std::max(g.pad_end[j], needed - g.in[j] - g.pad_begin[j]);
    any = any || pads[2 + j] != 0 || pads[rank + 2 + j] != 0;
  }
  if (!any) return x;
  return b.add1("Pad", {x, b.ints(pads), b.scalar(pad_value, b.dtype(x))});
}

// Calls visit(tap, piece) for every kernel tap (row-major order, the
// reference's order): tap k reads padded[pos * stride + k * dilation] for
// every output position pos, i.e. one Slice with start k * dilation and step
// stride per spatial axis.
template <typename Visit>
void for_each_tap_slice(FissionBuilder& b, ValueId padded, const WindowGeometry& g, Visit&& visit) {
  size_t n = g.rank();
  std::vector<int64_t> axes(n), steps(g.strides.begin(), g.strides.end()), tap(n, 0);
  for (size_t j = 0; j < n; ++j) axes[j] = int64_t(j + 2);
  while (true) {
    std::vector<int64_t> starts(n), ends(n);
    for (size_t j = 0; j < n; ++j) {
      starts[j] = tap[j] * g.dilations[j];
      ends[j] = starts[j] + (g.out[j] - 1) * g.strides[j] + 1;
    }
    visit(tap, b.slice(padded, starts, ends, axes, steps));
    size_t j = n;  // next tap, last axis fastest
    while (j > 0 && ++tap[j - 1] == g.kernel[j - 1]) tap[--j] = 0;
    if (j == 0) return;
  }
}

// combine(...) ("Max" or "Add") over the kernel taps.
ValueId fold_taps(FissionBuilder& b, ValueId padded, const WindowGeometry& g, const std::string& combine) {
  ValueId acc = kNoValue;
  for_each_tap_slice(b, padded, g, [&](const std::vector<int64_t>&, ValueId piece) {
    acc = acc == kNoValue ? piece : b.binary(combine, acc, piece);
  });
  return acc;
}

// Max over the window one spatial axis at a time: max is associative and
// commutative and a window is a box, so the max over a k x k window is the
// max over k rows of the max over k columns, exactly, with sum(k) taps
// instead of prod(k) (26 instead of 169 Slices for YOLO's 13x13 SPP pool).
// An axis the window neither spans nor strides is left alone.
ValueId max_per_axis(FissionBuilder& b, ValueId padded, const WindowGeometry& g) {
  ValueId acc = padded;
  for (size_t j = g.rank(); j-- > 0;) {
    const int64_t axis = int64_t(j + 2), size = b.shape(acc)[size_t(axis)];
    const int64_t span = (g.out[j] - 1) * g.strides[j] + 1;
    if (g.kernel[j] == 1 && g.strides[j] == 1 && span == size) continue;
    ValueId folded = kNoValue;
    for (int64_t k = 0; k < g.kernel[j]; ++k) {
      const int64_t start = k * g.dilations[j];
      ValueId piece = b.slice(acc, {start}, {start + span}, {axis}, {g.strides[j]});
      folded = folded == kNoValue ? piece : b.binary("Max", folded, piece);
    }
    acc = folded;
  }
  // A 1x1 window of stride 1: still one Slice, so the pool's output is a new value.
  return acc == padded ? fold_taps(b, padded, g, "Max") : acc;
}

// AveragePool's divisor at every output position, shape [1, 1, out...]: the
// taps inside the input, or inside the explicitly/automatically padded input
// for count_include_pad = 1 (never the ceil_mode extension). The count is a
// product over the spatial axes. An empty window divides its zero sum by 1.
Tensor average_counts(const WindowGeometry& g, bool include_pad, DType dtype) {
  size_t n = g.rank();
  Shape shape = {1, 1};
  shape.insert(shape.end(), g.out.begin(), g.out.end());
  std::vector<std::vector<int64_t>> per_axis(n);
  for (size_t j = 0; j < n; ++j) {
    for (int64_t pos = 0; pos < g.out[j]; ++pos) {
      auto [first, second] = include_pad ? reference::valid_range(g.kernel[j], g.in[j] + g.pad_begin[j] + g.pad_end[j],
                                                                  g.dilations[j], pos * g.strides[j])
                                         : reference::valid_range(g.kernel[j], g.in[j], g.dilations[j],
                                                                  pos * g.strides[j] - g.pad_begin[j]);
      per_axis[j].push_back(second - first);
    }
  }
  Tensor counts(dtype, shape);
  int64_t numel = counts.numel();
  for (int64_t flat = 0; flat < numel; ++flat) {
    int64_t rest = flat, count = 1;
    for (size_t j = n; j-- > 0;) {
      count *= per_axis[j][size_t(rest % g.out[j])];
      rest /= g.out[j];
    }
    counts.set_f64(flat, double(count == 0 ? 1 : count));
  }
  return counts;
}

// LpPool's order p: an int since opset 2, a whole-number float in opset 1.
int64_t lp_order(const Node& node) {
  auto it = node.attrs.all().find("p");
  if (it != node.attrs.all().end() && std::holds_alternative<double>(it->second)) {
    return int64_t(std::get<double>(it->second));
  }
  return node.attrs.get_int("p", 2);
}

// |x|^p, written so that p = 1 and p = 2 need no Pow.
ValueId lp_term(FissionBuilder& b, ValueId x, int64_t p) {
  if (p == 2) return b.binary("Mul", x, x);
  ValueId a = b.unary("Abs", x);
  return p == 1 ? a : b.binary("Pow", a, b.scalar(double(p), b.dtype(x)));
}

ValueId lp_root(FissionBuilder& b, ValueId sum, int64_t p) {
  if (p == 2) return b.unary("Sqrt", sum);
  return p == 1 ? sum : b.binary("Pow", sum, b.scalar(1.0 / double(p), b.dtype(sum)));
}

std::vector<int64_t> spatial_axes(size_t rank) {
  std::vector<int64_t> axes;
  for (size_t i = 2; i < rank; ++i) axes.push_back(int64_t(i));
  return axes;
}

// ---------------------------------------------------------------------------
// Rules
// ---------------------------------------------------------------------------

std::vector<ValueId> global_average_pool(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  DType dtype = b.dtype(x);
  int64_t n = 1;
  for (size_t i = 2; i < b.rank(x); ++i) n *= b.shape(x)[i];
  ValueId sum = b.reduce("ReduceSum", to_sum_type(b, x), spatial_axes(b.rank(x)), true);
  // Div rather than Mul by 1/n: the same rounding as the reference's sum / n.
  ValueId mean = b.binary("Div", sum, b.scalar(double(n), b.dtype(sum)));
  return {b.cast(mean, dtype)};
}

std::vector<ValueId> global_max_pool(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  return {b.reduce("ReduceMax", x, spatial_axes(b.rank(x)), true)};
}

std::vector<ValueId> global_lp_pool(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  int64_t p = lp_order(node);
  ValueId sum = b.reduce("ReduceSum", lp_term(b, to_sum_type(b, x), p), spatial_axes(b.rank(x)), true);
  return {b.cast(lp_root(b, sum, p), b.dtype(x))};
}

// ---------------------------------------------------------------------------
// MaxPool's Indices: the reference keeps the first tap inside the input, then
// any strictly greater one. The slices are the same as for the values; the
// index of tap k at each output position is a constant (-1 in the padding).
// Whether tap k is the first tap inside the input is a constant too ("force"),
// since padding (-inf) never replaces a tap of the input.
// ---------------------------------------------------------------------------

struct TapTables {
  Tensor index;  // int64 [1, 1, out...]: spatial flat index of the tap, -1 outside
  Tensor force;  // bool: the first tap of its window inside the input
};

// Spatial flat index of input coordinate c: row-major, or column-major
// (first spatial axis fastest) for storage_order = 1.
int64_t spatial_index(const std::vector<int64_t>& c, const WindowGeometry& g, bool column_major) {
  int64_t flat = 0, stride = 1;
  for (size_t t = 0; t < c.size(); ++t) {
    size_t j = column_major ? t : c.size() - 1 - t;
    flat += c[j] * stride;
    stride *= g.in[j];
  }
  return flat;
}

TapTables tap_tables(const WindowGeometry& g, const std::vector<int64_t>& tap, bool column_major,
                     std::vector<bool>& seen) {
  size_t n = g.rank();
  Shape shape = {1, 1};
  shape.insert(shape.end(), g.out.begin(), g.out.end());
  TapTables t{Tensor(DType::Int64, shape), Tensor(DType::Bool, shape)};
  std::vector<int64_t> pos(n, 0), c(n);
  for (int64_t flat = 0; flat < t.index.numel(); ++flat) {
    bool inside = true;
    for (size_t j = 0; j < n; ++j) {
      c[j] = pos[j] * g.strides[j] - g.pad_begin[j] + tap[j] * g.dilations[j];
      inside = inside && c[j] >= 0 && c[j] < g.in[j];
    }
    t.index.set_f64(flat, inside ? double(spatial_index(c, g, column_major)) : -1.0);
    t.force.set_f64(flat, inside && !seen[size_t(flat)] ? 1.0 : 0.0);
    if (inside) seen[size_t(flat)] = true;
    for (size_t j = n; j-- > 0 && ++pos[j] == g.out[j];) pos[j] = 0;
  }
  return t;
}

// (N * C plane) * spatial size, shape [N, C, 1, ...]: added to the spatial index.
Tensor plane_offsets(const Shape& x) {
  Shape shape(x.size(), 1);
  shape[0] = x[0];
  shape[1] = x[1];
  int64_t spatial = 1;
  for (size_t i = 2; i < x.size(); ++i) spatial *= x[i];
  Tensor t(DType::Int64, shape);
  for (int64_t p = 0; p < x[0] * x[1]; ++p) t.set_f64(p, double(p * spatial));
  return t;
}

std::vector<ValueId> max_pool_with_indices(const Node& node, FissionBuilder& b, ValueId padded,
                                           const WindowGeometry& g) {
  const Shape x_shape = b.shape(node.inputs[0]);
  bool column_major = node.attrs.get_int("storage_order", 0) == 1;
  std::vector<bool> seen(size_t(shape_numel(g.out)), false);
  ValueId best = kNoValue, index = kNoValue;
  for_each_tap_slice(b, padded, g, [&](const std::vector<int64_t>& tap, ValueId piece) {
    TapTables t = tap_tables(g, tap, column_major, seen);
    ValueId tap_index = b.constant(std::move(t.index));
    if (best == kNoValue) {
      best = piece;
      index = tap_index;
    } else {
      ValueId take = b.binary("Or", b.binary("Greater", piece, best), b.constant(std::move(t.force)));
      best = b.add1("Where", {take, piece, best});
      index = b.add1("Where", {take, tap_index, index});
    }
  });
  ValueId flat = b.binary("Add", index, b.constant(plane_offsets(x_shape)));
  // An all-padding window has index -1 (never seen inside the input).
  if (std::find(seen.begin(), seen.end(), false) != seen.end()) {
    flat = b.add1("Where", {b.binary("Less", index, b.scalar(0, DType::Int64)), b.scalar(-1, DType::Int64), flat});
  }
  return {best, flat};
}

// Padding reads the lowest value (-inf for floats), so it never wins; an
// all-padding window yields -inf, as in the reference.
std::vector<ValueId> max_pool(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  WindowGeometry g = pool_geometry(node, b.shape(x));
  DType dtype = b.dtype(x);
  double lowest = dtype == DType::Int8    ? -128.0
                  : dtype == DType::UInt8 ? 0.0
                                          : -std::numeric_limits<double>::infinity();
  ValueId padded = pad_input(b, x, g, lowest);
  if (node.outputs.size() > 1 && node.outputs[1] != kNoValue) return max_pool_with_indices(node, b, padded, g);
  return {max_per_axis(b, padded, g), kNoValue};
}

std::vector<ValueId> average_pool(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  WindowGeometry g = pool_geometry(node, b.shape(x));
  ValueId xs = to_sum_type(b, x);
  ValueId sum = fold_taps(b, pad_input(b, xs, g, 0.0), g, "Add");
  bool include_pad = node.attrs.get_int("count_include_pad", 0) != 0;
  ValueId counts = b.constant(average_counts(g, include_pad, b.dtype(xs)));
  return {b.cast(b.binary("Div", sum, counts), b.dtype(x))};
}

std::vector<ValueId> lp_pool(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  WindowGeometry g = pool_geometry(node, b.shape(x));
  int64_t p = lp_order(node);
  // |x|^p before padding: the zero padding then contributes 0 to the sum.
  ValueId terms = lp_term(b, to_sum_type(b, x), p);
  ValueId sum = fold_taps(b, pad_input(b, terms, g, 0.0), g, "Add");
  return {b.cast(lp_root(b, sum, p), b.dtype(x))};
}

}  // namespace

void add_pool_rules(FissionRuleTable& table) {
  table.add("GlobalAveragePool", global_average_pool);
  table.add("GlobalMaxPool", global_max_pool);
  table.add("GlobalLpPool", global_lp_pool);
  table.add("MaxPool", max_pool);
  table.add("AveragePool", average_pool);
  table.add("LpPool", lp_pool);
}

}  // namespace orchid::fission
