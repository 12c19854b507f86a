// Korch's binary linear program over candidate kernels (reference/korch.md),
// extended to kernels with several outputs. Pure: no solver here; solvers
// (solver.h) take a BlpProblem and return the chosen kernels.
//
// Tensors are numbered 0..num_tensors-1. A kernel reads `inputs` and writes
// `outputs`. Variables x_k in {0,1}; minimize sum c_k x_k subject to
//   - every required tensor that is not available is written by a chosen kernel,
//   - every input t of a chosen kernel k is available or written by a chosen
//     kernel: sum_{j writes t} x_j >= x_k,
//   - every cut (below).
// Multi-output kernels can make a selection that meets these constraints
// but has no execution order (kernel A reads what only B writes and B reads
// what only A writes). Such selections are excluded lazily by cuts:
// solve_blp checks the solver's answer, adds a cut, and solves again.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace orchid::orchestration {

struct BlpKernel {
  double cost = 0;
  std::vector<int> inputs;   // tensors read (available ones may be listed)
  std::vector<int> outputs;  // tensors written
};

// "If every kernel of `all_of` is chosen, some kernel of `one_of` is too":
//   sum_{k in all_of} x_k - (|all_of| - 1) <= sum_{k in one_of} x_k.
struct BlpCut {
  std::vector<size_t> all_of;
  std::vector<size_t> one_of;
};

struct BlpProblem {
  int num_tensors = 0;
  std::vector<int> available;  // graph inputs, constants, tensors of earlier parts
  std::vector<int> required;   // graph outputs, tensors later parts read
  std::vector<BlpKernel> kernels;
  std::vector<BlpCut> cuts;
};

struct BlpSolution {
  std::vector<size_t> chosen;  // kernel indices, in an execution order
  double cost = 0;
  bool proven_optimal = false;  // false: a time limit stopped the solver first
  bool feasible = false;        // false: no selection meets the constraints
  double seconds = 0;           // solver time, all rounds of cuts together
  int rounds = 1;               // solver calls (1 + cuts added)
};

// An execution order of `chosen` (each kernel after a writer of each input
// that is not available), or nullopt with a cut that excludes this selection
// and no executable one.
struct OrderResult {
  std::optional<std::vector<size_t>> order;
  BlpCut cut;
};
OrderResult execution_order(const BlpProblem& problem, const std::vector<size_t>& chosen);

// Whether `chosen` meets every constraint of the model (cuts included).
bool satisfies_constraints(const BlpProblem& problem, const std::vector<size_t>& chosen);

double selection_cost(const BlpProblem& problem, const std::vector<size_t>& chosen);

// A cheap executable selection, in execution order, or nullopt when the
// problem has none: every kernel whose inputs can be produced, taken in the
// order they become runnable, then each one dropped, most expensive first,
// where the rest still runs in that order and writes every required tensor.
// Solvers start from it, so a solve cut short by its time limit still has a
// plan.
std::optional<std::vector<size_t>> greedy_selection(const BlpProblem& problem);

}  // namespace orchid::orchestration
