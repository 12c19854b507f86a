// Derivation rules (OLLIE): rewrites of one scope of an expression into a
// scope that denotes the same function, so every derivation step is exact.
//
// A state of the derivation is a top-level scope (the primitive's output)
// with nested scopes (intermediate tensors). A rule sees one scope at a time
// (the root or a nested one) and proposes replacements for it. The driver
// (apply.h) substitutes a replacement for every occurrence of that scope in
// the state, which is exact because of the contract below.
//
// Contract of a rewrite of scope S into S' (expr.h semantics: a scope is a
// function on Z^rank that is 0 outside its loop box):
//  - S' has the same rank as S and the same value at every point of Z^rank;
//    its loop box may differ (boundary tightening/relaxing), but
//  - when S is the root (`is_root`), S' keeps S's loop ranges exactly (the
//    output's shape, order and origin are fixed) and its padding.
// Rules that change an intermediate tensor's shape (layout transforms,
// variable substitution of loop iterators) therefore act on the parent: they
// rewrite the child scope and every access to it in the parent's body
// together, leaving the parent's function unchanged.
//
// Each rule lives in a file of its family under rules/ (rules/rules.h lists
// them); tests check each rewrite against the evaluator on random inputs.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/expr.h"

namespace orchid::derivation {

using expr::Expr;

// One proposed replacement for a scope.
struct Rewrite {
  Expr scope;          // the replacement ScopeNode
  std::string detail;  // what was done, for reports: "split Sum<c> inner", "h -> t = h + r - 1"
};

struct RuleSite {
  Expr scope;    // the ScopeNode to rewrite
  bool is_root;  // the state's top-level scope (its loop box is fixed)
};

class Rule {
 public:
  virtual ~Rule() = default;
  // Short stable name ("sum_split"), used in steps, reports and tests.
  virtual std::string_view name() const = 0;
  // Every replacement this rule proposes for the scope at `site`. Empty when
  // it does not apply. Never an inexact one.
  virtual std::vector<Rewrite> apply(const RuleSite& site) const = 0;
};

using RulePtr = std::unique_ptr<const Rule>;

// Every rule of every family, in a fixed order (rules/rules.h).
const std::vector<const Rule*>& all_rules();
// The rule called `name`, or nullptr.
const Rule* find_rule(std::string_view name);

}  // namespace orchid::derivation
