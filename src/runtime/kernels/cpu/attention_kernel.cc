#include "runtime/kernels/cpu/attention_kernel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "runtime/kernels/cpu/direct_gemm.h"
#include "runtime/kernels/cpu/elementwise_math.h"
#include "runtime/kernels/cpu/onednn_linear_spec.h"
#include "runtime/kernels/cpu/registry.h"
#include "support/error.h"
#include "support/parallel.h"

namespace orchid::runtime::cpu {

namespace {

// What the nodes compute: out = softmax(mask(scale * q k^T)) v over the last
// axis, q [B..., Lq, d], K^T [B..., d, Lk], v [B..., Lk, dv], the same batch
// dims B... everywhere.
struct Attention {
  std::vector<size_t> nodes;  // ascending
  ValueId q = kNoValue, kt = kNoValue, v = kNoValue, out = kNoValue;
  float scale = 1.f;
  ValueId condition = kNoValue;  // Where(condition, fill, scores), or with the branches swapped
  bool fill_where_true = true;
  float fill = 0.f;
  ValueId additive = kNoValue;  // Add(scores, mask)
};

using onednn::is_f32;
using onednn::uniform_constant;

// A constant that broadcasts against scores [B..., Lq, Lk] along their last
// two axes only (its other dims are 1).
bool is_score_mask(const Graph& graph, ValueId id, const Shape& scores) {
  if (id == kNoValue || !graph.value(id).is_constant()) return false;
  const Shape& m = graph.type(id).shape;
  if (m.size() > scores.size()) return false;
  for (size_t i = 0; i < m.size(); ++i) {
    const size_t axis = scores.size() - m.size() + i;
    const bool trailing = axis + 2 >= scores.size();
    if (m[i] != 1 && (!trailing || m[i] != scores[axis])) return false;
  }
  return true;
}

class Matcher {
 public:
  explicit Matcher(const Graph& graph) : graph_(graph), consumers_(graph.num_values()), output_(graph.num_values()) {
    for (size_t i = 0; i < graph.nodes().size(); ++i) {
      for (ValueId id : graph.nodes()[i].inputs) {
        if (id != kNoValue) consumers_[size_t(id)].push_back(i);
      }
    }
    for (ValueId id : graph.outputs()) output_[size_t(id)] = true;
  }

  std::optional<Attention> match(size_t first) {
    a_ = Attention{};
    const Node& m1 = graph_.nodes()[first];
    if (!is_op(m1, "MatMul", 2) || !is_f32(graph_, m1.inputs[0]) || !is_f32(graph_, m1.inputs[1])) return std::nullopt;
    const Shape& s = graph_.type(m1.outputs[0]).shape;
    if (s.size() < 2) return std::nullopt;
    a_.nodes = {first};
    a_.q = m1.inputs[0];
    a_.kt = m1.inputs[1];
    ValueId x = m1.outputs[0];
    x = take_scale(x);
    x = take_mask(x, s);
    std::optional<ValueId> p = take_softmax(x, s.size());
    if (!p) return std::nullopt;
    const std::optional<size_t> m2 = sole_consumer(*p);
    if (!m2 || !is_op(graph_.nodes()[*m2], "MatMul", 2) || graph_.nodes()[*m2].inputs[0] != *p) return std::nullopt;
    a_.v = graph_.nodes()[*m2].inputs[1];
    a_.out = graph_.nodes()[*m2].outputs[0];
    a_.nodes.push_back(*m2);
    if (!shapes_agree(s)) return std::nullopt;
    std::sort(a_.nodes.begin(), a_.nodes.end());
    return a_;
  }

 private:
  bool is_op(const Node& node, const char* op, size_t inputs) const {
    return node.op == op && node.domain.empty() && node.inputs.size() == inputs && node.outputs.size() == 1 &&
           node.outputs[0] != kNoValue;
  }

  // The node that reads `value` (once) as its only reader; not a graph output.
  std::optional<size_t> sole_consumer(ValueId value) const {
    if (output_[size_t(value)] || consumers_[size_t(value)].size() != 1) return std::nullopt;
    return consumers_[size_t(value)][0];
  }

  // Mul by a scalar (either side) or Div by one.
  ValueId take_scale(ValueId x) {
    const std::optional<size_t> next = sole_consumer(x);
    if (!next) return x;
    const Node& n = graph_.nodes()[*next];
    if (!is_op(n, n.op == "Div" ? "Div" : "Mul", 2) || graph_.type(n.outputs[0]) != graph_.type(x)) return x;
    const bool first = n.inputs[0] == x;
    if (n.op == "Div" && !first) return x;
    const std::optional<float> c = uniform_constant(graph_, first ? n.inputs[1] : n.inputs[0]);
    if (!c || (n.op == "Div" && *c == 0.f)) return x;
    a_.scale = n.op == "Div" ? 1.f / *c : *c;  // x / c as x * (1 / c): within an ulp
    a_.nodes.push_back(*next);
    return n.outputs[0];
  }

  // Where(condition, fill, x) / Where(condition, x, fill) with a constant
  // condition and a scalar fill, or Add(x, constant mask) either side.
  ValueId take_mask(ValueId x, const Shape& scores) {
    const std::optional<size_t> next = sole_consumer(x);
    if (!next) return x;
    const Node& n = graph_.nodes()[*next];
    if (n.outputs.size() != 1 || n.outputs[0] == kNoValue || graph_.type(n.outputs[0]) != graph_.type(x)) return x;
    if (is_op(n, "Where", 3) && (n.inputs[1] == x) != (n.inputs[2] == x)) {
      const ValueId condition = n.inputs[0];
      const std::optional<float> fill = uniform_constant(graph_, n.inputs[1] == x ? n.inputs[2] : n.inputs[1]);
      if (!fill || graph_.type(condition).dtype != DType::Bool || !is_score_mask(graph_, condition, scores)) return x;
      a_.condition = condition, a_.fill = *fill, a_.fill_where_true = n.inputs[2] == x;
    } else if (is_op(n, "Add", 2) && (n.inputs[0] == x) != (n.inputs[1] == x)) {
      const ValueId mask = n.inputs[0] == x ? n.inputs[1] : n.inputs[0];
      if (!is_f32(graph_, mask) || !is_score_mask(graph_, mask, scores)) return x;
      a_.additive = mask;
    } else {
      return x;
    }
    a_.nodes.push_back(*next);
    return n.outputs[0];
  }

  // Whether `axes` (a reduction's second input) is the last axis alone.
  bool last_axis(const Node& reduce, size_t rank) const {
    if (reduce.attrs.get_int("keepdims", 1) != 1 || reduce.inputs.size() != 2) return false;
    const ValueId axes = reduce.inputs[1];
    if (axes == kNoValue || !graph_.value(axes).is_constant() || graph_.type(axes).numel() != 1) return false;
    const int64_t axis = int64_t(graph_.value(axes).constant->at_f64(0));
    return axis == -1 || axis == int64_t(rank) - 1;
  }

  // `x` read by exactly a `reduce` over the last axis (keepdims) and a
  // `combine`(x, reduction) that alone reads the reduction: their nodes.
  std::optional<std::pair<size_t, size_t>> reduce_then_combine(ValueId x, const char* reduce, const char* combine,
                                                               size_t rank) const {
    if (output_[size_t(x)] || consumers_[size_t(x)].size() != 2) return std::nullopt;
    auto [r, c] = std::pair(consumers_[size_t(x)][0], consumers_[size_t(x)][1]);
    if (graph_.nodes()[r].op != reduce) std::swap(r, c);
    const Node& rn = graph_.nodes()[r];
    const Node& cn = graph_.nodes()[c];
    if (rn.op != reduce || !rn.domain.empty() || rn.outputs.size() != 1 || !last_axis(rn, rank)) return std::nullopt;
    if (!is_op(cn, combine, 2) || cn.inputs[0] != x || cn.inputs[1] != rn.outputs[0] || sole_consumer(rn.outputs[0]) != c) {
      return std::nullopt;
    }
    return std::pair(r, c);
  }

  // Fission's softmax over the last axis: e = Exp(Sub(x, ReduceMax(x))),
  // Div(e, ReduceSum(e)); the probabilities' value.
  std::optional<ValueId> take_softmax(ValueId x, size_t rank) {
    const std::optional<std::pair<size_t, size_t>> shift = reduce_then_combine(x, "ReduceMax", "Sub", rank);
    if (!shift) return std::nullopt;
    const std::optional<size_t> exp = sole_consumer(graph_.nodes()[shift->second].outputs[0]);
    if (!exp || !is_op(graph_.nodes()[*exp], "Exp", 1)) return std::nullopt;
    const std::optional<std::pair<size_t, size_t>> normalize =
        reduce_then_combine(graph_.nodes()[*exp].outputs[0], "ReduceSum", "Div", rank);
    if (!normalize) return std::nullopt;
    a_.nodes.insert(a_.nodes.end(), {shift->first, shift->second, *exp, normalize->first, normalize->second});
    return graph_.nodes()[normalize->second].outputs[0];
  }

  // q, k, v and the output with the same batch dims, the scores' sizes, float32.
  bool shapes_agree(const Shape& scores) const {
    const Shape &q = graph_.type(a_.q).shape, &k = graph_.type(a_.kt).shape, &v = graph_.type(a_.v).shape;
    const Shape& out = graph_.type(a_.out).shape;
    const size_t rank = scores.size();
    if (q.size() != rank || k.size() != rank || v.size() != rank || out.size() != rank) return false;
    if (!is_f32(graph_, a_.v) || !is_f32(graph_, a_.out)) return false;
    for (size_t i = 0; i + 2 < rank; ++i) {
      if (q[i] != scores[i] || k[i] != scores[i] || v[i] != scores[i] || out[i] != scores[i]) return false;
    }
    const int64_t lq = scores[rank - 2], lk = scores[rank - 1], d = q[rank - 1];
    return q[rank - 2] == lq && k[rank - 1] == lk && k[rank - 2] == d && v[rank - 2] == lk && out[rank - 2] == lq &&
           out[rank - 1] == v[rank - 1] && lq > 0 && lk > 0 && d > 0;
  }

  const Graph& graph_;
  std::vector<std::vector<size_t>> consumers_;
  std::vector<bool> output_;
  Attention a_;
};

// The scores transposed, per batch item and block of query rows: S^T = K
// q^T (keys x rows), so the softmax over the keys runs down columns, one
// vector per 16 queries; then O^T = V^T E^T and O = O^T^T / sum. K and V^T
// are the A sides of the direct kernels' register-blocked GEMM, packed once
// per batch item and run (packing the block's q or probabilities per task
// instead cost as much as the products); q^T and O^T are small transposes
// per task.
class AttentionKernel : public Kernel {
 public:
  AttentionKernel(const Graph& graph, const KernelGroup& group, const Attention& a) : a_(a) {
    const Shape& q = graph.type(a.q).shape;
    const size_t rank = q.size();
    batch_ = shape_numel(Shape(q.begin(), q.end() - 2));
    lq_ = q[rank - 2], d_ = q[rank - 1];
    lk_ = graph.type(a.v).shape[rank - 2], dv_ = graph.type(a.v).shape[rank - 1];
    q_input_ = int(input_slot(group, a.q)), k_input_ = int(input_slot(group, a.kt)), v_input_ = int(input_slot(group, a.v));
    if (a.condition != kNoValue) mask_from(graph, a.condition);
    if (a.additive != kNoValue) mask_from(graph, a.additive);
    zeros_.assign(size_t(std::max(lk_, dv_)), 0.f);
  }

  void run(const KernelArgs& args) override {
    const float* q = static_cast<const float*>(args.inputs[size_t(q_input_)]);
    const float* kt = static_cast<const float*>(args.inputs[size_t(k_input_)]);
    const float* v = static_cast<const float*>(args.inputs[size_t(v_input_)]);
    float* out = static_cast<float*>(args.outputs[0]);
    keys_.resize(size_t(batch_));
    values_.resize(size_t(batch_));
    parallel_for(batch_, 1, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        // K [Lk][d] and V^T [dv][Lk], in 8-row blocks: the 8 x 32 tile is one query block wide.
        keys_[size_t(b)] = direct::PackedWeights(kt + b * d_ * lk_, lk_, d_, 1, lk_, 8);
        values_[size_t(b)] = direct::PackedWeights(v + b * lk_ * dv_, dv_, lk_, 1, dv_, 8);
      }
    });
    const int64_t blocks = (lq_ + kBlock - 1) / kBlock;
    parallel_for(batch_ * blocks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        const int64_t b = task / blocks, r0 = task % blocks * kBlock;
        block(b, r0, std::min(kBlock, lq_ - r0), q + (b * lq_ + r0) * d_, out + (b * lq_ + r0) * dv_);
      }
    });
  }

  std::string implementation() const override { return "attention (scores in cache)"; }
  bool reads_input_at_run(size_t input) const override {
    return int(input) == q_input_ || int(input) == k_input_ || int(input) == v_input_;
  }

 private:
  static constexpr int64_t kBlock = 32;  // query rows per task: one 8 x 32 GEMM tile wide

  // Query rows [r0, r0 + n) of batch item b: q its rows, out its output rows.
  void block(int64_t b, int64_t r0, int64_t n, const float* q, float* out) const {
    thread_local std::vector<float> qt, scores, ot, sums;
    thread_local std::vector<const float*> rows;
    qt.resize(size_t(d_ * kBlock));
    scores.resize(size_t(lk_ * kBlock));
    ot.resize(size_t(dv_ * kBlock));
    sums.resize(size_t(kBlock));
    rows.resize(size_t(std::max(d_, lk_)));
    // q^T, scaled (scale (q k) as (scale q) k: equal in real arithmetic, one pass fewer).
    const float scale = a_.scale;
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c < d_; ++c) qt[size_t(c * kBlock + r)] = q[r * d_ + c] * scale;
    }
    // S^T = K q^T: B's rows are q^T's rows.
    for (int64_t c = 0; c < d_; ++c) rows[size_t(c)] = qt.data() + c * kBlock;
    keys_[size_t(b)].multiply(rows.data(), n, scores.data(), kBlock, 0, lk_, zeros_.data());
    softmax_columns(scores.data(), r0, n, sums.data());
    // O^T = V^T E^T: B's rows are E^T's rows.
    for (int64_t j = 0; j < lk_; ++j) rows[size_t(j)] = scores.data() + j * kBlock;
    values_[size_t(b)].multiply(rows.data(), n, ot.data(), kBlock, 0, dv_, zeros_.data());
    for (int64_t r = 0; r < n; ++r) {
      const float inverse = 1.f / sums[size_t(r)];
      for (int64_t c = 0; c < dv_; ++c) out[r * dv_ + c] = ot[size_t(c * kBlock + r)] * inverse;
    }
  }

  // The columns [0, n) of S^T (Lk rows of kBlock, already scaled): masked, e =
  // exp(s - max over the keys) in place (an argument <= 0: exp_nonpositive);
  // each column's sum of e into sums.
  // Every loop runs along a row (the queries), so the compiler vectorizes
  // it; the columns past n are zeros, finite and unused.
  void softmax_columns(float* s, int64_t r0, int64_t n, float* sums) const {
    const float fill = a_.fill, hit = a_.fill_where_true ? 1.f : 0.f;
    float max[kBlock], sum[kBlock];
    std::fill(max, max + kBlock, -std::numeric_limits<float>::infinity());
    std::fill(sum, sum + kBlock, 0.f);
    for (int64_t j = 0; j < lk_; ++j) {
      float* row = s + j * kBlock;
      const float* mask = mask_.empty() ? nullptr : mask_.data() + j * lq_ + r0;
      if (a_.condition != kNoValue) {
        for (int64_t r = 0; r < n; ++r) row[r] = (mask[r] != 0.f ? 1.f : 0.f) == hit ? fill : row[r];
      } else if (mask) {
        for (int64_t r = 0; r < n; ++r) row[r] += mask[r];
      }
      for (int64_t r = n; r < kBlock; ++r) row[r] = 0.f;
      for (int64_t r = 0; r < kBlock; ++r) max[r] = row[r] > max[r] ? row[r] : max[r];
    }
    for (int64_t j = 0; j < lk_; ++j) {
      float* row = s + j * kBlock;
      for (int64_t r = 0; r < kBlock; ++r) row[r] = fast_math::exp_nonpositive(row[r] - max[r]);
      for (int64_t r = 0; r < kBlock; ++r) sum[r] += row[r];
    }
    std::copy(sum, sum + n, sums);
  }

  // The mask's values, transposed to [Lk][Lq] (its trailing dims broadcast).
  void mask_from(const Graph& graph, ValueId id) {
    const Shape& m = graph.type(id).shape;
    const int64_t rows = m.size() >= 2 ? m[m.size() - 2] : 1, cols = m.empty() ? 1 : m.back();
    const std::vector<float> values = onednn::constant_values(*graph.value(id).constant);
    mask_.resize(size_t(lq_ * lk_));
    for (int64_t i = 0; i < lq_; ++i) {
      for (int64_t j = 0; j < lk_; ++j) {
        mask_[size_t(j * lq_ + i)] = values[size_t((rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j))];
      }
    }
  }

  Attention a_;
  int64_t batch_ = 1, lq_ = 0, lk_ = 0, d_ = 0, dv_ = 0;
  int q_input_ = -1, k_input_ = -1, v_input_ = -1;
  std::vector<float> mask_;   // [Lk, Lq]: the condition (1/0) or the additive mask
  std::vector<float> zeros_;  // the GEMMs' bias
  std::vector<direct::PackedWeights> keys_, values_;  // per batch item, this run's K and V^T
};

}  // namespace

std::optional<std::vector<size_t>> find_attention(const Graph& graph, size_t matmul) {
  std::optional<Attention> a = Matcher(graph).match(matmul);
  if (!a) return std::nullopt;
  return a->nodes;
}

int64_t attention_scores(const Graph& graph, size_t matmul) {
  const Shape& s = graph.type(graph.nodes()[matmul].outputs[0]).shape;
  return s.size() < 2 ? 0 : s[s.size() - 2] * s[s.size() - 1];
}

std::unique_ptr<Kernel> make_attention_kernel(const Graph& graph, const KernelGroup& group) {
  if (group.nodes.size() < 7 || !group.variant.empty()) return nullptr;
  for (size_t node : group.nodes) {
    if (graph.nodes()[node].op != "MatMul") continue;
    std::optional<Attention> a = Matcher(graph).match(node);
    if (!a || a->nodes != group.nodes || group.outputs != std::vector<ValueId>{a->out}) return nullptr;
    return std::make_unique<AttentionKernel>(graph, group, *a);
  }
  return nullptr;
}

}  // namespace orchid::runtime::cpu
