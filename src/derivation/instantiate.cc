// Instantiation of a derivation state into primitives (instantiate.h): the
// scopes are emitted innermost first, each becoming a graph value that holds
// its loop box; compute scopes go to instantiate_linear.cc, memory-bound
// ones to instantiate_memory.cc.
#include "derivation/instantiate.h"

#include "derivation/instantiate_internal.h"
#include "ir/expr_utils.h"

namespace orchid::derivation {

using namespace expr;

namespace {

bool depends_on_sums(Expr factor, const ScopeNode& scope) {
  for (Expr it : free_iterators(factor)) {
    for (const IterRange& r : scope.sums()) {
      if (r.iter == it) return true;
    }
  }
  return false;
}

// How many factors of the product `e` vary with the scope's sum iterators.
int varying_factors(Expr e, const ScopeNode& scope) {
  const auto* bin = e->try_as<BinaryNode>();
  if (bin && (bin->op() == BinaryOp::Mul || bin->op() == BinaryOp::Div)) {
    return varying_factors(bin->lhs(), scope) + varying_factors(bin->rhs(), scope);
  }
  return depends_on_sums(e, scope) ? 1 : 0;
}

// Whether some term of the sum `e` is a product of two varying factors.
bool has_varying_product(Expr e, const ScopeNode& scope) {
  const auto* bin = e->try_as<BinaryNode>();
  if (bin && (bin->op() == BinaryOp::Add || bin->op() == BinaryOp::Sub)) {
    return has_varying_product(bin->lhs(), scope) || has_varying_product(bin->rhs(), scope);
  }
  if (const auto* call = e->try_as<CallNode>(); call && call->func() == Func::Neg) {
    return has_varying_product(call->arg(), scope);
  }
  return varying_factors(e, scope) >= 2;
}

// Empty when `scope` can be emitted, else why not.
std::string scope_blocker(const ScopeNode& scope) {
  if (!is_compute_scope(scope)) return inst::memory_scope_blocker(scope);
  PatternMatch report;
  if (match_linear(scope, &report)) return "";
  return "compute scope matches no operator (" + report.why_not + ")";
}

void bind_inputs(inst::Emitter& em, Expr state, const std::map<std::string, ValueId, std::less<>>& inputs) {
  for (Expr t : free_tensors(state)) {
    const auto& tensor = t->as<TensorNode>();
    auto it = inputs.find(tensor.name());
    if (it == inputs.end()) ORCHID_FAIL() << "instantiate: tensor '" << tensor.name() << "' is not bound";
    if (em.builder.shape(it->second) != tensor.shape()) {
      ORCHID_FAIL() << "instantiate: tensor '" << tensor.name() << "' is bound to a value of shape "
                    << shape_to_string(em.builder.shape(it->second)) << ", expected "
                    << shape_to_string(tensor.shape());
    }
    ValueId v = em.builder.cast(it->second, DType::Float32);
    em.sources[t] = {v, std::vector<int64_t>(tensor.rank(), 0)};
  }
}

}  // namespace

bool is_compute_scope(const ScopeNode& scope) {
  return !scope.sums().empty() && has_varying_product(scope.body(), scope);
}

std::vector<const ScopeNode*> compute_scopes(Expr state) {
  std::vector<const ScopeNode*> out;
  for (Expr s : scopes_of(state)) {
    if (is_compute_scope(s->as<ScopeNode>())) out.push_back(&s->as<ScopeNode>());
  }
  return out;
}

bool instantiable(Expr state, std::string* why_not) {
  std::vector<Expr> scopes = scopes_of(state);
  for (size_t i = 0; i < scopes.size(); ++i) {
    std::string blocker = scope_blocker(scopes[i]->as<ScopeNode>());
    if (blocker.empty()) continue;
    if (why_not) *why_not = "scope " + std::to_string(i) + ": " + blocker;
    return false;
  }
  return true;
}

std::vector<std::string> describe_instantiation(Expr state) {
  std::vector<std::string> lines;
  for (Expr s : scopes_of(state)) {
    const auto& scope = s->as<ScopeNode>();
    if (!is_compute_scope(scope)) {
      lines.push_back("memory-bound " + inst::describe_memory_scope(scope));
    } else if (std::optional<LinearMatch> m = match_linear(scope)) {
      lines.push_back(inst::describe_linear_scope(scope, *m));
    } else {
      lines.push_back("not instantiable: " + scope_blocker(scope));
    }
  }
  return lines;
}

ValueId instantiate(Expr state, const std::map<std::string, ValueId, std::less<>>& inputs,
                    fission::FissionBuilder& builder) {
  ORCHID_CHECK(state->is<ScopeNode>()) << "instantiate: the state is not a scope";
  inst::Emitter em{builder, {}};
  bind_inputs(em, state, inputs);
  for (Expr s : scopes_of(state)) {
    const auto& scope = s->as<ScopeNode>();
    if (std::string blocker = scope_blocker(scope); !blocker.empty()) ORCHID_FAIL() << "instantiate: " << blocker;
    ValueId v = kNoValue;
    if (is_compute_scope(scope)) {
      v = inst::emit_linear_scope(em, scope, *match_linear(scope));
    } else {
      v = inst::emit_memory_scope(em, scope);
    }
    std::vector<int64_t> lo;
    for (const IterRange& r : scope.loops()) lo.push_back(r.lo);
    em.sources[s] = {v, lo};
  }
  return em.sources.at(state).value;
}

}  // namespace orchid::derivation
