// The orchestration BLP: the pure model (execution_order, cuts,
// satisfies_constraints), the CBC and brute-force solvers, and solve_blp's
// lazy-cut loop. The required check: on random primitive graphs with random
// candidate kernels and costs, CBC's plan costs exactly the brute-force
// optimum, and both cost what enumerating every selection finds, with
// executability decided by a simulation of this file's own (no model, cuts,
// execution_order or solver code).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <set>
#include <string>

#include "orchestration/blp_model.h"
#include "orchestration/solver.h"
#include "support/error.h"

namespace orchid::orchestration {
namespace {

BlpKernel kernel(double cost, std::vector<int> inputs, std::vector<int> outputs) {
  return BlpKernel{cost, std::move(inputs), std::move(outputs)};
}

// Independent of execution_order: `order` runs kernel by kernel, each after
// its inputs exist, and leaves every required tensor written.
bool is_execution_order(const BlpProblem& problem, const std::vector<size_t>& order) {
  std::set<int> present(problem.available.begin(), problem.available.end());
  std::set<size_t> seen;
  for (size_t k : order) {
    if (k >= problem.kernels.size() || !seen.insert(k).second) return false;
    for (int t : problem.kernels[k].inputs)
      if (!present.contains(t)) return false;
    present.insert(problem.kernels[k].outputs.begin(), problem.kernels[k].outputs.end());
  }
  return std::all_of(problem.required.begin(), problem.required.end(), [&](int t) { return present.contains(t); });
}

void expect_executable_plan(const BlpProblem& problem, const BlpSolution& solution) {
  ASSERT_TRUE(solution.feasible);
  EXPECT_TRUE(is_execution_order(problem, solution.chosen));
  EXPECT_TRUE(satisfies_constraints(problem, solution.chosen));
  EXPECT_NEAR(solution.cost, selection_cost(problem, solution.chosen), 1e-9);
}

std::vector<std::unique_ptr<Solver>> both_solvers() {
  std::vector<std::unique_ptr<Solver>> solvers;
  solvers.push_back(make_cbc_solver());
  solvers.push_back(make_brute_force_solver());
  return solvers;
}

// x(0) -> a(1) -> b(2): two single kernels (2 + 2) or one fused kernel (3).
TEST(BlpModel, ChainPrefersTheCheaperFusedKernel) {
  BlpProblem problem{3, {0}, {2}, {kernel(2, {0}, {1}), kernel(2, {1}, {2}), kernel(3, {0}, {2})}, {}};
  for (auto& solver : both_solvers()) {
    BlpSolution solution = solve_blp(*solver, problem);
    expect_executable_plan(problem, solution);
    EXPECT_EQ(solution.chosen, std::vector<size_t>{2});
    EXPECT_DOUBLE_EQ(solution.cost, 3);
    EXPECT_TRUE(solution.proven_optimal);
    EXPECT_EQ(solution.rounds, 1);
  }
}

// x(0) -> a(1) feeds b(2) and c(3), both outputs. Materializing a (5) costs
// more than recomputing it inside two fused kernels (2 + 2).
TEST(BlpModel, RedundantComputationWinsWhenCheaper) {
  BlpProblem problem{4, {0}, {2, 3},
                     {kernel(5, {0}, {1}), kernel(1, {1}, {2}), kernel(1, {1}, {3}), kernel(2, {0}, {2}),
                      kernel(2, {0}, {3})},
                     {}};
  for (auto& solver : both_solvers()) {
    BlpSolution solution = solve_blp(*solver, problem);
    expect_executable_plan(problem, solution);
    EXPECT_EQ(std::set<size_t>(solution.chosen.begin(), solution.chosen.end()), (std::set<size_t>{3, 4}));
    EXPECT_DOUBLE_EQ(solution.cost, 4);
  }
  // Once a is cheap, it is materialized once and read twice.
  problem.kernels[0].cost = 1;
  for (auto& solver : both_solvers()) {
    BlpSolution solution = solve_blp(*solver, problem);
    expect_executable_plan(problem, solution);
    EXPECT_EQ(solution.chosen.front(), 0u);
    EXPECT_DOUBLE_EQ(solution.cost, 3);
  }
}

// One kernel writing both outputs (3) beats one kernel per output (2 + 2),
// and its outputs satisfy a later reader.
TEST(BlpModel, MultiOutputKernel) {
  BlpProblem problem{5, {0}, {1, 4},
                     {kernel(3, {0}, {1, 2}), kernel(2, {0}, {1}), kernel(2, {0}, {2}), kernel(1, {2}, {4})},
                     {}};
  for (auto& solver : both_solvers()) {
    BlpSolution solution = solve_blp(*solver, problem);
    expect_executable_plan(problem, solution);
    EXPECT_EQ(solution.chosen, (std::vector<size_t>{0, 3}));
    EXPECT_DOUBLE_EQ(solution.cost, 4);
  }
}

TEST(BlpModel, InfeasibleProblems) {
  // Nobody writes required tensor 2.
  BlpProblem unwritten{3, {0}, {1, 2}, {kernel(1, {0}, {1})}, {}};
  // The only writer of 1 reads 3, which nobody writes.
  BlpProblem unreadable{4, {0}, {1}, {kernel(1, {0, 3}, {1})}, {}};
  // The only writers of 1 and 2 read each other's output: the model admits
  // the pair, the cut removes it, and nothing else is left.
  BlpProblem cyclic{3, {0}, {1}, {kernel(1, {0, 2}, {1}), kernel(1, {1}, {2})}, {}};
  for (const BlpProblem* problem : {&unwritten, &unreadable, &cyclic}) {
    for (auto& solver : both_solvers()) {
      BlpSolution solution = solve_blp(*solver, *problem);
      EXPECT_FALSE(solution.feasible);
      EXPECT_TRUE(solution.proven_optimal);
    }
  }
  EXPECT_EQ(solve_blp(*make_cbc_solver(), cyclic).rounds, 2);
}

TEST(BlpModel, NothingToComputeChoosesNothing) {
  BlpProblem problem{2, {0, 1}, {1}, {kernel(1, {0}, {1})}, {}};
  for (auto& solver : both_solvers()) {
    BlpSolution solution = solve_blp(*solver, problem);
    EXPECT_TRUE(solution.feasible);
    EXPECT_TRUE(solution.chosen.empty());
    EXPECT_EQ(solution.cost, 0);
  }
}

// A (cost 1) reads 3 and writes 1 (required) and 2; B (cost 1) reads 2 and
// writes 3 and 4 (required). {A, B} meets every constraint and is the
// cheapest such selection, but neither can run first. C (1.5) writes 2
// from the input, which lets B and then A run: {C, B, A} at 3.5 beats the
// singles E, F (3 each).
BlpProblem cyclic_optimum_problem() {
  return BlpProblem{5, {0}, {1, 4},
                    {kernel(1, {3}, {1, 2}), kernel(1, {2}, {3, 4}), kernel(1.5, {0}, {2}), kernel(3, {0}, {1}),
                     kernel(3, {0}, {4})},
                    {}};
}

TEST(BlpModel, ExecutionOrderCutsTheCycle) {
  BlpProblem problem = cyclic_optimum_problem();
  EXPECT_TRUE(satisfies_constraints(problem, {0, 1}));
  OrderResult result = execution_order(problem, {0, 1});
  EXPECT_FALSE(result.order.has_value());
  EXPECT_EQ(result.cut.all_of, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(result.cut.one_of, std::vector<size_t>{2});
  problem.cuts.push_back(result.cut);
  EXPECT_FALSE(satisfies_constraints(problem, {0, 1}));
  EXPECT_TRUE(satisfies_constraints(problem, {0, 1, 2}));

  OrderResult runnable = execution_order(problem, {0, 1, 2});
  ASSERT_TRUE(runnable.order.has_value());
  EXPECT_EQ(*runnable.order, (std::vector<size_t>{2, 1, 0}));
}

// The cut is made for the smallest stuck part: an unrelated kernel that runs
// fine, or one stuck only behind the cycle, stays out of it.
TEST(BlpModel, CutNamesOnlyTheStuckCycle) {
  BlpProblem problem = cyclic_optimum_problem();
  problem.num_tensors = 7;
  problem.kernels.push_back(kernel(1, {0}, {5}));  // 5: runs
  problem.kernels.push_back(kernel(1, {4}, {6}));  // 6: waits behind the cycle
  OrderResult result = execution_order(problem, {0, 1, 5, 6});
  ASSERT_FALSE(result.order.has_value());
  EXPECT_EQ(result.cut.all_of, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(result.cut.one_of, std::vector<size_t>{2});
}

TEST(BlpSolve, CyclicOptimumIsCutAwayWithCbc) {
  BlpProblem problem = cyclic_optimum_problem();
  BlpSolution solution = solve_blp(*make_cbc_solver(), problem);
  expect_executable_plan(problem, solution);
  EXPECT_EQ(solution.chosen, (std::vector<size_t>{2, 1, 0}));
  EXPECT_DOUBLE_EQ(solution.cost, 3.5);
  EXPECT_EQ(solution.rounds, 2);
  EXPECT_TRUE(solution.proven_optimal);
}

TEST(BlpSolve, CyclicOptimumIsCutAwayWithBruteForce) {
  BlpProblem problem = cyclic_optimum_problem();
  BlpSolution solution = solve_blp(*make_brute_force_solver(), problem);
  expect_executable_plan(problem, solution);
  EXPECT_EQ(solution.chosen, (std::vector<size_t>{2, 1, 0}));
  EXPECT_DOUBLE_EQ(solution.cost, 3.5);
  EXPECT_EQ(solution.rounds, 2);
  EXPECT_TRUE(solution.proven_optimal);
}

// A kernel reading its own output satisfies the model's row (it is one of
// the writers) but cannot run; the cut removes it.
TEST(BlpSolve, KernelReadingItsOwnOutputIsCut) {
  BlpProblem problem{3, {0}, {1}, {kernel(1, {0, 1}, {1}), kernel(2, {0}, {1})}, {}};
  EXPECT_TRUE(satisfies_constraints(problem, {0}));
  for (auto& solver : both_solvers()) {
    BlpSolution solution = solve_blp(*solver, problem);
    expect_executable_plan(problem, solution);
    EXPECT_EQ(solution.chosen, std::vector<size_t>{1});
    EXPECT_EQ(solution.rounds, 2);
  }
}

// ---- Random primitive graphs and their candidate kernels ----

struct RandomGraph {
  int num_inputs = 0;
  int num_nodes = 0;
  std::vector<std::vector<int>> node_inputs;  // node i writes tensor num_inputs + i
  std::vector<bool> is_output;                // per node
  std::vector<uint32_t> descendants;          // per node, as a mask of nodes
};

int node_tensor(const RandomGraph& g, int node) { return g.num_inputs + node; }

void compute_descendants(RandomGraph& g);

RandomGraph random_graph(std::mt19937& rng, int max_nodes) {
  RandomGraph g;
  g.num_inputs = std::uniform_int_distribution<int>(1, 2)(rng);
  g.num_nodes = std::uniform_int_distribution<int>(1, max_nodes)(rng);
  g.node_inputs.resize(static_cast<size_t>(g.num_nodes));
  for (int i = 0; i < g.num_nodes; ++i) {
    int available = g.num_inputs + i;  // graph inputs and earlier nodes' outputs
    int arity = std::min(available, std::uniform_int_distribution<int>(1, 3)(rng));
    std::set<int> inputs;
    while (static_cast<int>(inputs.size()) < arity) {
      // Prefer recent tensors: chains and diamonds rather than a star.
      int back = std::min(available, 1 + std::geometric_distribution<int>(0.4)(rng));
      inputs.insert(std::bernoulli_distribution(0.8)(rng) ? available - back
                                                          : std::uniform_int_distribution<int>(0, available - 1)(rng));
    }
    g.node_inputs[static_cast<size_t>(i)].assign(inputs.begin(), inputs.end());
  }
  std::vector<bool> is_read(static_cast<size_t>(g.num_nodes), false);
  for (const auto& inputs : g.node_inputs)
    for (int t : inputs)
      if (t >= g.num_inputs) is_read[static_cast<size_t>(t - g.num_inputs)] = true;
  for (int i = 0; i < g.num_nodes; ++i)
    g.is_output.push_back(!is_read[static_cast<size_t>(i)] || std::bernoulli_distribution(0.15)(rng));
  compute_descendants(g);
  return g;
}

void compute_descendants(RandomGraph& g) {
  g.descendants.assign(static_cast<size_t>(g.num_nodes), 0);
  for (int i = g.num_nodes; i-- > 0;)
    for (int j = i + 1; j < g.num_nodes; ++j) {
      const auto& inputs = g.node_inputs[static_cast<size_t>(j)];
      if (std::find(inputs.begin(), inputs.end(), node_tensor(g, i)) != inputs.end())
        g.descendants[static_cast<size_t>(i)] |= (1u << j) | g.descendants[static_cast<size_t>(j)];
    }
}

// No path leaves `set` and comes back: no outside node is both a descendant
// of the set and an ancestor of it.
bool is_convex(const RandomGraph& g, uint32_t set) {
  uint32_t below = 0;
  for (int i = 0; i < g.num_nodes; ++i)
    if (set & (1u << i)) below |= g.descendants[static_cast<size_t>(i)];
  for (int v = 0; v < g.num_nodes; ++v)
    if ((below & ~set & (1u << v)) && (g.descendants[static_cast<size_t>(v)] & set)) return false;
  return true;
}

// Nodes adjacent to `set` (a producer or a consumer of a member).
uint32_t neighbours(const RandomGraph& g, uint32_t set) {
  uint32_t result = 0;
  for (int j = 0; j < g.num_nodes; ++j)
    for (int t : g.node_inputs[static_cast<size_t>(j)]) {
      if (t < g.num_inputs) continue;
      int i = t - g.num_inputs;
      if (set & (1u << j)) result |= 1u << i;
      if (set & (1u << i)) result |= 1u << j;
    }
  return result & ~set;
}

BlpKernel candidate_kernel(const RandomGraph& g, uint32_t set, double cost) {
  BlpKernel k;
  k.cost = cost;
  std::set<int> inputs, outputs;
  for (int i = 0; i < g.num_nodes; ++i) {
    if (!(set & (1u << i))) continue;
    for (int t : g.node_inputs[static_cast<size_t>(i)])
      if (t < g.num_inputs || !(set & (1u << (t - g.num_inputs)))) inputs.insert(t);
    if (g.is_output[static_cast<size_t>(i)]) outputs.insert(node_tensor(g, i));
  }
  for (int j = 0; j < g.num_nodes; ++j) {
    if (set & (1u << j)) continue;
    for (int t : g.node_inputs[static_cast<size_t>(j)])
      if (t >= g.num_inputs && (set & (1u << (t - g.num_inputs)))) outputs.insert(t);
  }
  k.inputs.assign(inputs.begin(), inputs.end());
  k.outputs.assign(outputs.begin(), outputs.end());
  return k;
}

// Every node alone, plus up to `max_fused` random convex connected sets of
// 2..5 nodes whose cost is the sum of their nodes' times a random factor
// (by default fusion usually, not always, pays).
struct FusionDiscount {
  double low = 0.4, high = 1.3;
};

// A primitive's cost: uniform in [1, 10], or log-uniform over profiled
// seconds (1 us .. 10 ms), the magnitudes CBC's objective scaling is for.
enum class Costs { Uniform, Seconds };

double random_node_cost(std::mt19937& rng, Costs costs) {
  if (costs == Costs::Uniform) return std::uniform_real_distribution<double>(1, 10)(rng);
  return std::pow(10.0, std::uniform_real_distribution<double>(-6, -2)(rng));
}

// Node sets that become fused kernels whatever the random ones are, with
// the discount drawn from `discount`.
struct ForcedSets {
  std::vector<uint32_t> sets;
  FusionDiscount discount;
};

BlpProblem problem_over(const RandomGraph& g, std::mt19937& rng, int max_fused, FusionDiscount discount, Costs costs,
                        const ForcedSets& forced = {}) {
  BlpProblem problem;
  problem.num_tensors = g.num_inputs + g.num_nodes;
  for (int t = 0; t < g.num_inputs; ++t) problem.available.push_back(t);
  for (int i = 0; i < g.num_nodes; ++i)
    if (g.is_output[static_cast<size_t>(i)]) problem.required.push_back(node_tensor(g, i));

  std::vector<double> node_cost;
  for (int i = 0; i < g.num_nodes; ++i) {
    node_cost.push_back(random_node_cost(rng, costs));
    problem.kernels.push_back(candidate_kernel(g, 1u << i, node_cost.back()));
  }
  std::set<uint32_t> fused;
  for (int attempt = 0; attempt < 6 * max_fused && static_cast<int>(fused.size()) < max_fused; ++attempt) {
    uint32_t set = 1u << std::uniform_int_distribution<int>(0, g.num_nodes - 1)(rng);
    int size = std::uniform_int_distribution<int>(2, 5)(rng);
    while (std::popcount(set) < size) {
      uint32_t around = neighbours(g, set);
      if (around == 0) break;
      std::vector<int> choices;
      for (int v = 0; v < g.num_nodes; ++v)
        if (around & (1u << v)) choices.push_back(v);
      set |= 1u << choices[std::uniform_int_distribution<size_t>(0, choices.size() - 1)(rng)];
    }
    if (std::popcount(set) < 2 || !is_convex(g, set) || !fused.insert(set).second) continue;
    double parts = 0;
    for (int i = 0; i < g.num_nodes; ++i)
      if (set & (1u << i)) parts += node_cost[static_cast<size_t>(i)];
    double factor = std::uniform_real_distribution<double>(discount.low, discount.high)(rng);
    problem.kernels.push_back(candidate_kernel(g, set, parts * factor));
  }
  for (uint32_t set : forced.sets) {
    EXPECT_TRUE(is_convex(g, set));
    if (!fused.insert(set).second) continue;
    double parts = 0;
    for (int i = 0; i < g.num_nodes; ++i)
      if (set & (1u << i)) parts += node_cost[static_cast<size_t>(i)];
    double factor = std::uniform_real_distribution<double>(forced.discount.low, forced.discount.high)(rng);
    problem.kernels.push_back(candidate_kernel(g, set, parts * factor));
  }
  return problem;
}

BlpProblem random_problem(std::mt19937& rng, int max_nodes, int max_fused, FusionDiscount discount = {},
                          Costs costs = Costs::Uniform) {
  return problem_over(random_graph(rng, max_nodes), rng, max_fused, discount, costs);
}

// `units` copies of a crossing, each fed by the previous one's first output:
// p and r read the unit's input, q reads p, s reads r, y reads p and s, z
// reads r and q; y and z are outputs. The convex sets {p, s, y} and
// {r, q, z} each read what the other writes (r's and p's outputs). Fused at
// under half their nodes' cost, with no other fused candidate, they are the
// model's unique optimum and cannot run, so the first round always needs a cut.
BlpProblem crossing_problem(std::mt19937& rng, int units, Costs costs) {
  RandomGraph g;
  g.num_inputs = 1;
  ForcedSets forced{{}, {0.1, 0.5}};
  int input = 0;
  for (int u = 0; u < units; ++u) {
    const int p = g.num_nodes, r = p + 1, q = p + 2, s = p + 3, y = p + 4, z = p + 5;
    const auto tensor = [&](int node) { return g.num_inputs + node; };
    g.node_inputs.insert(g.node_inputs.end(), {{input}, {input}, {tensor(p)}, {tensor(r)}, {tensor(p), tensor(s)},
                                               {tensor(r), tensor(q)}});
    g.is_output.insert(g.is_output.end(), {false, false, false, false, true, true});
    g.num_nodes += 6;
    forced.sets.push_back((1u << p) | (1u << s) | (1u << y));
    forced.sets.push_back((1u << r) | (1u << q) | (1u << z));
    input = tensor(y);
  }
  compute_descendants(g);
  return problem_over(g, rng, /*max_fused=*/0, {}, costs, forced);
}

// ---- An oracle independent of the model: every selection, simulated ----

// Kernels and tensors as bit masks (at most 64 tensors).
struct MaskedProblem {
  uint64_t available = 0, required = 0;
  std::vector<uint64_t> inputs, outputs;  // per kernel
  std::vector<double> costs;
};

MaskedProblem masked(const BlpProblem& problem) {
  EXPECT_LE(problem.num_tensors, 64);
  const auto mask_of = [](const std::vector<int>& tensors) {
    uint64_t mask = 0;
    for (int t : tensors) mask |= uint64_t{1} << t;
    return mask;
  };
  MaskedProblem m{mask_of(problem.available), mask_of(problem.required), {}, {}, {}};
  for (const BlpKernel& k : problem.kernels) {
    m.inputs.push_back(mask_of(k.inputs));
    m.outputs.push_back(mask_of(k.outputs));
    m.costs.push_back(k.cost);
  }
  return m;
}

// Runs the kernels of `subset` as a runtime would, each as soon as all its
// inputs exist, until none can: the selection is executable when every
// kernel ran and every required tensor exists.
bool runs_to_completion(const MaskedProblem& m, uint32_t subset) {
  uint64_t present = m.available;
  uint32_t waiting = subset;
  for (bool progress = true; progress && waiting != 0;) {
    progress = false;
    for (uint32_t rest = waiting; rest != 0; rest &= rest - 1) {
      const int k = std::countr_zero(rest);
      if ((m.inputs[size_t(k)] & ~present) != 0) continue;
      present |= m.outputs[size_t(k)];
      waiting &= ~(1u << k);
      progress = true;
    }
  }
  return waiting == 0 && (m.required & ~present) == 0;
}

constexpr size_t kMaxEnumeratedKernels = 22;

// The cheapest executable selection over all 2^n subsets (n <= 22). Costs and
// written tensors are built up subset by subset; only subsets cheaper than
// the best so far that write every required tensor are simulated.
double cheapest_executable_by_enumeration(const BlpProblem& problem) {
  const MaskedProblem m = masked(problem);
  const size_t n = problem.kernels.size();
  EXPECT_LE(n, kMaxEnumeratedKernels);
  std::vector<double> cost(size_t{1} << n, 0.0);
  std::vector<uint64_t> written(size_t{1} << n, 0);
  double best = std::numeric_limits<double>::infinity();
  for (uint32_t subset = 0; subset < (1u << n); ++subset) {
    if (subset != 0) {
      const int k = std::countr_zero(subset);
      cost[subset] = cost[subset & (subset - 1)] + m.costs[size_t(k)];
      written[subset] = written[subset & (subset - 1)] | m.outputs[size_t(k)];
    }
    if (cost[subset] >= best || (m.required & ~(m.available | written[subset])) != 0) continue;
    if (runs_to_completion(m, subset)) best = cost[subset];
  }
  return best;
}

TEST(BlpOracle, SimulationDecidesExecutability) {
  // The cyclic pair {A, B} meets the model but cannot run; with C it can.
  const MaskedProblem m = masked(cyclic_optimum_problem());
  EXPECT_FALSE(runs_to_completion(m, 0b00011));
  EXPECT_TRUE(runs_to_completion(m, 0b00111));
  EXPECT_TRUE(runs_to_completion(m, 0b11000));
  EXPECT_FALSE(runs_to_completion(m, 0b01000));  // tensor 4 is not written
  EXPECT_DOUBLE_EQ(cheapest_executable_by_enumeration(cyclic_optimum_problem()), 3.5);
}

struct RandomTrials {
  int trials = 0;
  int cut_problems = 0;  // needed a second round (a cyclic selection was cut)
  int enumerated = 0;    // also checked against enumeration
};

// Solves `trials` random problems with both solvers and checks that the
// costs agree and, for those of at most kMaxEnumeratedKernels kernels, that
// they equal the enumerated optimum.
RandomTrials compare_solvers(int trials, const std::function<BlpProblem()>& make_problem) {
  RandomTrials stats{trials, 0, 0};
  for (int trial = 0; trial < trials; ++trial) {
    BlpProblem problem = make_problem();
    SCOPED_TRACE("trial " + std::to_string(trial) + ", " + std::to_string(problem.kernels.size()) + " kernels");
    BlpSolution cbc = solve_blp(*make_cbc_solver(), problem);
    BlpSolution brute = solve_blp(*make_brute_force_solver(), problem);
    expect_executable_plan(problem, cbc);
    expect_executable_plan(problem, brute);
    EXPECT_TRUE(cbc.proven_optimal);
    EXPECT_TRUE(brute.proven_optimal);
    EXPECT_NEAR(cbc.cost, brute.cost, 1e-9 * std::abs(brute.cost));
    if (cbc.rounds > 1 || brute.rounds > 1) ++stats.cut_problems;
    if (problem.kernels.size() <= kMaxEnumeratedKernels) {
      EXPECT_NEAR(cbc.cost, cheapest_executable_by_enumeration(problem), 1e-9 * std::abs(brute.cost));
      ++stats.enumerated;
    }
  }
  std::cout << "[ info     ] " << stats.cut_problems << " of " << trials << " problems needed cuts; "
            << stats.enumerated << " also checked by enumeration\n";
  return stats;
}

// The required check (issue 4): 200 random primitive graphs of up to 12
// primitives, random costs; the BLP plan costs the optimum. The counts are
// those of these seeds; they guard against a generator that drifts into
// problems too large to enumerate or too easy to need cuts.
TEST(BlpSolve, RandomGraphsCbcMatchesBruteForceAndEnumeration) {
  std::mt19937 rng(20261201);
  RandomTrials stats = compare_solvers(200, [&] { return random_problem(rng, 12, 10, {}); });
  EXPECT_GE(stats.enumerated, 190);
}

// Cheap fusion makes multi-output kernels win more often, and with them
// cyclic selections: the same check, with a few cuts.
TEST(BlpSolve, RandomGraphsWithCheapFusion) {
  std::mt19937 rng(4242);
  RandomTrials stats = compare_solvers(200, [&] { return random_problem(rng, 12, 10, {0.2, 0.8}); });
  EXPECT_GE(stats.enumerated, 190);
  EXPECT_GE(stats.cut_problems, 3);
}

// Costs in seconds, spread over four decades as profiling gives them: CBC
// works on scaled costs (solver_cbc.cc) and must still find the exact optimum.
TEST(BlpSolve, RandomGraphsWithCostsInSeconds) {
  std::mt19937 rng(77);
  RandomTrials stats = compare_solvers(200, [&] { return random_problem(rng, 12, 10, {0.2, 1.0}, Costs::Seconds); });
  EXPECT_GE(stats.enumerated, 190);
}

// Every problem here starts with a cyclic optimum (crossing_problem): the cut
// loop runs on each, and the answer still equals the enumerated optimum.
TEST(BlpSolve, CrossingGraphsAlwaysNeedCuts) {
  std::mt19937 rng(31);
  int trial = 0;
  RandomTrials stats = compare_solvers(100, [&] {
    ++trial;
    return crossing_problem(rng, 1 + trial % 2, trial % 3 ? Costs::Uniform : Costs::Seconds);
  });
  EXPECT_EQ(stats.enumerated, 100);
  EXPECT_EQ(stats.cut_problems, 100);
}

// Wide and deep: many overlapping fused candidates (34 to 40 kernels).
BlpProblem wide_random_problem() {
  std::mt19937 rng(7);
  BlpProblem problem;
  for (int attempt = 0; attempt < 1000 && (problem.kernels.size() < 34 || problem.kernels.size() > 40); ++attempt)
    problem = random_problem(rng, 24, 16);
  return problem;
}

// The time limit reached for certain: no time at all, and no minimum round
// time (solve_blp otherwise grants every round 0.5 s).
SolveOptions out_of_time(std::vector<size_t> start = {}) {
  return SolveOptions{.time_limit_seconds = 0, .start = std::move(start), .min_round_seconds = 0};
}

TEST(BlpSolve, TimeLimitReturnsAFeasiblePlanOrSaysNotProven) {
  BlpProblem problem = wide_random_problem();
  ASSERT_GE(problem.kernels.size(), 34u);
  ASSERT_LE(problem.kernels.size(), 40u);
  for (auto& solver : both_solvers()) {
    BlpSolution solution = solve_blp(*solver, problem, out_of_time());
    EXPECT_FALSE(solution.proven_optimal);
    if (solution.feasible) expect_executable_plan(problem, solution);
  }
  // Without the limit both prove the same optimum.
  BlpSolution cbc = solve_blp(*make_cbc_solver(), problem);
  BlpSolution brute = solve_blp(*make_brute_force_solver(), problem);
  expect_executable_plan(problem, cbc);
  EXPECT_TRUE(cbc.proven_optimal);
  EXPECT_TRUE(brute.proven_optimal);
  EXPECT_NEAR(cbc.cost, brute.cost, 1e-9 * brute.cost);
}

// Profile-and-resolve starts each round from the previous round's plan: when
// the time runs out, the solver returns that plan (or a better one), never
// nothing, and says it is not proven optimal. The start is the greedy plan,
// costlier than the optimum, so "kept" is told apart from "solved".
TEST(BlpSolve, StartSelectionIsKeptWhenTheTimeRunsOut) {
  BlpProblem problem = wide_random_problem();
  const std::vector<size_t> start = *greedy_selection(problem);
  const double start_cost = selection_cost(problem, start);
  const BlpSolution best = solve_blp(*make_brute_force_solver(), problem);
  ASSERT_GT(start_cost, best.cost * (1 + 1e-6));
  BlpSolution cbc = solve_blp(*make_cbc_solver(), problem, out_of_time(start));
  ASSERT_TRUE(cbc.feasible);
  expect_executable_plan(problem, cbc);
  EXPECT_FALSE(cbc.proven_optimal);
  EXPECT_LE(cbc.cost, start_cost * (1 + 1e-9));
  std::cout << "[ info     ] start " << start_cost << ", returned " << cbc.cost << ", optimum " << best.cost << "\n";
}

// A start only seeds the search: from a worse plan CBC still proves the optimum.
TEST(BlpSolve, AWorseStartStillEndsAtTheOptimum) {
  BlpProblem problem = wide_random_problem();
  BlpProblem other_costs = problem;
  std::mt19937 rng(11);
  for (BlpKernel& k : other_costs.kernels) k.cost *= std::uniform_real_distribution<double>(0.2, 5.0)(rng);
  BlpSolution start = solve_blp(*make_cbc_solver(), other_costs);
  ASSERT_TRUE(start.feasible);
  BlpSolution cbc = solve_blp(*make_cbc_solver(), problem, {60, start.chosen});
  BlpSolution brute = solve_blp(*make_brute_force_solver(), problem);
  expect_executable_plan(problem, cbc);
  EXPECT_TRUE(cbc.proven_optimal);
  EXPECT_NEAR(cbc.cost, brute.cost, 1e-9 * brute.cost);
}

// The solvers' first incumbent: executable, in order, no cheaper than optimal.
TEST(BlpSolve, GreedySelectionIsAnExecutablePlan) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 100; ++trial) {
    BlpProblem problem = random_problem(rng, 12, 14);
    SCOPED_TRACE("trial " + std::to_string(trial));
    std::optional<std::vector<size_t>> greedy = greedy_selection(problem);
    ASSERT_TRUE(greedy.has_value());
    EXPECT_TRUE(is_execution_order(problem, *greedy));
    EXPECT_TRUE(satisfies_constraints(problem, *greedy));
    const BlpSolution best = solve_blp(*make_brute_force_solver(), problem);
    EXPECT_GE(selection_cost(problem, *greedy), best.cost * (1 - 1e-9));
  }
}

TEST(BlpSolve, GreedySelectionOfAnInfeasibleProblemIsNone) {
  // Tensor 1 is required; its only writer reads tensor 2, which nothing writes.
  BlpProblem problem{3, {0}, {1}, {kernel(1, {2}, {1})}, {}};
  EXPECT_FALSE(greedy_selection(problem).has_value());
}

TEST(BlpSolve, BruteForceRefusesLargeProblems) {
  BlpProblem problem{1, {0}, {}, std::vector<BlpKernel>(41, kernel(1, {0}, {0})), {}};
  EXPECT_THROW(make_brute_force_solver()->solve_once(problem, {}), InternalError);
}

}  // namespace
}  // namespace orchid::orchestration
