// Fission rules for reductions. Every reduction becomes elementwise
// primitives around one of the reduce primitives (ReduceSum, ReduceMax,
// ReduceMin, ReduceProd) in canonical form: a constant, explicit, non-empty
// axes input, keepdims set and no noop_with_empty_axes. The axes follow the
// reference (src/reference/ops/reduce.cc): omitted or empty axes reduce every
// dimension unless noop_with_empty_axes is set, and then each output element
// is the reduction of one input element (ReduceL1 gives |x|, ReduceSumSquare
// x * x, ReduceLogSum log x, the others x itself).
#include "fission/rules.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using Outputs = std::vector<ValueId>;

// Which axes a ReduceX node reduces, in increasing order; empty when none is
// (noop_with_empty_axes, or a scalar input).
struct ReduceAxes {
  std::vector<int64_t> axes;
  bool keepdims = true;
};

ReduceAxes reduce_axes(const Node& node, const FissionBuilder& b) {
  int64_t rank = int64_t(b.rank(node.inputs[0]));
  std::vector<int64_t> listed;
  if (node.inputs.size() > 1 && node.inputs[1] != kNoValue) {
    const Tensor* axes = b.constant_value(node.inputs[1]);
    ORCHID_CHECK(axes) << node.describe() << ": axes must be a constant";
    listed = axes->to_i64_vector();
  }
  std::vector<bool> mask(size_t(rank), listed.empty() && node.attrs.get_int("noop_with_empty_axes", 0) == 0);
  for (int64_t axis : listed) mask[size_t(axis < 0 ? axis + rank : axis)] = true;
  ReduceAxes result;
  result.keepdims = node.attrs.get_int("keepdims", 1) != 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (mask[size_t(d)]) result.axes.push_back(d);
  }
  return result;
}

// A canonical reduce primitive; reducing no axis is the identity.
ValueId reduce(FissionBuilder& b, const std::string& op, ValueId x, const ReduceAxes& r) {
  if (r.axes.empty()) return x;
  return b.reduce(op, x, r.axes, r.keepdims);
}

// The number of elements that reduce into each output element.
int64_t group_size(const FissionBuilder& b, ValueId x, const ReduceAxes& r) {
  int64_t n = 1;
  for (int64_t axis : r.axes) n *= b.shape(x)[size_t(axis)];
  return n;
}

ValueId like(FissionBuilder& b, ValueId x, double value) { return b.scalar(value, b.dtype(x)); }

// ReduceSum/Max/Min/Prod not yet canonical (omitted axes, empty axes,
// noop_with_empty_axes): the same primitive with explicit axes.
FissionRule canonical_rule(const std::string& op) {
  return [op](const Node& node, FissionBuilder& b) -> Outputs {
    return {reduce(b, op, node.inputs[0], reduce_axes(node, b))};
  };
}

// The type a mean accumulates in: integers in 64 bits (a narrow sum must not
// wrap before the division), 16-bit floats in float32 (their sum overflows
// long before their mean does).
DType mean_accumulator(DType dtype) {
  if (is_integer(dtype)) return is_signed(dtype) ? DType::Int64 : DType::UInt64;
  if (dtype == DType::Float16 || dtype == DType::BFloat16) return DType::Float32;
  return dtype;
}

// ReduceSum / n; integers divide truncating towards zero, as the reference
// does. An empty group gives 0 / 0: NaN for floats, 0 for integers.
Outputs reduce_mean_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  DType dtype = b.dtype(x);
  ReduceAxes r = reduce_axes(node, b);
  if (r.axes.empty()) return {x};
  ValueId wide = b.cast(x, mean_accumulator(dtype));
  ValueId sum = reduce(b, "ReduceSum", wide, r);
  ValueId mean = b.binary("Div", sum, like(b, sum, double(group_size(b, x, r))));
  return {b.cast(mean, dtype)};
}

Outputs reduce_l1_rule(const Node& node, FissionBuilder& b) {
  return {reduce(b, "ReduceSum", b.unary("Abs", node.inputs[0]), reduce_axes(node, b))};
}

Outputs reduce_sum_square_rule(const Node& node, FissionBuilder& b) {
  ValueId x = node.inputs[0];
  return {reduce(b, "ReduceSum", b.binary("Mul", x, x), reduce_axes(node, b))};
}

// The float rules below compute integer inputs in float64 and convert back
// (truncating), as the reference does; 16-bit floats compute in float32 so
// that squares and sums do not overflow where the result does not.
FissionRule through_wide_float(Outputs (*rule)(const Node&, FissionBuilder&, ValueId)) {
  return [rule](const Node& node, FissionBuilder& b) -> Outputs {
    ValueId x = node.inputs[0];
    DType dtype = b.dtype(x);
    if (dtype == DType::Float32 || dtype == DType::Float64) return rule(node, b, x);
    DType wide = is_float(dtype) ? DType::Float32 : DType::Float64;
    return {b.cast(rule(node, b, b.cast(x, wide))[0], dtype)};
  };
}

// sqrt(sum(x * x)); reducing nothing gives |x| without squaring (x * x could
// overflow where |x| does not).
Outputs reduce_l2(const Node& node, FissionBuilder& b, ValueId x) {
  ReduceAxes r = reduce_axes(node, b);
  if (r.axes.empty()) return {b.unary("Abs", x)};
  return {b.unary("Sqrt", reduce(b, "ReduceSum", b.binary("Mul", x, x), r))};
}

Outputs reduce_log_sum(const Node& node, FissionBuilder& b, ValueId x) {
  return {b.unary("Log", reduce(b, "ReduceSum", x, reduce_axes(node, b)))};
}

// log(sum(exp(x - m))) + m with m the group's maximum, so exp never exceeds 1.
// An infinite maximum shifts by 0 instead (inf - inf would be NaN): a +inf
// element then gives +inf, an all -inf (or empty) group -inf. NaN propagates
// through the maximum.
Outputs reduce_log_sum_exp(const Node& node, FissionBuilder& b, ValueId x) {
  ReduceAxes r = reduce_axes(node, b);
  if (r.axes.empty()) return {x};
  ValueId max = b.reduce("ReduceMax", x, r.axes, true);
  ValueId shift = b.add1("Where", {b.unary("IsInf", max), like(b, x, 0), max});
  ValueId sum = b.reduce("ReduceSum", b.unary("Exp", b.binary("Sub", x, shift)), r.axes, r.keepdims);
  ValueId out_shift = b.reshape(shift, b.shape(sum));
  return {b.binary("Add", b.unary("Log", sum), out_shift)};
}

}  // namespace

void add_reduce_rules(FissionRuleTable& table) {
  for (const char* op : {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"}) table.add(op, canonical_rule(op));
  table.add("ReduceMean", reduce_mean_rule);
  table.add("ReduceL1", reduce_l1_rule);
  table.add("ReduceSumSquare", reduce_sum_square_rule);
  table.add("ReduceL2", through_wide_float(reduce_l2));
  table.add("ReduceLogSum", through_wide_float(reduce_log_sum));
  table.add("ReduceLogSumExp", through_wide_float(reduce_log_sum_exp));
}

}  // namespace orchid::fission
