// Helpers for derivation rule tests: golden rewrites in the text form and
// randomized exactness through the evaluator.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "derivation/apply.h"
#include "derivation/check.h"
#include "derivation/rule.h"
#include "ir/expr_fingerprint.h"
#include "ir/expr_parser.h"
#include "ir/expr_printer.h"

namespace orchid::derivation::testing {

inline const Rule& rule_named(std::string_view name) {
  const Rule* rule = find_rule(name);
  EXPECT_NE(rule, nullptr) << "no rule " << name;
  if (!rule) throw std::runtime_error("no rule");
  return *rule;
}

// Every one-step rewrite of `state` by the rule, at any scope.
inline std::vector<Successor> rewrites_of(std::string_view rule, Expr state) {
  return successors(state, {&rule_named(rule)});
}

// Every rewrite of `state` by `rule` is exact (same function, root box kept),
// on `seeds` random inputs. Returns how many rewrites there were.
inline size_t expect_all_exact(std::string_view rule, Expr state, int seeds = 2) {
  std::vector<Successor> next = rewrites_of(rule, state);
  for (const Successor& s : next) {
    EXPECT_TRUE(same_loop_box(state, s.state)) << rule << " (" << s.step.detail << ") changed the root box:\n"
                                               << expr::to_string(s.state);
    for (int seed = 1; seed <= seeds; ++seed) {
      std::string diff = check_equivalent(state, s.state, uint64_t(seed));
      EXPECT_EQ(diff, "") << rule << " (" << s.step.detail << ") is not exact:\n  before: " << expr::to_string(state)
                          << "\n  after:  " << expr::to_string(s.state);
    }
  }
  return next.size();
}

// Golden test: one of the rule's rewrites of `before` equals `expected` up
// to iterator names (fingerprints), and all its rewrites are exact. Both
// texts are programs (tensor declarations, then the expression).
inline void expect_golden(std::string_view rule, std::string_view before, std::string_view expected) {
  Expr b = expr::parse(before), e = expr::parse(expected);
  EXPECT_EQ(check_equivalent(b, e), "") << "the expected form itself is not equivalent";
  std::vector<Successor> next = rewrites_of(rule, b);
  bool found = false;
  std::string seen;
  for (const Successor& s : next) {
    if (expr::fingerprint(s.state) == expr::fingerprint(e)) found = true;
    seen += "\n  " + s.step.detail + ": " + expr::to_string(s.state);
  }
  EXPECT_TRUE(found) << rule << " did not produce\n  " << expr::to_string(e) << "\nfrom\n  " << expr::to_string(b)
                     << "\nit produced:" << seen;
  expect_all_exact(rule, b);
}

}  // namespace orchid::derivation::testing
