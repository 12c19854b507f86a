// Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare,
// ArgMax/ArgMin, CumSum and TopK.
//
// Canonical form (opset 18): the ReduceX operators take `axes` as the optional
// int64 input 1 (the importer moves the pre-18 `axes` attribute there; before
// opset 13 ReduceSum did the same), with attributes keepdims (default 1) and
// noop_with_empty_axes (default 0). TopK takes k as input 1 (opset >= 10).
//
// Semantics worth stating:
//  - Omitted or empty axes reduce every dimension, unless noop_with_empty_axes
//    is set: then no dimension is reduced, i.e. each output element is the
//    reduction of one input element (ReduceSum/Mean/Max/Min/Prod/LogSumExp
//    give the input back, ReduceL1/L2 give |x|, ReduceSumSquare x*x,
//    ReduceLogSum log(x)) — as the ONNX reference implementation does.
//  - Empty reductions: Sum/L1/L2/SumSquare 0, Prod 1, Max -inf (lowest for
//    integers), Min +inf (max), LogSum and LogSumExp -inf, Mean NaN (0 for
//    integers).
//  - Floats accumulate in double. Integers wrap around in their own width
//    (computed modulo 2^64, then narrowed); integer ReduceMean truncates
//    towards zero; integer L2/LogSum/LogSumExp are computed in double and
//    truncated.
//  - Max/Min propagate NaN; ArgMax/ArgMin treat NaN as the extreme (numpy).
#include <algorithm>
#include <numeric>

#include "reference/ops/ops.h"
#include "reference/ops/op_utils.h"
#include "reference/ops/reduce_utils.h"
#include "support/error.h"

namespace orchid::reference {

namespace {

enum class ReduceKind { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------------------
// ReduceX

// Which dimensions a ReduceX node reduces, from its axes input (or nullptr).
std::vector<bool> reduce_mask(const Attributes& attrs, size_t rank, const Tensor* axes) {
  std::vector<int64_t> list;
  if (axes) {
    if (!is_integer(axes->dtype())) {
      ORCHID_FAIL() << "expected an int64 tensor for input 1 (axes), got " << dtype_name(axes->dtype());
    }
    if (axes->rank() > 1) ORCHID_FAIL() << "axes must be a 1-D tensor";
    list = axes->to_i64_vector();
  }
  if (list.empty()) {
    return std::vector<bool>(rank, attrs.get_int("noop_with_empty_axes", 0) == 0);
  }
  std::vector<bool> mask(rank, false);
  for (int64_t axis : normalize_axes(list, int64_t(rank))) {
    if (mask[size_t(axis)]) ORCHID_FAIL() << "axis " << axis << " appears twice in axes";
    mask[size_t(axis)] = true;
  }
  return mask;
}

std::vector<TensorType> infer_reduce(const InferContext& ctx, ReduceKind kind) {
  const TensorType& x = ctx.input(0);
  if (x.dtype == DType::Bool && kind != ReduceKind::Max && kind != ReduceKind::Min) {
    require_numeric_input(x, 0, "data");
  }
  if (ctx.attrs().has("axes")) {
    ORCHID_FAIL() << "the 'axes' attribute must have been converted to input 1 (opset-18 form)";
  }
  const Tensor* axes = ctx.has_input(1) ? &ctx.require_value(1, "axes") : nullptr;
  std::vector<bool> mask = reduce_mask(ctx.attrs(), x.rank(), axes);
  return one(x.dtype, reduced_shape(x.shape, mask, ctx.attrs().get_int("keepdims", 1) != 0));
}

// One group of a float tensor, in double.
template <typename T>
double reduce_float_group(const T* x, int64_t base, const std::vector<int64_t>& inner, ReduceKind kind) {
  auto at = [&](int64_t off) { return to_f64(x[base + off]); };
  double acc = 0;
  switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
    case ReduceKind::LogSum:
      for (int64_t off : inner) acc += at(off);
      if (kind == ReduceKind::Mean) return inner.empty() ? kNaN : acc / double(inner.size());
      if (kind == ReduceKind::LogSum) return std::log(acc);
      return acc;
    case ReduceKind::Max:
    case ReduceKind::Min: {
      bool is_max = kind == ReduceKind::Max;
      acc = is_max ? -kInf : kInf;
      for (int64_t off : inner) {
        double v = at(off);
        if (std::isnan(v)) return v;
        acc = is_max ? std::max(acc, v) : std::min(acc, v);
      }
      return acc;
    }
    case ReduceKind::Prod:
      acc = 1;
      for (int64_t off : inner) acc *= at(off);
      return acc;
    case ReduceKind::L1:
      for (int64_t off : inner) acc += std::fabs(at(off));
      return acc;
    case ReduceKind::L2:
    case ReduceKind::SumSquare:
      for (int64_t off : inner) acc += at(off) * at(off);
      return kind == ReduceKind::L2 ? std::sqrt(acc) : acc;
    case ReduceKind::LogSumExp: {
      // Shift by the (finite) maximum so that exp cannot overflow.
      double max = reduce_float_group(x, base, inner, ReduceKind::Max);
      if (std::isnan(max)) return max;
      double shift = std::isfinite(max) ? max : 0.0;
      for (int64_t off : inner) acc += std::exp(at(off) - shift);
      return std::log(acc) + shift;
    }
  }
  return acc;
}

// One group of an integer (or, for Max/Min, bool) tensor. Sums and products
// wrap around: computed modulo 2^64 and narrowed by the caller's conversion.
template <typename T>
T reduce_int_group(const T* x, int64_t base, const std::vector<int64_t>& inner, ReduceKind kind) {
  uint64_t acc = 0;
  switch (kind) {
    case ReduceKind::Max:
    case ReduceKind::Min: {
      bool is_max = kind == ReduceKind::Max;
      T best = is_max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
      for (int64_t off : inner) best = is_max ? std::max(best, x[base + off]) : std::min(best, x[base + off]);
      return best;
    }
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      for (int64_t off : inner) acc += uint64_t(x[base + off]);
      if (kind == ReduceKind::Mean) {
        if (inner.empty()) return T(0);
        if constexpr (std::is_signed_v<T>) return T(int64_t(acc) / int64_t(inner.size()));
        return T(acc / uint64_t(inner.size()));
      }
      return T(acc);
    case ReduceKind::Prod:
      acc = 1;
      for (int64_t off : inner) acc *= uint64_t(x[base + off]);
      return T(acc);
    case ReduceKind::L1:
      for (int64_t off : inner) {
        T v = x[base + off];
        if constexpr (std::is_signed_v<T>) {
          acc += v < T(0) ? uint64_t(0) - uint64_t(v) : uint64_t(v);
        } else {
          acc += uint64_t(v);
        }
      }
      return T(acc);
    case ReduceKind::SumSquare:
      for (int64_t off : inner) acc += uint64_t(x[base + off]) * uint64_t(x[base + off]);
      return T(acc);
    case ReduceKind::L2:
    case ReduceKind::LogSum:
    case ReduceKind::LogSumExp:
      return from_f64<T>(reduce_float_group(x, base, inner, kind));
  }
  return T(0);
}

template <typename T>
void reduce_typed(const Tensor& x, const ReduceIndex& index, ReduceKind kind, Tensor& out) {
  const T* in = x.data<T>();
  T* y = out.data<T>();
  for (size_t o = 0; o < index.outer.size(); ++o) {
    if constexpr (kIsFloat<T>) {
      y[o] = from_f64<T>(reduce_float_group(in, index.outer[o], index.inner, kind));
    } else {
      y[o] = reduce_int_group(in, index.outer[o], index.inner, kind);
    }
  }
}

std::vector<Tensor> eval_reduce(const EvalContext& ctx, ReduceKind kind) {
  const Tensor& x = ctx.input(0);
  std::vector<bool> mask = reduce_mask(ctx.attrs(), x.rank(), ctx.has_input(1) ? &ctx.input(1) : nullptr);
  ReduceIndex index = make_reduce_index(x.shape(), mask);
  Tensor out(ctx.output_types[0]);
  ORCHID_CHECK(out.numel() == int64_t(index.outer.size())) << "reduce output size";
  ORCHID_DISPATCH(x.dtype(), T, reduce_typed<T>(x, index, kind, out));
  return {out};
}

void add_reduce(OpRegistry& registry, const char* name, ReduceKind kind) {
  registry.add(OpSchema{name, "",
                        [kind](const InferContext& ctx) { return infer_reduce(ctx, kind); },
                        [kind](const EvalContext& ctx) { return eval_reduce(ctx, kind); }, 1, 2});
}

// ---------------------------------------------------------------------------
// ArgMax / ArgMin (axis default 0, keepdims default 1, select_last_index).

std::vector<TensorType> infer_arg(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  require_numeric_input(x, 0, "data");
  if (x.rank() == 0) ORCHID_FAIL() << "expected an input of rank >= 1, got a scalar";
  size_t axis = size_t(normalize_axis(ctx.attrs().get_int("axis", 0), int64_t(x.rank())));
  std::vector<bool> mask = axis_range_mask(x.rank(), axis, axis + 1);
  Shape out = reduced_shape(x.shape, mask, ctx.attrs().get_int("keepdims", 1) != 0);
  if (x.shape[axis] == 0 && shape_numel(out) > 0) {
    ORCHID_FAIL() << "cannot take the arg-extreme over axis " << axis << " of size 0";
  }
  return one(DType::Int64, out);
}

std::vector<Tensor> eval_arg(const EvalContext& ctx, bool want_max) {
  const Tensor& x = ctx.input(0);
  size_t axis = size_t(normalize_axis(ctx.attrs().get_int("axis", 0), int64_t(x.rank())));
  bool select_last = ctx.attrs().get_int("select_last_index", 0) != 0;
  ReduceIndex index = make_reduce_index(x.shape(), axis_range_mask(x.rank(), axis, axis + 1));
  Tensor out(ctx.output_types[0]);
  int64_t* y = out.data<int64_t>();
  ORCHID_DISPATCH(x.dtype(), T, {
    const T* in = x.data<T>();
    for (size_t o = 0; o < index.outer.size(); ++o) {
      int64_t base = index.outer[o];
      int64_t best = 0;
      for (size_t r = 1; r < index.inner.size(); ++r) {
        if (arg_better(compare_key(in[base + index.inner[r]]), compare_key(in[base + index.inner[size_t(best)]]),
                       want_max, select_last)) {
          best = int64_t(r);
        }
      }
      y[o] = best;
    }
  });
  return {out};
}

// ---------------------------------------------------------------------------
// CumSum: x, axis (scalar input 1); attributes exclusive, reverse.

int64_t cumsum_axis(const Tensor& axis, size_t rank) {
  if (!is_integer(axis.dtype()) || axis.numel() != 1 || axis.rank() > 1) {
    ORCHID_FAIL() << "expected a scalar int32/int64 tensor for input 1 (axis), got " << axis.type().to_string();
  }
  return normalize_axis(axis.at_i64(0), int64_t(rank));
}

std::vector<TensorType> infer_cumsum(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  require_numeric_input(x, 0, "x");
  if (x.rank() == 0) ORCHID_FAIL() << "expected an input of rank >= 1, got a scalar";
  if (!is_integer(ctx.input(1).dtype)) {
    ORCHID_FAIL() << "expected an int32/int64 tensor for input 1 (axis), got " << dtype_name(ctx.input(1).dtype);
  }
  if (const Tensor* axis = ctx.value(1)) cumsum_axis(*axis, x.rank());
  return one(x.dtype, x.shape);
}

template <typename T>
void cumsum_typed(const Tensor& x, const ReduceIndex& index, bool exclusive, Tensor& out) {
  const T* in = x.data<T>();
  T* y = out.data<T>();
  // Floats run in double; integers wrap around modulo 2^64, then narrow.
  using Acc = std::conditional_t<kIsFloat<T>, double, uint64_t>;
  for (int64_t base : index.outer) {
    Acc acc = 0;
    for (int64_t off : index.inner) {
      Acc v;
      if constexpr (kIsFloat<T>) {
        v = to_f64(in[base + off]);
      } else {
        v = Acc(in[base + off]);
      }
      if (!exclusive) acc += v;
      if constexpr (kIsFloat<T>) {
        y[base + off] = from_f64<T>(acc);
      } else {
        y[base + off] = T(acc);
      }
      if (exclusive) acc += v;
    }
  }
}

std::vector<Tensor> eval_cumsum(const EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  size_t axis = size_t(cumsum_axis(ctx.input(1), x.rank()));
  bool exclusive = ctx.attrs().get_int("exclusive", 0) != 0;
  bool reverse = ctx.attrs().get_int("reverse", 0) != 0;
  ReduceIndex index = make_reduce_index(x.shape(), axis_range_mask(x.rank(), axis, axis + 1));
  if (reverse) std::reverse(index.inner.begin(), index.inner.end());
  Tensor out(ctx.output_types[0]);
  ORCHID_DISPATCH(x.dtype(), T, cumsum_typed<T>(x, index, exclusive, out));
  return {out};
}

// ---------------------------------------------------------------------------
// TopK: X, K (1-element int64 input, needed at load time); axis (-1),
// largest (1), sorted (1). Outputs Values and int64 Indices. Equal values
// keep increasing index order (ONNX); NaN counts as larger than any number.
// The output is always sorted, which sorted=0 (unspecified order) allows.

std::vector<TensorType> infer_topk(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  require_numeric_input(x, 0, "X");
  if (x.rank() == 0) ORCHID_FAIL() << "expected an input of rank >= 1, got a scalar";
  size_t axis = size_t(normalize_axis(ctx.attrs().get_int("axis", -1), int64_t(x.rank())));
  const Tensor& k_value = ctx.require_value(1, "K");
  if (!is_integer(k_value.dtype()) || k_value.numel() != 1 || k_value.rank() > 1) {
    ORCHID_FAIL() << "expected a 1-element int64 tensor for input 1 (K), got " << k_value.type().to_string();
  }
  int64_t k = k_value.at_i64(0);
  if (k < 0 || k > x.shape[axis]) {
    ORCHID_FAIL() << "K = " << k << " is out of range for axis " << axis << " of size " << x.shape[axis];
  }
  Shape out = x.shape;
  out[axis] = k;
  return {TensorType{x.dtype, out}, TensorType{DType::Int64, out}};
}

// Strict "comes first" order on keys for TopK, with NaN as the largest value.
template <typename K>
bool topk_before(K a, K b, bool largest) {
  if constexpr (std::is_floating_point_v<K>) {
    if (std::isnan(a) || std::isnan(b)) return largest ? !std::isnan(b) : !std::isnan(a);
  }
  return largest ? a > b : a < b;
}

std::vector<Tensor> eval_topk(const EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  size_t axis = size_t(normalize_axis(ctx.attrs().get_int("axis", -1), int64_t(x.rank())));
  bool largest = ctx.attrs().get_int("largest", 1) != 0;
  int64_t k = ctx.output_types[0].shape[axis];
  ReduceIndex in_index = make_reduce_index(x.shape(), axis_range_mask(x.rank(), axis, axis + 1));
  ReduceIndex out_index =
      make_reduce_index(ctx.output_types[0].shape, axis_range_mask(x.rank(), axis, axis + 1));
  Tensor values(ctx.output_types[0]);
  Tensor indices(ctx.output_types[1]);
  int64_t* idx_out = indices.data<int64_t>();
  std::vector<int64_t> order(in_index.inner.size());
  ORCHID_DISPATCH(x.dtype(), T, {
    const T* in = x.data<T>();
    T* val_out = values.data<T>();
    for (size_t o = 0; o < in_index.outer.size(); ++o) {
      int64_t base = in_index.outer[o];
      auto key = [&](int64_t i) { return compare_key(in[base + in_index.inner[size_t(i)]]); };
      std::iota(order.begin(), order.end(), int64_t(0));
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
        if (topk_before(key(a), key(b), largest)) return true;
        if (topk_before(key(b), key(a), largest)) return false;
        return a < b;
      });
      for (int64_t j = 0; j < k; ++j) {
        int64_t dst = out_index.outer[o] + out_index.inner[size_t(j)];
        val_out[dst] = in[base + in_index.inner[size_t(order[size_t(j)])]];
        idx_out[dst] = order[size_t(j)];
      }
    }
  });
  return {values, indices};
}

}  // namespace

void register_reduce_ops(OpRegistry& registry) {
  add_reduce(registry, "ReduceSum", ReduceKind::Sum);
  add_reduce(registry, "ReduceMean", ReduceKind::Mean);
  add_reduce(registry, "ReduceMax", ReduceKind::Max);
  add_reduce(registry, "ReduceMin", ReduceKind::Min);
  add_reduce(registry, "ReduceProd", ReduceKind::Prod);
  add_reduce(registry, "ReduceL1", ReduceKind::L1);
  add_reduce(registry, "ReduceL2", ReduceKind::L2);
  add_reduce(registry, "ReduceLogSum", ReduceKind::LogSum);
  add_reduce(registry, "ReduceLogSumExp", ReduceKind::LogSumExp);
  add_reduce(registry, "ReduceSumSquare", ReduceKind::SumSquare);
  registry.add(OpSchema{"ArgMax", "", infer_arg, [](const EvalContext& ctx) { return eval_arg(ctx, true); }, 1, 1});
  registry.add(OpSchema{"ArgMin", "", infer_arg, [](const EvalContext& ctx) { return eval_arg(ctx, false); }, 1, 1});
  registry.add(OpSchema{"CumSum", "", infer_cumsum, eval_cumsum, 2, 2});
  registry.add(OpSchema{"TopK", "", infer_topk, eval_topk, 2, 2});
}

}  // namespace orchid::reference
