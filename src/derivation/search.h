// Derivation search (OLLIE): explorative breadth-first search over rule
// applications to a bounded depth, deduplicated by fingerprints (states
// equal up to iterator names and commutativity meet once), plus guided
// derivation: from every state reached, a greedy descent that applies only
// the rules the iterator mapping table asks for (substitute a combined
// iterator, tighten a boundary, relayout a strided dimension) while that
// lowers the number of mismatched rows; guided steps cost no depth.
//
// The search reports every state its goal accepts (usually: instantiable
// with all compute in library operators), with the steps that lead there.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "derivation/apply.h"

namespace orchid::derivation {

struct SearchOptions {
  int max_depth = 5;               // explorative steps
  size_t max_states = 100000;      // states expanded
  double time_limit_seconds = 10;  // wall clock
  size_t max_found = 64;           // stop after this many goal states
  bool fingerprint_dedup = true;   // false: no deduplication at all (a tree search)
  bool guided = true;
  int max_guided_steps = 8;        // per descent
  // Rules of the explorative search; empty: explorative_rules().
  std::vector<const Rule*> rules;
  // Check every step with the evaluator (check.h); for tests and debugging,
  // on small shapes only.
  bool check_steps = false;
};

struct SearchStats {
  size_t states = 0;        // states expanded (successors generated)
  size_t generated = 0;     // successors generated (explorative and guided)
  size_t dedup_hits = 0;    // successors dropped as already seen
  size_t guided_steps = 0;  // steps taken by guided descents
  int depth = 0;            // deepest explorative level reached
  double seconds = 0;
  bool limit_reached = false;  // stopped by max_states or the time limit
  std::string to_string() const;
};

struct Derivation {
  Expr state = nullptr;
  std::vector<Step> steps;
  int explorative_steps = 0;  // steps that cost depth
  size_t states_when_found = 0;  // states expanded when the search reached it
  double seconds_when_found = 0;
  std::string to_string() const;  // "sum_split (Sum<r, s> outer) -> loop_substitute (...) -> ..."
};

struct SearchResult {
  std::vector<Derivation> found;  // in the order reached (fewest explorative steps first)
  SearchStats stats;
};

using Goal = std::function<bool(Expr state)>;

// The default rule set of explorative search: every rule except pure loop
// reorders and merges (instantiation lays operands out itself; these only
// multiply states) and relax_sum alone (sum_split_iter relaxes a range when
// it splits it, the only use of relaxing).
const std::vector<const Rule*>& explorative_rules();
// The rules guided descent chooses from.
const std::vector<const Rule*>& guided_rules();

// Mismatch score of a state for guided derivation: 0 when every compute
// scope matches an operator pattern; otherwise, summed over compute scopes,
// the mismatched iterator rows of every pattern (a scope that is not a
// product of two operands counts 8).
int mismatch_score(Expr state);

SearchResult search(Expr start, const Goal& goal, const SearchOptions& options = {});

}  // namespace orchid::derivation
