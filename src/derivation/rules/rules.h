// The rule families, one file each. Every family returns its rules; the
// registry (rule_registry.cc) concatenates them in this order.
//
//  summation.cc     sum_split: move some Sum iterators to an outer scope (the
//                   inner scope keeps them as loop iterators).
//  substitution.cc  loop_substitute: replace a child's loop iterator x by
//                   t = (affine index containing x) e.g. h -> t = h + r - 1;
//                   sum_split_iter: split a Sum iterator r -> k*p + q;
//                   sum_substitute: a Sum iterator i -> j = x - i along
//                   the diagonal an index follows;
//                   loop_merge is in layout.cc.
//  inline.cc        inline_scope (traversal merging): substitute a Sum-free
//                   child scope into its accesses.
//  boundary.cc      tighten_loop / tighten_sum: shrink a range to where the
//                   body may be nonzero; relax_sum: enlarge a Sum range to a
//                   multiple of p where the body is zero.
//  layout.cc        split_loop / merge_loops / reorder_loops of a child scope;
//                   split_output: the root's loop x -> (x / p, x % p) through a
//                   child; relayout_input: view a tensor dimension as (a, b)
//                   with index p*a + b.
//  expression.cc    split_terms: a Sum over a + b -> two scopes; batch_merge:
//                   two children with equal ranges -> one child with a batch
//                   dimension.
#pragma once

#include <vector>

#include "derivation/rule.h"

namespace orchid::derivation::rules {

std::vector<RulePtr> summation_rules();
std::vector<RulePtr> substitution_rules();
std::vector<RulePtr> inline_rules();
std::vector<RulePtr> boundary_rules();
std::vector<RulePtr> layout_rules();
std::vector<RulePtr> expression_rules();

}  // namespace orchid::derivation::rules
