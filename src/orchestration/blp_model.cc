// The pure half of the orchestration BLP: what a selection costs, whether it
// meets the model's constraints, and whether it can run (and if not, a cut).
#include "orchestration/blp_model.h"

#include <algorithm>

#include "support/error.h"

namespace orchid::orchestration {
namespace {

// One flag per tensor: whether it is available before any kernel runs.
std::vector<bool> available_flags(const BlpProblem& problem) {
  std::vector<bool> available(static_cast<size_t>(problem.num_tensors), false);
  for (int t : problem.available) {
    ORCHID_CHECK(t >= 0 && t < problem.num_tensors) << "available tensor " << t << " out of range";
    available[static_cast<size_t>(t)] = true;
  }
  return available;
}

// One flag per kernel: whether it is in `chosen` (which must hold no index twice).
std::vector<bool> chosen_flags(const BlpProblem& problem, const std::vector<size_t>& chosen) {
  std::vector<bool> flags(problem.kernels.size(), false);
  for (size_t k : chosen) {
    ORCHID_CHECK(k < problem.kernels.size()) << "kernel " << k << " out of range";
    ORCHID_CHECK(!flags[k]) << "kernel " << k << " chosen twice";
    flags[k] = true;
  }
  return flags;
}

void check_tensor(const BlpProblem& problem, int t) {
  ORCHID_CHECK(t >= 0 && t < problem.num_tensors) << "tensor " << t << " out of range";
}

// Tensors `kernel` still waits for: inputs neither available nor written yet.
std::vector<int> missing_inputs(const BlpKernel& kernel, const std::vector<bool>& present) {
  std::vector<int> missing;
  for (int t : kernel.inputs)
    if (!present[static_cast<size_t>(t)]) missing.push_back(t);
  return missing;
}

// Kernels of `stuck` reachable from `start` along "waits for a tensor that
// this kernel writes". Such a set is closed: every chosen writer of a tensor
// it waits for is inside it, which is what makes the cut exclude the
// current selection.
std::vector<size_t> waiting_closure(const BlpProblem& problem, const std::vector<size_t>& stuck,
                                    const std::vector<bool>& present, size_t start) {
  std::vector<bool> in_closure(problem.kernels.size(), false);
  std::vector<size_t> closure{start};
  in_closure[start] = true;
  for (size_t next = 0; next < closure.size(); ++next) {
    for (int t : missing_inputs(problem.kernels[closure[next]], present)) {
      for (size_t j : stuck) {
        const auto& outputs = problem.kernels[j].outputs;
        if (!in_closure[j] && std::find(outputs.begin(), outputs.end(), t) != outputs.end()) {
          in_closure[j] = true;
          closure.push_back(j);
        }
      }
    }
  }
  std::sort(closure.begin(), closure.end());
  return closure;
}

// The cut for kernels `stuck` that can no longer run (`present`: tensors
// available or written by the kernels that did run).
//
// S = the smallest closure of a stuck kernel (waiting_closure); M = the
// tensors S's kernels wait for; the cut says "if all of S, then some kernel
// outside S that writes a tensor of M".
//  - It excludes the current selection: every chosen writer of a tensor of M
//    is a stuck kernel (M holds no tensor written by a kernel that ran) that
//    S waits for, hence in S by closure; so no chosen kernel outside S
//    writes M.
//  - It excludes no executable selection: in an executable selection that
//    contains S, look at the first kernel s of S to run. s waits (here) for
//    some tensor t of M; t is not available, so in that order t was written
//    before s by some kernel, which is not in S (s is S's first) and writes
//    t in M: it is in one_of.
// Reading one's own output is treated as waiting (a kernel cannot run before
// itself), so a kernel that reads what only it writes is cut off too.
BlpCut cut_for(const BlpProblem& problem, const std::vector<size_t>& stuck, const std::vector<bool>& present) {
  std::vector<size_t> smallest;
  for (size_t k : stuck) {
    std::vector<size_t> closure = waiting_closure(problem, stuck, present, k);
    if (smallest.empty() || closure.size() < smallest.size()) smallest = std::move(closure);
  }
  std::vector<bool> in_s(problem.kernels.size(), false);
  for (size_t k : smallest) in_s[k] = true;
  std::vector<bool> in_m(static_cast<size_t>(problem.num_tensors), false);
  for (size_t k : smallest)
    for (int t : missing_inputs(problem.kernels[k], present)) in_m[static_cast<size_t>(t)] = true;

  BlpCut cut;
  cut.all_of = smallest;
  for (size_t j = 0; j < problem.kernels.size(); ++j) {
    if (in_s[j]) continue;
    const auto& outputs = problem.kernels[j].outputs;
    if (std::any_of(outputs.begin(), outputs.end(), [&](int t) { return in_m[static_cast<size_t>(t)]; }))
      cut.one_of.push_back(j);
  }
  return cut;
}

bool is_cut_satisfied(const BlpCut& cut, const std::vector<bool>& is_chosen) {
  bool all_chosen = std::all_of(cut.all_of.begin(), cut.all_of.end(), [&](size_t k) { return is_chosen.at(k); });
  return !all_chosen || std::any_of(cut.one_of.begin(), cut.one_of.end(), [&](size_t k) { return is_chosen.at(k); });
}

}  // namespace

OrderResult execution_order(const BlpProblem& problem, const std::vector<size_t>& chosen) {
  chosen_flags(problem, chosen);  // range and duplicate checks
  std::vector<bool> present = available_flags(problem);
  for (size_t k : chosen)
    for (int t : problem.kernels[k].inputs) check_tensor(problem, t);

  // Repeatedly run every kernel whose inputs are all present, in index order
  // within a sweep (a deterministic order, nearest to the caller's).
  std::vector<size_t> order;
  std::vector<size_t> waiting = chosen;
  std::sort(waiting.begin(), waiting.end());
  bool progressed = true;
  while (!waiting.empty() && progressed) {
    progressed = false;
    std::vector<size_t> still_waiting;
    for (size_t k : waiting) {
      if (!missing_inputs(problem.kernels[k], present).empty()) {
        still_waiting.push_back(k);
        continue;
      }
      order.push_back(k);
      for (int t : problem.kernels[k].outputs) {
        check_tensor(problem, t);
        present[static_cast<size_t>(t)] = true;
      }
      progressed = true;
    }
    waiting = std::move(still_waiting);
  }
  if (waiting.empty()) return {std::move(order), {}};
  return {std::nullopt, cut_for(problem, waiting, present)};
}

// The model as stated in blp_model.h: an input t of k counts as provided when
// any chosen kernel writes t, k itself included (the row sum_{j writes t} x_j
// >= x_k has no "j != k"). Whether the selection can actually run is
// execution_order's question; a kernel reading its own output is cut there.
bool satisfies_constraints(const BlpProblem& problem, const std::vector<size_t>& chosen) {
  std::vector<bool> is_chosen = chosen_flags(problem, chosen);
  std::vector<bool> provided = available_flags(problem);
  for (size_t k : chosen)
    for (int t : problem.kernels[k].outputs) {
      check_tensor(problem, t);
      provided[static_cast<size_t>(t)] = true;
    }
  auto is_provided = [&](int t) {
    check_tensor(problem, t);
    return static_cast<bool>(provided[static_cast<size_t>(t)]);
  };
  if (!std::all_of(problem.required.begin(), problem.required.end(), is_provided)) return false;
  for (size_t k : chosen)
    if (!std::all_of(problem.kernels[k].inputs.begin(), problem.kernels[k].inputs.end(), is_provided)) return false;
  return std::all_of(problem.cuts.begin(), problem.cuts.end(),
                     [&](const BlpCut& cut) { return is_cut_satisfied(cut, is_chosen); });
}

double selection_cost(const BlpProblem& problem, const std::vector<size_t>& chosen) {
  double cost = 0;
  for (size_t k : chosen) {
    ORCHID_CHECK(k < problem.kernels.size()) << "kernel " << k << " out of range";
    cost += problem.kernels[k].cost;
  }
  return cost;
}

namespace {

// Whether `order`, run as listed, finds each kernel's inputs written before it
// and writes every required tensor.
bool runs_in_order(const BlpProblem& problem, const std::vector<size_t>& order) {
  std::vector<char> written(size_t(problem.num_tensors), 0);
  for (int t : problem.available) written[size_t(t)] = 1;
  for (size_t k : order) {
    for (int t : problem.kernels[k].inputs) {
      if (!written[size_t(t)]) return false;
    }
    for (int t : problem.kernels[k].outputs) written[size_t(t)] = 1;
  }
  return std::all_of(problem.required.begin(), problem.required.end(), [&](int t) { return written[size_t(t)]; });
}

// Every kernel that can run, in the order they become runnable.
std::vector<size_t> runnable_kernels(const BlpProblem& problem) {
  std::vector<char> written(size_t(problem.num_tensors), 0), taken(problem.kernels.size(), 0);
  for (int t : problem.available) written[size_t(t)] = 1;
  std::vector<size_t> order;
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t k = 0; k < problem.kernels.size(); ++k) {
      const BlpKernel& kernel = problem.kernels[k];
      if (taken[k] || !std::all_of(kernel.inputs.begin(), kernel.inputs.end(),
                                   [&](int t) { return written[size_t(t)]; })) {
        continue;
      }
      taken[k] = 1;
      order.push_back(k);
      for (int t : kernel.outputs) written[size_t(t)] = 1;
      grew = true;
    }
  }
  return order;
}

}  // namespace

std::optional<std::vector<size_t>> greedy_selection(const BlpProblem& problem) {
  std::vector<size_t> order = runnable_kernels(problem);
  if (!runs_in_order(problem, order)) return std::nullopt;
  std::vector<size_t> by_cost = order;
  std::stable_sort(by_cost.begin(), by_cost.end(),
                   [&](size_t a, size_t b) { return problem.kernels[a].cost > problem.kernels[b].cost; });
  for (size_t k : by_cost) {
    std::vector<size_t> without;
    without.reserve(order.size());
    for (size_t j : order) {
      if (j != k) without.push_back(j);
    }
    if (runs_in_order(problem, without)) order = std::move(without);
  }
  return order;
}

}  // namespace orchid::orchestration
