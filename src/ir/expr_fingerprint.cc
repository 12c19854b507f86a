// Name-independent fingerprints (semantics in expr_fingerprint.h).
#include "ir/expr_fingerprint.h"

#include <algorithm>
#include <unordered_map>

#include "ir/expr_hash.h"

namespace orchid::expr {

using detail::hash_combine;

namespace {

// Distinct seeds keep different node kinds and iterator roles apart.
enum Tag : uint64_t {
  kConstTag = 0x11,
  kFreeIterTag,
  kAffineTag,
  kFloorDivTag,
  kModTag,
  kAddTag,
  kSubTag,
  kMulTag,
  kDivTag,
  kCallTag,
  kTensorTag,
  kAccessTag,
  kScopeTag,
  kLoopIterTag,
  kSumIterTag,
  kAnonSumTag,
  kSelfSumTag,
};

uint64_t binary_tag(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return kAddTag;
    case BinaryOp::Sub: return kSubTag;
    case BinaryOp::Mul: return kMulTag;
    case BinaryOp::Div: return kDivTag;
  }
  return 0;
}

uint64_t hash_sorted(uint64_t seed, std::vector<uint64_t> parts) {
  std::sort(parts.begin(), parts.end());
  seed = hash_combine(seed, parts.size());
  for (uint64_t p : parts) seed = hash_combine(seed, p);
  return seed;
}

uint64_t range_tag(uint64_t tag, uint64_t id, const IterRange& r) {
  return hash_combine(hash_combine(hash_combine(tag, id), r.lo), r.hi);
}

// Hashes a body under an assignment of tags to bound iterators.
class Fingerprinter {
 public:
  void bind(Expr iter, uint64_t tag) {
    env_[iter] = tag;
    memo_.clear();
  }

  uint64_t fp(Expr e) {
    if (auto it = memo_.find(e); it != memo_.end()) return it->second;
    const uint64_t h = compute(e);
    memo_.emplace(e, h);
    return h;
  }

 private:
  uint64_t compute(Expr e);
  uint64_t affine(const AffineNode& a);
  uint64_t binary(const BinaryNode& b);
  void collect_chain(Expr e, BinaryOp op, std::vector<uint64_t>& out);

  std::unordered_map<Expr, uint64_t> env_;
  std::unordered_map<Expr, uint64_t> memo_;  // valid for the current env_
};

uint64_t tensor_fp(const TensorNode& t) {
  uint64_t h = hash_combine(kTensorTag, detail::hash_string(t.name()));
  for (int64_t d : t.shape()) h = hash_combine(h, d);
  for (int64_t p : t.pads()) h = hash_combine(h, p);
  return hash_combine(h, t.rank());
}

uint64_t Fingerprinter::compute(Expr e) {
  switch (e->kind()) {
    case NodeKind::Const: return hash_combine(kConstTag, detail::hash_double(e->as<ConstNode>().value()));
    case NodeKind::Iter: {
      if (auto it = env_.find(e); it != env_.end()) return it->second;
      return hash_combine(kFreeIterTag, detail::hash_string(e->as<IterNode>().name()));
    }
    case NodeKind::Affine: return affine(e->as<AffineNode>());
    case NodeKind::FloorDiv:
    case NodeKind::Mod: {
      const auto& d = e->as<DivModNode>();
      const uint64_t tag = e->kind() == NodeKind::Mod ? kModTag : kFloorDivTag;
      return hash_combine(hash_combine(tag, fp(d.operand())), d.divisor());
    }
    case NodeKind::Binary: return binary(e->as<BinaryNode>());
    case NodeKind::Call: {
      const auto& c = e->as<CallNode>();
      return hash_combine(hash_combine(kCallTag, static_cast<uint64_t>(c.func())), fp(c.arg()));
    }
    case NodeKind::Tensor: return tensor_fp(e->as<TensorNode>());
    case NodeKind::Access: {
      const auto& a = e->as<AccessNode>();
      uint64_t h = hash_combine(kAccessTag, fp(a.source()));
      for (Expr i : a.indices()) h = hash_combine(h, fp(i));
      return h;
    }
    case NodeKind::Scope: return e->as<ScopeNode>().fingerprint();
  }
  return 0;
}

uint64_t Fingerprinter::affine(const AffineNode& a) {
  std::vector<uint64_t> terms;
  for (const AffineTerm& t : a.terms()) terms.push_back(hash_combine(static_cast<uint64_t>(t.coef), fp(t.atom)));
  return hash_sorted(hash_combine(kAffineTag, static_cast<uint64_t>(a.constant())), std::move(terms));
}

uint64_t Fingerprinter::binary(const BinaryNode& b) {
  if (b.op() == BinaryOp::Add || b.op() == BinaryOp::Mul) {
    std::vector<uint64_t> operands;
    collect_chain(&b, b.op(), operands);
    return hash_sorted(binary_tag(b.op()), std::move(operands));
  }
  return hash_combine(hash_combine(binary_tag(b.op()), fp(b.lhs())), fp(b.rhs()));
}

void Fingerprinter::collect_chain(Expr e, BinaryOp op, std::vector<uint64_t>& out) {
  const auto* b = e->try_as<BinaryNode>();
  if (b == nullptr || b->op() != op) {
    out.push_back(fp(e));
    return;
  }
  collect_chain(b->lhs(), op, out);
  collect_chain(b->rhs(), op, out);
}

// Orders the sum iterators by (range, signature); ties keep declaration order.
std::vector<size_t> rank_sums(const ScopeNode& scope, Fingerprinter& f) {
  const auto& sums = scope.sums();
  std::vector<uint64_t> signature(sums.size(), 0);
  if (sums.size() > 1) {
    for (size_t s = 0; s < sums.size(); ++s) {
      for (size_t o = 0; o < sums.size(); ++o) {
        f.bind(sums[o].iter, range_tag(o == s ? kSelfSumTag : kAnonSumTag, 0, sums[o]));
      }
      signature[s] = f.fp(scope.body());
    }
  }
  std::vector<size_t> order(sums.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sums[a].lo != sums[b].lo) return sums[a].lo < sums[b].lo;
    if (sums[a].hi != sums[b].hi) return sums[a].hi < sums[b].hi;
    return signature[a] < signature[b];
  });
  return order;
}

}  // namespace

uint64_t detail::compute_scope_fingerprint(const ScopeNode& scope) {
  Fingerprinter f;
  uint64_t h = hash_combine(kScopeTag, scope.rank());
  for (size_t i = 0; i < scope.loops().size(); ++i) {
    const IterRange& r = scope.loops()[i];
    f.bind(r.iter, range_tag(kLoopIterTag, i, r));
    h = hash_combine(hash_combine(hash_combine(h, r.lo), r.hi), scope.pads()[i]);
  }
  const std::vector<size_t> order = rank_sums(scope, f);
  h = hash_combine(h, order.size());
  for (size_t rank = 0; rank < order.size(); ++rank) {
    const IterRange& r = scope.sums()[order[rank]];
    f.bind(r.iter, range_tag(kSumIterTag, rank, r));
    h = hash_combine(hash_combine(h, r.lo), r.hi);
  }
  return hash_combine(h, f.fp(scope.body()));
}

uint64_t fingerprint(Expr e) {
  ORCHID_CHECK(e != nullptr) << "fingerprint of null expr";
  if (const auto* s = e->try_as<ScopeNode>()) return s->fingerprint();
  Fingerprinter f;
  return f.fp(e);
}

}  // namespace orchid::expr
