// The orchestration BLP solved by COIN-OR CBC (branch and bound over Clp's LP
// relaxations). The only file that includes CBC: the rest of Orchid sees
// solver.h.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <coin/CbcHeuristic.hpp>
#include <coin/CbcHeuristicLocal.hpp>
#include <coin/CbcHeuristicRINS.hpp>
#include <coin/CbcModel.hpp>
#include <coin/CglClique.hpp>
#include <coin/CglGomory.hpp>
#include <coin/CglKnapsackCover.hpp>
#include <coin/CglProbing.hpp>
#include <coin/CglZeroHalf.hpp>
#include <coin/CoinPackedMatrix.hpp>
#include <coin/CoinPackedVector.hpp>
#include <coin/OsiClpSolverInterface.hpp>

#include "orchestration/solver.h"
#include "support/error.h"

namespace orchid::orchestration {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// lower <= sum coefficients[k] x_k <= upper. Coefficients are accumulated in
// a map, so a kernel named twice (a writer that also reads, a kernel in both
// sides of a cut) gets one merged coefficient, as CoinPackedMatrix requires.
struct Row {
  std::map<int, double> coefficients;
  double lower = -kInfinity;
  double upper = kInfinity;
};

std::vector<std::vector<int>> writers_of_tensors(const BlpProblem& problem) {
  std::vector<std::set<int>> writers(static_cast<size_t>(problem.num_tensors));
  for (size_t k = 0; k < problem.kernels.size(); ++k)
    for (int t : problem.kernels[k].outputs) {
      ORCHID_CHECK(t >= 0 && t < problem.num_tensors) << "tensor " << t << " out of range";
      writers[static_cast<size_t>(t)].insert(static_cast<int>(k));
    }
  std::vector<std::vector<int>> result;
  for (const auto& w : writers) result.emplace_back(w.begin(), w.end());
  return result;
}

// "Some writer of t is chosen": sum_{j writes t} x_j >= 1.
Row tensor_written_row(const std::vector<int>& writers) {
  Row row;
  for (int j : writers) row.coefficients[j] = 1;
  row.lower = 1;
  return row;
}

// sum_{j writes t} x_j - x_k >= 0. A kernel that writes the tensor it reads
// keeps its own term (coefficient 1 - 1 = 0), exactly as the model states
// (see satisfies_constraints); execution_order cuts such selections.
Row input_row(const std::vector<int>& writers, size_t reader) {
  Row row;
  for (int j : writers) row.coefficients[j] = 1;
  row.coefficients[static_cast<int>(reader)] -= 1;
  row.lower = 0;
  return row;
}

// sum_{all_of} x - sum_{one_of} x <= |all_of| - 1 (sets: duplicates ignored).
Row cut_row(const BlpCut& cut, size_t num_kernels) {
  std::set<size_t> all_of(cut.all_of.begin(), cut.all_of.end());
  std::set<size_t> one_of(cut.one_of.begin(), cut.one_of.end());
  Row row;
  for (size_t k : all_of) {
    ORCHID_CHECK(k < num_kernels) << "cut names kernel " << k << " out of range";
    row.coefficients[static_cast<int>(k)] += 1;
  }
  for (size_t k : one_of) {
    ORCHID_CHECK(k < num_kernels) << "cut names kernel " << k << " out of range";
    row.coefficients[static_cast<int>(k)] -= 1;
  }
  row.upper = static_cast<double>(all_of.size()) - 1;
  return row;
}

std::vector<Row> model_rows(const BlpProblem& problem) {
  std::vector<bool> available(static_cast<size_t>(problem.num_tensors), false);
  for (int t : problem.available) {
    ORCHID_CHECK(t >= 0 && t < problem.num_tensors) << "tensor " << t << " out of range";
    available[static_cast<size_t>(t)] = true;
  }
  std::vector<std::vector<int>> writers = writers_of_tensors(problem);
  std::vector<Row> rows;
  for (int t : problem.required) {
    ORCHID_CHECK(t >= 0 && t < problem.num_tensors) << "tensor " << t << " out of range";
    if (!available[static_cast<size_t>(t)]) rows.push_back(tensor_written_row(writers[static_cast<size_t>(t)]));
  }
  for (size_t k = 0; k < problem.kernels.size(); ++k)
    for (int t : std::set<int>(problem.kernels[k].inputs.begin(), problem.kernels[k].inputs.end())) {
      ORCHID_CHECK(t >= 0 && t < problem.num_tensors) << "tensor " << t << " out of range";
      if (!available[static_cast<size_t>(t)]) rows.push_back(input_row(writers[static_cast<size_t>(t)], k));
    }
  for (const BlpCut& cut : problem.cuts) rows.push_back(cut_row(cut, problem.kernels.size()));
  return rows;
}

// Drops zero coefficients; a row left empty is either always true (dropped)
// or never true (the whole model is infeasible: returns false). CBC would
// find the same, but an empty violated row (a required tensor nobody writes)
// is clearer answered here.
bool simplify_rows(std::vector<Row>& rows) {
  std::vector<Row> kept;
  for (Row& row : rows) {
    std::erase_if(row.coefficients, [](const auto& entry) { return entry.second == 0; });
    if (!row.coefficients.empty()) {
      kept.push_back(std::move(row));
    } else if (row.lower > 0 || row.upper < 0) {
      return false;
    }
  }
  rows = std::move(kept);
  return true;
}

void silence(OsiSolverInterface& solver) {
  solver.messageHandler()->setLogLevel(0);
  solver.setHintParam(OsiDoReducePrint, true, OsiHintTry);
}

// Gives CBC a known selection as its incumbent (checked by CBC against the
// model: an infeasible start is ignored).
void start_from(CbcModel& model, const BlpProblem& problem, const std::vector<size_t>& start) {
  std::vector<double> values(problem.kernels.size(), 0.0);
  for (size_t k : start) values.at(k) = 1.0;
  const double* objective = model.solver()->getObjCoefficients();
  double cost = 0;
  for (size_t k = 0; k < values.size(); ++k) cost += objective[k] * values[k];
  model.setBestSolution(values.data(), int(values.size()), cost, /*check=*/true);
}

OsiClpSolverInterface build_lp(const BlpProblem& problem, const std::vector<Row>& rows) {
  int num_columns = static_cast<int>(problem.kernels.size());
  // Rows gathered into one compressed-row array, handed over in one go:
  // appending rows one by one reallocates the matrix each time (quadratic;
  // 1.3 s of a 10,000-primitive chain's compile).
  std::vector<CoinBigIndex> starts;
  std::vector<int> lengths, columns;
  std::vector<double> elements, row_lower, row_upper;
  for (const Row& row : rows) {
    starts.push_back(CoinBigIndex(columns.size()));
    lengths.push_back(int(row.coefficients.size()));
    for (const auto& [column, coefficient] : row.coefficients) {
      columns.push_back(int(column));
      elements.push_back(coefficient);
    }
    row_lower.push_back(row.lower == -kInfinity ? -COIN_DBL_MAX : row.lower);
    row_upper.push_back(row.upper == kInfinity ? COIN_DBL_MAX : row.upper);
  }
  const CoinPackedMatrix matrix(/*colordered=*/false, num_columns, int(rows.size()), CoinBigIndex(elements.size()),
                                elements.data(), columns.data(), starts.data(), lengths.data());
  std::vector<double> column_lower(problem.kernels.size(), 0.0), column_upper(problem.kernels.size(), 1.0);
  // Costs are seconds (1e-6 .. 1e-2): below CBC's absolute tolerances
  // (cutoff increment 1e-5, integrality gap 1e-10), where it can neither
  // tell plans apart nor prune, and spends seconds proving nothing. Scaled
  // so the largest cost is 1e6, differences of a nanosecond still count.
  double largest = 0;
  for (const BlpKernel& kernel : problem.kernels) largest = std::max(largest, std::abs(kernel.cost));
  const double scale = largest > 0 ? 1e6 / largest : 1;
  std::vector<double> objective;
  for (const BlpKernel& kernel : problem.kernels) objective.push_back(kernel.cost * scale);

  OsiClpSolverInterface lp;
  silence(lp);
  lp.loadProblem(matrix, column_lower.data(), column_upper.data(), objective.data(), row_lower.data(),
                 row_upper.data());
  for (int column = 0; column < num_columns; ++column) lp.setInteger(column);
  lp.setObjSense(1);  // minimize
  return lp;
}

// Cut generators and primal heuristics, as CBC's own driver adds them
// (CbcModel alone branches on bare LP relaxations). Gomory cuts close most
// of the relaxation's gap on these models: YOLOX-Nano's largest part (1,521
// kernels with layouts) took 28-35 s to prove optimal without them and
// 0.2-0.3 s with this set, so the 20 s budget no longer cut it short with a
// plan 9% slower.
void add_cuts_and_heuristics(CbcModel& model) {
  CglProbing probing;
  probing.setUsingObjective(1);
  probing.setMaxPass(3);
  probing.setMaxProbe(100);
  probing.setMaxLook(50);
  probing.setRowCuts(3);
  model.addCutGenerator(&probing, -1, "Probing");  // (each generator is copied)
  CglGomory gomory;
  gomory.setLimit(300);
  model.addCutGenerator(&gomory, -1, "Gomory");
  CglClique clique;
  clique.setStarCliqueReport(false);
  clique.setRowCliqueReport(false);
  model.addCutGenerator(&clique, -1, "Clique");
  CglKnapsackCover knapsack;
  model.addCutGenerator(&knapsack, -1, "KnapsackCover");
  CglZeroHalf zero_half;
  model.addCutGenerator(&zero_half, -1, "ZeroHalf");
  CbcRounding rounding(model);
  model.addHeuristic(&rounding);
  CbcHeuristicLocal local(model);
  model.addHeuristic(&local);
  CbcHeuristicRINS rins(model);
  model.addHeuristic(&rins);
}

class CbcSolver final : public Solver {
 public:
  std::string identity() const override { return "cbc 2.10, cuts and heuristics"; }
  BlpSolution solve_once(const BlpProblem& problem, const SolveOptions& options) override {
    auto start = std::chrono::steady_clock::now();
    BlpSolution solution = solve(problem, options);
    solution.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return solution;
  }

 private:
  static BlpSolution solve(const BlpProblem& problem, const SolveOptions& options) {
    BlpSolution solution;
    std::vector<Row> rows = model_rows(problem);
    if (!simplify_rows(rows)) {
      solution.proven_optimal = true;  // infeasibility is proven, nothing was cut short
      return solution;
    }
    if (problem.kernels.empty()) {  // every row was empty and satisfied
      solution.feasible = solution.proven_optimal = true;
      return solution;
    }
    OsiClpSolverInterface lp = build_lp(problem, rows);
    CbcModel model(lp);
    model.setLogLevel(0);
    model.messageHandler()->setLogLevel(0);
    silence(*model.solver());
    model.setUseElapsedTime(true);
    model.setMaximumSeconds(options.time_limit_seconds);
    add_cuts_and_heuristics(model);
    model.initialSolve();
    if (!options.start.empty()) start_from(model, problem, options.start);
    model.branchAndBound();

    const double* best = model.bestSolution();
    if (best == nullptr) {
      // Either proven infeasible, or the time ran out before any selection
      // was found: feasible stays false; proven_optimal says which.
      solution.proven_optimal = model.isProvenInfeasible();
      return solution;
    }
    for (size_t k = 0; k < problem.kernels.size(); ++k)
      if (best[k] > 0.5) solution.chosen.push_back(k);
    solution.feasible = true;
    solution.proven_optimal = model.isProvenOptimal();
    solution.cost = selection_cost(problem, solution.chosen);
    return solution;
  }
};

}  // namespace

std::unique_ptr<Solver> make_cbc_solver() { return std::make_unique<CbcSolver>(); }

}  // namespace orchid::orchestration
