#include "orchestration/plan_cache.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "support/sha256.h"

namespace orchid::orchestration {

namespace {

void append_list(std::string& text, const char* tag, const auto& values) {
  text += tag;
  for (const auto& value : values) text += fmt::format(" {}", value);
  text += '\n';
}

std::string record_name(const BlpProblem& problem) { return "blp " + sha256_of_text(blp_problem_text(problem)); }

// The stored solution, when it is one of this problem (in range, meets the
// constraints, executable in its order) and good enough for this solve.
std::optional<BlpSolution> read_record(const std::string& value, const BlpProblem& problem,
                                       double compile_time_limit, const std::string& solver) {
  const nlohmann::json record = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (!record.is_object() || !record.contains("chosen") || !record["chosen"].is_array()) return std::nullopt;
  BlpSolution solution;
  solution.proven_optimal = record.value("proven_optimal", false);
  if (!solution.proven_optimal) {
    // Cut short: as good as this solve would be only from the same solver, given no more time.
    if (record.value("time_limit", 0.0) < compile_time_limit) return std::nullopt;
    if (record.value("solver", std::string()) != solver) return std::nullopt;
  }
  for (const nlohmann::json& k : record["chosen"]) {
    if (!k.is_number_unsigned() || k.get<size_t>() >= problem.kernels.size()) return std::nullopt;
    solution.chosen.push_back(k.get<size_t>());
  }
  if (!satisfies_constraints(problem, solution.chosen)) return std::nullopt;
  OrderResult order = execution_order(problem, solution.chosen);
  if (!order.order) return std::nullopt;
  solution.chosen = std::move(*order.order);
  solution.cost = selection_cost(problem, solution.chosen);
  solution.feasible = true;
  solution.rounds = 0;
  return solution;
}

}  // namespace

std::string blp_problem_text(const BlpProblem& problem) {
  std::string text = fmt::format("tensors {}\n", problem.num_tensors);
  append_list(text, "available", problem.available);
  append_list(text, "required", problem.required);
  for (const BlpKernel& kernel : problem.kernels) {
    text += fmt::format("kernel {:a}", kernel.cost);
    append_list(text, " in", kernel.inputs);
    append_list(text, " out", kernel.outputs);
  }
  for (const BlpCut& cut : problem.cuts) {
    append_list(text, "cut", cut.all_of);
    append_list(text, " then", cut.one_of);
  }
  return text;
}

BlpSolution cached_solve_blp(const PlanCacheEntry& entry, Solver& solver, const BlpProblem& problem,
                             const SolveOptions& options, bool* from_cache) {
  if (from_cache) *from_cache = false;
  if (!entry.cache) return solve_blp(solver, problem, options);
  const std::string name = record_name(problem);
  if (std::optional<std::string> value = entry.cache->get_meta(entry.machine, name)) {
    if (std::optional<BlpSolution> solution = read_record(*value, problem, entry.compile_time_limit, solver.identity())) {
      if (from_cache) *from_cache = true;
      return *solution;
    }
  }
  BlpSolution solution = solve_blp(solver, problem, options);
  if (solution.feasible) {
    const nlohmann::json record = {{"chosen", solution.chosen},
                                   {"proven_optimal", solution.proven_optimal},
                                   {"time_limit", entry.compile_time_limit},
                                   {"solver", solver.identity()}};
    entry.cache->set_meta(entry.machine, name, record.dump());
  }
  return solution;
}

}  // namespace orchid::orchestration
