// Fission of Gemm and Einsum into MatMul plus layout and elementwise
// primitives (semantics: src/reference/ops/linear.cc and einsum.cc).
//
// Einsum lowering, operand by operand:
//  1. every label repeated within one term reads a diagonal: a Where with a
//     constant identity mask zeroes the off-diagonal, a ReduceSum drops one
//     of the two dimensions (exact: it adds zeros);
//  2. operands are combined left to right; before each step a label that no
//     later operand and not the output uses is summed out of the operand that
//     alone holds it; labels both operands share and nobody needs later are
//     contracted by one batched MatMul
//     [batch..., A-only, contracted] x [batch..., contracted, B-only];
//  3. the result is summed over the labels the output lacks and transposed to
//     the output order.
// "..." dimensions get labels of their own (right-aligned across operands);
// size-1 ones broadcast through MatMul's batch broadcasting.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "fission/rules.h"
#include "reference/ops/einsum.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

// ---------------------------------------------------------------------------
// Gemm: Y = alpha * A' * B' + beta * C.

// v * factor; integer tensors scale through double and truncate, as the
// reference does.
ValueId scale_by(FissionBuilder& b, ValueId v, double factor) {
  if (factor == 1.0) return v;
  DType dtype = b.dtype(v);
  if (is_float(dtype)) return b.binary("Mul", v, b.scalar(factor, dtype));
  ValueId wide = b.binary("Mul", b.cast(v, DType::Float64), b.scalar(factor, DType::Float64));
  return b.cast(wide, dtype);
}

std::vector<ValueId> gemm_rule(const Node& node, FissionBuilder& b) {
  ValueId a = node.inputs[0], w = node.inputs[1];
  // Transposes of constant weights fold into constants.
  if (node.attrs.get_int("transA", 0) != 0) a = b.transpose(a, {1, 0});
  if (node.attrs.get_int("transB", 0) != 0) w = b.transpose(w, {1, 0});
  double alpha = node.attrs.get_float("alpha", 1.0), beta = node.attrs.get_float("beta", 1.0);
  // alpha goes onto a constant float operand when there is one (folded).
  bool alpha_folded = alpha != 1.0 && is_float(b.dtype(a)) && (b.constant_value(w) || b.constant_value(a));
  if (alpha_folded) {
    if (b.constant_value(w)) {
      w = scale_by(b, w, alpha);
    } else {
      a = scale_by(b, a, alpha);
    }
  }
  ValueId y = b.binary("MatMul", a, w);
  if (!alpha_folded) y = scale_by(b, y, alpha);
  if (node.inputs.size() > 2 && node.inputs[2] != kNoValue && beta != 0.0) {
    y = b.binary("Add", y, scale_by(b, node.inputs[2], beta));
  }
  return {y};
}

// ---------------------------------------------------------------------------
// Einsum

constexpr int kEllipsis = reference::kEinsumEllipsis;
constexpr int kEllipsisKey = 1000;  // the label of ellipsis dimension t: 1000 + t

bool contains(const std::vector<int>& labels, int l) {
  return std::find(labels.begin(), labels.end(), l) != labels.end();
}

struct Operand {
  ValueId value;
  std::vector<int> labels;  // one per dimension
};

struct EinsumProblem {
  std::vector<Operand> operands;
  std::vector<int> output;
};

// Labels per dimension; ellipsis dimensions right-aligned to the widest one.
EinsumProblem parse_einsum(const Node& node, FissionBuilder& b) {
  reference::EinsumEquation parsed = reference::parse_einsum_equation(node.attrs.get_string("equation", ""));
  const std::vector<std::vector<int>>& terms = parsed.inputs;
  ORCHID_CHECK(terms.size() == node.inputs.size()) << "checked by inference";
  // Dimensions the "..." of term i stands for (0 without one).
  auto ellipsis_dims = [&](size_t i) {
    if (!contains(terms[i], kEllipsis)) return int64_t(0);
    return int64_t(b.rank(node.inputs[i])) - int64_t(terms[i].size()) + 1;
  };
  int64_t ellipsis_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i) ellipsis_rank = std::max(ellipsis_rank, ellipsis_dims(i));
  EinsumProblem p;
  std::map<int, int> counts;
  for (size_t i = 0; i < terms.size(); ++i) {
    Operand op{node.inputs[i], {}};
    int64_t ell = ellipsis_dims(i);
    for (int l : terms[i]) {
      if (l != kEllipsis) {
        op.labels.push_back(l);
        ++counts[l];
        continue;
      }
      for (int64_t t = 0; t < ell; ++t) op.labels.push_back(kEllipsisKey + int(ellipsis_rank - ell + t));
    }
    p.operands.push_back(std::move(op));
  }
  std::vector<int> ellipsis_labels;
  for (int64_t t = 0; t < ellipsis_rank; ++t) ellipsis_labels.push_back(kEllipsisKey + int(t));
  if (!parsed.has_output) {
    p.output = ellipsis_labels;
    for (auto [l, count] : counts) {
      if (count == 1) p.output.push_back(l);
    }
    return p;
  }
  for (int l : reference::parse_einsum_term(parsed.output_text)) {
    if (l == kEllipsis) {
      p.output.insert(p.output.end(), ellipsis_labels.begin(), ellipsis_labels.end());
    } else {
      p.output.push_back(l);
    }
  }
  return p;
}


int64_t dim_of(FissionBuilder& b, const Operand& op, int label) {
  return b.shape(op.value)[size_t(std::find(op.labels.begin(), op.labels.end(), label) - op.labels.begin())];
}

// Sums out the dimensions whose label `keep` rejects.
template <typename Keep>
void sum_out(FissionBuilder& b, Operand& op, Keep keep) {
  std::vector<int64_t> axes;
  std::vector<int> kept;
  for (size_t d = 0; d < op.labels.size(); ++d) {
    if (keep(op.labels[d])) {
      kept.push_back(op.labels[d]);
    } else {
      axes.push_back(int64_t(d));
    }
  }
  if (axes.empty()) return;  // an empty axes list would mean "all" to ReduceSum
  op.value = b.reduce("ReduceSum", op.value, axes, false);
  op.labels = kept;
}

// Replaces each repeated label by its diagonal.
void take_diagonals(FissionBuilder& b, Operand& op) {
  for (size_t i = 0; i < op.labels.size(); ++i) {
    for (size_t j = i + 1; j < op.labels.size(); ++j) {
      if (op.labels[j] != op.labels[i]) continue;
      Shape mask_shape(op.labels.size(), 1);
      int64_t n = b.shape(op.value)[i];
      mask_shape[i] = mask_shape[j] = n;
      Tensor mask(DType::Bool, mask_shape);
      for (int64_t k = 0; k < n; ++k) mask.set_f64(k * n + k, 1.0);
      ValueId zero = b.scalar(0, b.dtype(op.value));
      op.value = b.add1("Where", {b.constant(std::move(mask)), op.value, zero});
      op.value = b.reduce("ReduceSum", op.value, {int64_t(j)}, false);
      op.labels.erase(op.labels.begin() + long(j));
      --j;
    }
  }
}

// The operand transposed to `order` and reshaped to `shape`.
ValueId arrange(FissionBuilder& b, const Operand& op, const std::vector<int>& order, const Shape& shape) {
  std::vector<int64_t> perm;
  for (int l : order) perm.push_back(int64_t(std::find(op.labels.begin(), op.labels.end(), l) - op.labels.begin()));
  return b.reshape(b.transpose(op.value, perm), shape);
}

int64_t size_product(FissionBuilder& b, const Operand& op, const std::vector<int>& labels) {
  int64_t p = 1;
  for (int l : labels) p *= dim_of(b, op, l);
  return p;
}

// A x B as one batched MatMul; `needed` holds the labels used after this step.
Operand contract(FissionBuilder& b, Operand a, Operand c, const std::set<int>& needed) {
  auto used = [&](int l) { return needed.count(l) != 0; };
  sum_out(b, a, [&](int l) { return used(l) || contains(c.labels, l); });
  sum_out(b, c, [&](int l) { return used(l) || contains(a.labels, l); });
  std::vector<int> batch, a_only, c_only, summed;
  for (int l : a.labels) (contains(c.labels, l) ? (used(l) ? batch : summed) : a_only).push_back(l);
  for (int l : c.labels) {
    if (!contains(a.labels, l)) c_only.push_back(l);
  }
  // A contracted label of size 1 on one side (a broadcast "..." dimension)
  // factors out: sum the other side over it first.
  std::vector<int64_t> a_axes, c_axes;
  for (int l : summed) {
    int64_t na = dim_of(b, a, l), nc = dim_of(b, c, l);
    if (na == 1 && nc != 1) c_axes.push_back(std::find(c.labels.begin(), c.labels.end(), l) - c.labels.begin());
    if (nc == 1 && na != 1) a_axes.push_back(std::find(a.labels.begin(), a.labels.end(), l) - a.labels.begin());
  }
  if (!a_axes.empty()) a.value = b.reduce("ReduceSum", a.value, a_axes, true);
  if (!c_axes.empty()) c.value = b.reduce("ReduceSum", c.value, c_axes, true);
  Shape a_shape, c_shape;
  for (int l : batch) a_shape.push_back(dim_of(b, a, l));
  for (int l : batch) c_shape.push_back(dim_of(b, c, l));
  int64_t k = size_product(b, a, summed);
  a_shape.insert(a_shape.end(), {size_product(b, a, a_only), k});
  c_shape.insert(c_shape.end(), {k, size_product(b, c, c_only)});
  std::vector<int> a_order = batch, c_order = batch;
  a_order.insert(a_order.end(), a_only.begin(), a_only.end());
  a_order.insert(a_order.end(), summed.begin(), summed.end());
  c_order.insert(c_order.end(), summed.begin(), summed.end());
  c_order.insert(c_order.end(), c_only.begin(), c_only.end());
  // Without a contracted label (K = 1) it is an outer product: a broadcasting
  // Mul of [.., M, 1] and [.., 1, N] is the same and stays elementwise.
  const char* op = summed.empty() ? "Mul" : "MatMul";
  ValueId product = b.binary(op, arrange(b, a, a_order, a_shape), arrange(b, c, c_order, c_shape));
  Shape full = b.shape(product);
  Shape out(full.begin(), full.end() - 2);
  for (int l : a_only) out.push_back(dim_of(b, a, l));
  for (int l : c_only) out.push_back(dim_of(b, c, l));
  Operand result{b.reshape(product, out), batch};
  result.labels.insert(result.labels.end(), a_only.begin(), a_only.end());
  result.labels.insert(result.labels.end(), c_only.begin(), c_only.end());
  return result;
}

std::vector<ValueId> einsum_rule(const Node& node, FissionBuilder& b) {
  EinsumProblem p = parse_einsum(node, b);
  for (Operand& op : p.operands) take_diagonals(b, op);
  Operand acc = p.operands[0];
  for (size_t i = 1; i < p.operands.size(); ++i) {
    std::set<int> needed(p.output.begin(), p.output.end());
    for (size_t j = i + 1; j < p.operands.size(); ++j) {
      needed.insert(p.operands[j].labels.begin(), p.operands[j].labels.end());
    }
    acc = contract(b, acc, p.operands[i], needed);
  }
  sum_out(b, acc, [&](int l) { return contains(p.output, l); });
  Shape shape;
  for (int l : p.output) shape.push_back(dim_of(b, acc, l));
  return {arrange(b, acc, p.output, shape)};
}

}  // namespace

void add_linear_rules(FissionRuleTable& table) {
  table.add("Gemm", gemm_rule);
  table.add("Einsum", einsum_rule);
}

}  // namespace orchid::fission
