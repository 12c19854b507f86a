// The registry of derivation rules: every family of rules/rules.h.
#include <algorithm>

#include "derivation/rule.h"
#include "derivation/rules/rules.h"

namespace orchid::derivation {

namespace {

std::vector<RulePtr> make_all_rules() {
  std::vector<RulePtr> all;
  for (auto family : {rules::summation_rules, rules::substitution_rules, rules::inline_rules, rules::boundary_rules,
                      rules::layout_rules, rules::expression_rules}) {
    for (RulePtr& rule : family()) all.push_back(std::move(rule));
  }
  return all;
}

}  // namespace

const std::vector<const Rule*>& all_rules() {
  static const std::vector<RulePtr> owned = make_all_rules();
  static const std::vector<const Rule*> view = [] {
    std::vector<const Rule*> v;
    for (const RulePtr& r : owned) v.push_back(r.get());
    return v;
  }();
  return view;
}

const Rule* find_rule(std::string_view name) {
  for (const Rule* rule : all_rules()) {
    if (rule->name() == name) return rule;
  }
  return nullptr;
}

}  // namespace orchid::derivation
