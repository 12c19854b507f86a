// Einsum with numpy semantics: comma-separated input terms of letters, an
// optional "..." per term standing for the leading dimensions not named by
// letters (broadcast across operands, right-aligned), an optional "->" output
// term. Without "->" the output is the ellipsis dimensions followed by the
// letters used exactly once, in ASCII order (so upper case before lower
// case). A letter repeated within one term takes a diagonal. Letters missing
// from the output are summed over.
//
// The evaluation is one generic loop over every combination of label values;
// the strides of an operand along a label are summed over its dimensions with
// that label, which is what makes repeated labels read diagonals.
#include "reference/ops/einsum.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "reference/ops/conv_utils.h"
#include "reference/ops/op_utils.h"
#include "support/error.h"

namespace orchid::reference {
namespace {

constexpr int kEllipsis = kEinsumEllipsis;
constexpr int kEllipsisKey = 1000;  // label keys of ellipsis dimensions: 1000 + position

struct EinsumPlan {
  std::vector<int64_t> sizes;                 // per label; the output labels come first
  size_t num_out = 0;                         // number of output labels
  std::vector<std::vector<int64_t>> strides;  // per operand, per label (0 where broadcast)
  Shape out_shape;
};

class EinsumPlanner {
 public:
  EinsumPlan plan(const std::string& equation, const std::vector<Shape>& shapes) {
    EinsumEquation parsed = parse_einsum_equation(equation);
    std::vector<std::vector<int>>& terms = parsed.inputs;
    if (terms.size() != shapes.size()) {
      ORCHID_FAIL() << "Einsum: equation '" << equation << "' has " << terms.size() << " input terms but "
                    << shapes.size() << " inputs are given";
    }
    for (size_t i = 0; i < terms.size(); ++i) dims_.push_back(expand(terms[i], shapes[i], i));
    for (size_t i = 0; i < terms.size(); ++i) record_sizes(dims_[i], shapes[i], i);
    std::vector<int> out = parsed.has_output ? explicit_output(parsed.output_text) : implicit_output();
    return build(out, shapes);
  }

 private:
  // The label key of every dimension of operand i.
  std::vector<int> expand(const std::vector<int>& term, const Shape& shape, size_t i) {
    int64_t letters = std::count_if(term.begin(), term.end(), [](int l) { return l != kEllipsis; });
    bool has_ellipsis = int64_t(term.size()) != letters;
    int64_t ell_rank = int64_t(shape.size()) - letters;
    if (ell_rank < 0 || (!has_ellipsis && ell_rank != 0)) {
      ORCHID_FAIL() << "Einsum: term " << i << " names " << letters << " dimensions but input " << i
                    << " has shape " << shape_to_string(shape);
    }
    ellipsis_rank_ = std::max(ellipsis_rank_, ell_rank);
    ell_ranks_.push_back(ell_rank);
    std::vector<int> keys;
    for (int l : term) {
      if (l != kEllipsis) {
        keys.push_back(l);
        ++letter_count_[l];
        continue;
      }
      for (int64_t t = 0; t < ell_rank; ++t) keys.push_back(-1 - int(t));  // fixed up below
    }
    return keys;
  }

  // Ellipsis dimensions align to the right across operands; sizes must match
  // (letters) or broadcast (ellipsis dimensions of size 1).
  void record_sizes(std::vector<int>& keys, const Shape& shape, size_t i) {
    for (size_t d = 0; d < keys.size(); ++d) {
      if (keys[d] < 0) keys[d] = kEllipsisKey + int(ellipsis_rank_ - ell_ranks_[i]) + (-1 - keys[d]);
      int key = keys[d];
      auto [it, inserted] = size_.emplace(key, shape[d]);
      if (inserted || it->second == shape[d]) continue;
      if (key >= kEllipsisKey && (it->second == 1 || shape[d] == 1)) {
        it->second = std::max(it->second, shape[d]);
        continue;
      }
      ORCHID_FAIL() << "Einsum: dimension " << d << " of input " << i << " has size " << shape[d]
                    << " but the same label has size " << it->second << " elsewhere";
    }
  }

  std::vector<int> implicit_output() const {
    std::vector<int> out;
    for (int64_t t = 0; t < ellipsis_rank_; ++t) out.push_back(kEllipsisKey + int(t));
    for (auto [letter, count] : letter_count_) {  // std::map: ASCII order
      if (count == 1) out.push_back(letter);
    }
    return out;
  }

  std::vector<int> explicit_output(const std::string& rhs) const {
    std::vector<int> out;
    bool has_ellipsis = false;
    for (int l : parse_einsum_term(rhs)) {
      if (l == kEllipsis) {
        has_ellipsis = true;
        for (int64_t t = 0; t < ellipsis_rank_; ++t) out.push_back(kEllipsisKey + int(t));
        continue;
      }
      if (!letter_count_.count(l)) ORCHID_FAIL() << "Einsum: output label '" << char(l) << "' is not in any input";
      if (std::count(out.begin(), out.end(), l)) ORCHID_FAIL() << "Einsum: output label '" << char(l) << "' repeats";
      out.push_back(l);
    }
    if (!has_ellipsis && ellipsis_rank_ > 0) {
      ORCHID_FAIL() << "Einsum: the inputs have '...' dimensions but the output term '" << rhs << "' has no '...'";
    }
    return out;
  }

  EinsumPlan build(const std::vector<int>& out, const std::vector<Shape>& shapes) const {
    std::vector<int> order = out;
    for (const auto& keys : dims_) {
      for (int k : keys) {
        if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
      }
    }
    EinsumPlan p;
    p.num_out = out.size();
    for (int k : order) p.sizes.push_back(size_.at(k));
    p.out_shape.assign(p.sizes.begin(), p.sizes.begin() + long(out.size()));
    for (size_t i = 0; i < dims_.size(); ++i) {
      std::vector<int64_t> strides(order.size(), 0);
      std::vector<int64_t> dim_strides = shape_strides(shapes[i]);
      for (size_t d = 0; d < dims_[i].size(); ++d) {
        size_t label = size_t(std::find(order.begin(), order.end(), dims_[i][d]) - order.begin());
        if (shapes[i][d] != 1 || p.sizes[label] == 1) strides[label] += dim_strides[d];
      }
      p.strides.push_back(std::move(strides));
    }
    return p;
  }

  std::vector<std::vector<int>> dims_;
  std::vector<int64_t> ell_ranks_;
  int64_t ellipsis_rank_ = 0;
  std::map<int, int64_t> letter_count_;
  std::map<int, int64_t> size_;
};

// Advances the odometer over labels [first, last) and the operand offsets
// with it; false when it wraps around.
bool advance(const EinsumPlan& p, size_t first, size_t last, std::vector<int64_t>& idx,
             std::vector<int64_t>& offsets) {
  for (size_t l = last; l-- > first;) {
    for (size_t i = 0; i < offsets.size(); ++i) offsets[i] += p.strides[i][l];
    if (++idx[l] < p.sizes[l]) return true;
    for (size_t i = 0; i < offsets.size(); ++i) offsets[i] -= p.strides[i][l] * p.sizes[l];
    idx[l] = 0;
  }
  return false;
}

template <typename Acc>
std::vector<Acc> run_einsum(const EinsumPlan& p, const std::vector<std::vector<Acc>>& operands) {
  std::vector<Acc> y(size_t(shape_numel(p.out_shape)), Acc(0));
  int64_t sum_numel = 1;
  for (size_t l = p.num_out; l < p.sizes.size(); ++l) sum_numel *= p.sizes[l];
  if (y.empty() || sum_numel == 0) return y;
  size_t L = p.sizes.size();
  std::vector<int64_t> idx(L, 0), out_offsets(operands.size(), 0);
  for (Acc& out : y) {
    std::vector<int64_t> offsets = out_offsets;
    Acc sum(0);
    do {
      Acc product(1);
      for (size_t i = 0; i < operands.size(); ++i) product *= operands[i][size_t(offsets[i])];
      sum += product;
    } while (advance(p, p.num_out, L, idx, offsets));
    out = sum;
    advance(p, 0, p.num_out, idx, out_offsets);
  }
  return y;
}

constexpr std::initializer_list<DType> kEinsumTypes = {
    DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int8,   DType::Int16,
    DType::Int32,   DType::Int64,   DType::UInt8,   DType::UInt16,   DType::UInt32, DType::UInt64};

std::vector<TensorType> infer_einsum(const InferContext& ctx) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    check_dtype(ctx.input(i).dtype, kEinsumTypes, i, "Inputs");
    if (ctx.input(i).dtype != ctx.input(0).dtype) {
      ORCHID_FAIL() << "Einsum: input " << i << " has dtype " << dtype_name(ctx.input(i).dtype)
                    << " but input 0 has " << dtype_name(ctx.input(0).dtype);
    }
    shapes.push_back(ctx.input(i).shape);
  }
  EinsumPlan plan = EinsumPlanner().plan(ctx.attrs().get_string("equation", ""), shapes);
  return one(ctx.input(0).dtype, plan.out_shape);
}

template <typename Acc>
Tensor einsum_typed(const EvalContext& ctx, const EinsumPlan& plan) {
  std::vector<std::vector<Acc>> operands;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) operands.push_back(to_acc<Acc>(ctx.input(i)));
  return from_acc(run_einsum(plan, operands), ctx.output_types[0]);
}

std::vector<Tensor> eval_einsum(const EvalContext& ctx) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) shapes.push_back(ctx.input(i).shape());
  EinsumPlan plan = EinsumPlanner().plan(ctx.attrs().get_string("equation", ""), shapes);
  if (is_float(ctx.input(0).dtype())) return {einsum_typed<double>(ctx, plan)};
  return {einsum_typed<uint64_t>(ctx, plan)};
}

}  // namespace

std::vector<int> parse_einsum_term(const std::string& term) {
  std::vector<int> labels;
  for (size_t i = 0; i < term.size(); ++i) {
    char c = term[i];
    if (c == '.') {
      if (term.compare(i, 3, "...") != 0) ORCHID_FAIL() << "Einsum: a lone '.' in term '" << term << "'";
      if (std::count(labels.begin(), labels.end(), kEinsumEllipsis) != 0) {
        ORCHID_FAIL() << "Einsum: more than one '...' in term '" << term << "'";
      }
      labels.push_back(kEinsumEllipsis);
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      labels.push_back(c);
    } else {
      ORCHID_FAIL() << "Einsum: unexpected character '" << c << "' in term '" << term << "'";
    }
  }
  return labels;
}

EinsumEquation parse_einsum_equation(const std::string& equation) {
  std::string eq;
  for (char c : equation) {
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  }
  EinsumEquation parsed;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    parsed.inputs.push_back(parse_einsum_term(lhs.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    parsed.has_output = true;
    parsed.output_text = eq.substr(arrow + 2);
  }
  return parsed;
}


void register_einsum_op(OpRegistry& registry) {
  registry.add({"Einsum", "", infer_einsum, eval_einsum, 1, SIZE_MAX});
}

}  // namespace orchid::reference
