// An exact solver of the orchestration BLP by depth-first search over the
// kernels' 0/1 values, for tests: it shares no code with the CBC model, so
// the two check each other. Small problems only (kernels are bits of a
// 64-bit mask).
//
// Every constraint of the model is a clause "if all of P are chosen, some of
// Q is": a required tensor (P empty, Q its writers), an input t of kernel k
// (P = {k}, Q = writers of t, k included as the model states), a cut
// (P = all_of, Q = one_of). A partial assignment that chooses all of P and
// rejects all of Q can never be repaired, so the search prunes there, and
// prunes any branch whose cost bound reaches the best found.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <limits>

#include "orchestration/solver.h"
#include "support/error.h"

namespace orchid::orchestration {
namespace {

using Mask = uint64_t;
constexpr size_t kMaxKernels = 40;  // far beyond what the search finishes on; the time limit ends it

Mask bit(size_t k) { return Mask{1} << k; }

Mask kernel_bit(const BlpProblem& problem, size_t k) {
  ORCHID_CHECK(k < problem.kernels.size()) << "cut names kernel " << k << " out of range";
  return bit(k);
}

struct Clause {
  Mask all_of = 0;
  Mask one_of = 0;
};

std::vector<Clause> model_clauses(const BlpProblem& problem) {
  std::vector<bool> available(static_cast<size_t>(problem.num_tensors), false);
  for (int t : problem.available) available.at(static_cast<size_t>(t)) = true;
  std::vector<Mask> writers(static_cast<size_t>(problem.num_tensors), 0);
  for (size_t k = 0; k < problem.kernels.size(); ++k)
    for (int t : problem.kernels[k].outputs) writers.at(static_cast<size_t>(t)) |= bit(k);

  std::vector<Clause> clauses;
  for (int t : problem.required)
    if (!available.at(static_cast<size_t>(t))) clauses.push_back({0, writers[static_cast<size_t>(t)]});
  for (size_t k = 0; k < problem.kernels.size(); ++k)
    for (int t : problem.kernels[k].inputs)
      if (!available.at(static_cast<size_t>(t))) clauses.push_back({bit(k), writers[static_cast<size_t>(t)]});
  for (const BlpCut& cut : problem.cuts) {
    Clause clause;
    for (size_t k : cut.all_of) clause.all_of |= kernel_bit(problem, k);
    for (size_t k : cut.one_of) clause.one_of |= kernel_bit(problem, k);
    clauses.push_back(clause);
  }
  // A clause whose two sides share a kernel always holds.
  std::erase_if(clauses, [](const Clause& c) { return (c.all_of & c.one_of) != 0; });
  return clauses;
}

class Search {
 public:
  Search(const BlpProblem& problem, const SolveOptions& options)
      : costs_(problem.kernels.size()),
        clauses_(model_clauses(problem)),
        deadline_(std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(options.time_limit_seconds))) {
    for (size_t k = 0; k < costs_.size(); ++k) costs_[k] = problem.kernels[k].cost;
    // Negative costs (never produced by profiling, but allowed by the model)
    // lower what the undecided kernels can add.
    negative_suffix_.assign(costs_.size() + 1, 0);
    for (size_t k = costs_.size(); k-- > 0;) negative_suffix_[k] = negative_suffix_[k + 1] + std::min(0.0, costs_[k]);
  }

  void run() { visit(0, 0, 0); }

  bool found() const { return found_; }
  bool timed_out() const { return timed_out_; }
  Mask best() const { return best_; }

 private:
  // Kernels < depth are decided; `chosen` holds those set to 1.
  void visit(size_t depth, Mask chosen, double cost) {
    if (timed_out_ || out_of_time()) return;
    Mask decided = bit(depth) - 1;  // depth <= kMaxKernels < 64
    if (violates_a_clause(chosen, decided)) return;
    if (found_ && cost + lower_bound_of_rest(depth, chosen, decided) >= best_cost_) return;
    if (depth == costs_.size()) {
      found_ = true;
      best_ = chosen;
      best_cost_ = cost;
      return;
    }
    visit(depth + 1, chosen, cost);  // rejecting first finds cheap selections early
    visit(depth + 1, chosen | bit(depth), cost + costs_[depth]);
  }

  bool violates_a_clause(Mask chosen, Mask decided) const {
    return std::any_of(clauses_.begin(), clauses_.end(), [&](const Clause& c) {
      return (c.all_of & ~chosen) == 0 && (c.one_of & ~decided) == 0 && (c.one_of & chosen) == 0;
    });
  }

  // What the undecided kernels must add at least: the negative costs, plus
  // for a clause whose P is all chosen and whose Q has nothing chosen yet,
  // the cheapest undecided kernel of Q (the largest such over the clauses).
  double lower_bound_of_rest(size_t depth, Mask chosen, Mask decided) const {
    double forced = 0;
    for (const Clause& c : clauses_) {
      if ((c.all_of & ~chosen) != 0 || (c.one_of & chosen) != 0) continue;
      double cheapest = std::numeric_limits<double>::infinity();
      for (Mask open = c.one_of & ~decided; open != 0; open &= open - 1)
        cheapest = std::min(cheapest, costs_[static_cast<size_t>(std::countr_zero(open))]);
      forced = std::max(forced, cheapest);
    }
    return negative_suffix_[depth] + forced;
  }

  bool out_of_time() {
    if (++nodes_ % 4096 != 0) return false;
    timed_out_ = std::chrono::steady_clock::now() > deadline_;
    return timed_out_;
  }

  std::vector<double> costs_;
  std::vector<double> negative_suffix_;
  std::vector<Clause> clauses_;
  std::chrono::steady_clock::time_point deadline_;
  uint64_t nodes_ = 0;
  bool timed_out_ = false;
  bool found_ = false;
  Mask best_ = 0;
  double best_cost_ = 0;
};

class BruteForceSolver final : public Solver {
 public:
  std::string identity() const override { return "brute force"; }
  BlpSolution solve_once(const BlpProblem& problem, const SolveOptions& options) override {
    ORCHID_CHECK(problem.kernels.size() <= kMaxKernels)
        << "brute-force BLP solver asked for " << problem.kernels.size() << " kernels (at most " << kMaxKernels << ")";
    auto start = std::chrono::steady_clock::now();
    Search search(problem, options);
    search.run();
    BlpSolution solution;
    solution.proven_optimal = !search.timed_out();
    if (search.found()) {
      solution.feasible = true;
      for (size_t k = 0; k < problem.kernels.size(); ++k)
        if (search.best() & bit(k)) solution.chosen.push_back(k);
      solution.cost = selection_cost(problem, solution.chosen);
    }
    solution.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return solution;
  }
};

}  // namespace

std::unique_ptr<Solver> make_brute_force_solver() { return std::make_unique<BruteForceSolver>(); }

}  // namespace orchid::orchestration
