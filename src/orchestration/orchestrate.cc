#include "orchestration/orchestrate.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>

#include "cost/cost_model.h"
#include "ir/graph_utils.h"
#include "orchestration/assembly.h"
#include "orchestration/blp_builder.h"
#include "orchestration/epilogue_pricing.h"
#include "orchestration/merges.h"
#include "orchestration/plan_cache.h"
#include "orchestration/solver.h"
#include "support/cache_dir.h"
#include "support/error.h"

namespace orchid::orchestration {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A kernel that cannot be built (the backend turned it down after all) is
// priced out of every plan rather than failing the compile.
constexpr double kUnbuildable = 1e6;

std::vector<ValueId> derived_values(const std::vector<Alternative>& alternatives) {
  std::vector<ValueId> values;
  for (const Alternative& a : alternatives) values.push_back(a.derived);
  return values;
}

cost::KernelClass kernel_class(CandidateKind kind) {
  switch (kind) {
    case CandidateKind::Linear: return cost::KernelClass::Linear;
    case CandidateKind::Generated: return cost::KernelClass::Generated;
    case CandidateKind::Library: return cost::KernelClass::Library;
  }
  return cost::KernelClass::Library;
}

class Orchestrator {
 public:
  Orchestrator(Graph graph, std::vector<Alternative> alternatives, const OrchestrateOptions& options,
               OrchestrationReport& report)
      : graph_(std::move(graph)),
        alternatives_(std::move(alternatives)),
        options_(options),
        backend_(options.backend ? *options.backend : backend::cpu_backend()),
        report_(report),
        make_group_(graph_, derived_values(alternatives_)) {
    check_alternatives(graph_, alternatives_);
    report_.alternatives = alternatives_.size();
  }

  runtime::Program run() {
    enumerate();
    open_cost_model();
    build_problems();
    price();
    std::vector<std::vector<size_t>> chosen = solve();
    for (int round = 1, explored = 0; options_.profile && round < options_.max_rounds; ++round) {
      std::vector<size_t> next = unmeasured(chosen);
      if (next.empty() && explored++ < kMergeRounds) next = merges(chosen);
      if (!measure(next)) break;
      reestimate();
      chosen = solve();
    }
    return assemble(chosen);
  }

 private:
  void enumerate() {
    const auto start = Clock::now();
    notify({"candidates", 0, 0, -1});
    const CandidateRules rules = backend_.candidate_rules();
    set_ = enumerate_candidates(graph_, rules, options_.candidates, alternatives_);
    for (const Candidate& candidate : set_.candidates) {
      groups_.push_back(make_group_(candidate.nodes));
      groups_.back().variant = candidate.variant;
      if (candidate.kind == CandidateKind::Linear) {
        chains_[candidate.nodes[0]].push_back(groups_.size() - 1);
      }
      by_nodes_.emplace(candidate.nodes, groups_.size() - 1);
      if (candidate.kind == CandidateKind::Generated) {
        groups_.back().symbol = "orchid_candidate_" + std::to_string(groups_.size() - 1);
        ++report_.generated_candidates;
      }
      // (after the symbol: a generated kernel of a group works in fewer layouts than a library one)
      either_layout_.push_back(candidate.kind != CandidateKind::Linear && rules.takes_native_layouts &&
                               rules.takes_native_layouts(graph_, groups_.back()));
      relabeling_.push_back(KernelLayout::RowMajor);
      if (candidate.kind != CandidateKind::Linear && rules.relabels) {
        const Relabeling r = rules.relabels(graph_, groups_.back());
        if (r != Relabeling::None) {
          relabeling_.back() = r == Relabeling::OutputNative ? KernelLayout::RelabelToNative
                                                             : KernelLayout::RelabelFromNative;
        }
      }
      native_linear_.push_back(candidate.kind == CandidateKind::Linear &&
                               (rules.linear_keeps_native_layouts
                                    ? rules.linear_keeps_native_layouts(graph_, groups_.back())
                                    : candidate.variant.empty()));
    }
    report_.parts = set_.parts;
    report_.clusters = set_.clusters.size();
    report_.candidates = set_.candidates.size();
    report_.enumerate_seconds = seconds_since(start);
  }

  void build_problems() {
    std::vector<KernelLayout> layouts;
    for (size_t i = 0; i < set_.candidates.size(); ++i) {
      layouts.push_back(keeps_native_layouts(i) ? KernelLayout::Native
                        : either_layout_[i]     ? KernelLayout::Either
                                                : relabeling_[i]);
    }
    problems_ = build_part_problems(graph_, set_, groups_, layouts, alternatives_);
  }

  // Converting a tensor between row-major and a native layout: one read and
  // one write of it at the measured bandwidth, or what a oneDNN kernel that
  // reads or writes it was measured to spend on converting it, if more (its
  // time with a row-major input minus its time with a native one; with a
  // row-major output minus with a native one).
  double reorder_seconds(ValueId id) const {
    const TensorType& type = graph_.type(id);
    const double estimate =
        2.0 * double(type.numel()) * double(dtype_size(type.dtype)) / cost_model_->peaks().bytes_per_second;
    auto it = measured_conversion_.find(id);
    return it == measured_conversion_.end() ? estimate : std::max(estimate, it->second);
  }

  // A oneDNN kernel (the default implementation of a linear group) that
  // reads and writes oneDNN's native layouts: a conv, not a matrix product
  // (CandidateRules::linear_keeps_native_layouts). Priced as native, a GEMM +
  // col2im deconvolution had seemed to read a oneDNN conv's output for
  // free, and the conv then wrote row-major at 3x its time (FSRCNN).
  bool keeps_native_layouts(size_t i) const { return native_linear_[i]; }

  // What the BLP pays per candidate (epilogue_pricing.h).
  std::vector<double> blp_prices() const {
    std::vector<double> costs(set_.candidates.size());
    for (size_t i = 0; i < costs.size(); ++i) costs[i] = timed_cost(i);
    return price_epilogue_chains(graph_, set_.candidates, groups_, costs, timed());
  }

  // Per candidate, whether its cost was measured (or cached) rather than estimated.
  std::vector<bool> timed() const {
    std::vector<bool> timed(costs_.size());
    for (size_t i = 0; i < costs_.size(); ++i) timed[i] = costs_[i].source != CostSource::Estimated;
    return timed;
  }

  // A kernel's timed cost. A oneDNN kernel is timed with native inputs too
  // (as oneDNN producers write them); in a plan its inputs are native when
  // oneDNN kernels write them, and the conversions are priced by the reorder
  // pseudo-kernels (layout_model.h), so its native time is its cost. Without
  // that measurement (a cache from before), its row-major time less the
  // estimated conversions (at most half the time).
  double timed_cost(size_t i) const {
    const KernelCost& cost = costs_[i];
    if (!keeps_native_layouts(i) || cost.source == CostSource::Estimated) return cost.seconds;
    if (native_costs_[i]) return *native_costs_[i];
    double conversions = 0;
    for (ValueId id : groups_[i].inputs) {
      if (!graph_.value(id).is_constant()) conversions += reorder_seconds(id);
    }
    return std::max(0.5 * cost.seconds, cost.seconds - conversions);
  }

  void open_cost_model() {
    cost::CostModelOptions cost_options;
    cost_options.cache_path = cost::cost_cache_path(options_.cache_dir);
    cost_options.threads = options_.threads;
    cost_options.backend = &backend_;
    cost_model_ = std::make_unique<cost::CostModel>(cost_options);
  }

  // Cached measurements where there are, estimates elsewhere.
  void price() {
    costs_.resize(set_.candidates.size());
    native_costs_.assign(set_.candidates.size(), std::nullopt);
    for (size_t i = 0; i < set_.candidates.size(); ++i) {
      if (read_cached(i)) continue;
      costs_[i] = {cost_model_->estimate(graph_, groups_[i], kernel_class(set_.candidates[i].kind)),
                   CostSource::Estimated};
    }
  }

  // Candidate i's cost from the cache, if it is there.
  bool read_cached(size_t i) {
    const std::optional<double> cached = cost_model_->cached(graph_, groups_[i]);
    if (!cached) return false;
    costs_[i] = {*cached, CostSource::Cached};
    if (keeps_native_layouts(i)) {
      note_native(i, cost_model_->cached_native(graph_, groups_[i]));
      note_row_major(i, cost_model_->cached_row_major(graph_, groups_[i]));
    }
    ++report_.cached;
    return true;
  }

  // The estimates again, calibrated with this round's measurements too: on
  // a cold cache the first estimates are uncalibrated, and without this
  // every round measures the next optimistic guess (a 68-primitive graph
  // took 16 rounds, each a compiler run). A candidate identical to one just
  // measured takes its time instead, as a warm compile would.
  void reestimate() {
    cost_model_->recalibrate();
    for (size_t i = 0; i < set_.candidates.size(); ++i) {
      if (costs_[i].source != CostSource::Estimated || read_cached(i)) continue;
      costs_[i].seconds = cost_model_->estimate(graph_, groups_[i], kernel_class(set_.candidates[i].kind));
    }
  }

  // A part's best plan with every derived form priced out (as compiled
  // without derivation): the joint solve starts from it, so a joint solve
  // cut short by the time limit returns nothing worse than that plan.
  static std::vector<size_t> plan_without_aliases(const PlanCacheEntry& cache, Solver& solver, const PartProblem& part,
                                                  double budget) {
    constexpr double kPricedOut = 1e6;  // seconds: more than any plan
    BlpProblem without = part.problem;
    for (size_t k = 0; k < without.kernels.size(); ++k) {
      if (part.alias(k)) without.kernels[k].cost = kPricedOut;
    }
    const std::vector<size_t> greedy = greedy_selection(without).value_or(std::vector<size_t>{});
    const BlpSolution solution = cached_solve_blp(cache, solver, without, {budget, greedy});
    if (!solution.feasible || solution.cost >= kPricedOut) return {};
    return solution.chosen;
  }

  std::vector<std::vector<size_t>> solve() {
    const auto start = Clock::now();
    notify({"solving", 0, problems_.size(), -1});
    std::unique_ptr<Solver> solver = make_cbc_solver();
    std::vector<std::vector<size_t>> chosen(problems_.size());
    bool optimal = true;
    double planned = 0;
    std::set<ValueId> natively_written;  // by the native kernels chosen in earlier parts
    std::set<ValueId> row_major_written;  // by their reorders to row-major
    std::set<size_t> chosen_aliases;
    const std::vector<double> prices = blp_prices();
    for (size_t p = 0; p < problems_.size(); ++p) {
      PartProblem& part = problems_[p];
      for (size_t k = 0; k < part.problem.kernels.size(); ++k) {
        if (const std::optional<size_t> c = part.candidate(k)) {
          part.problem.kernels[k].cost = part.layouts.is_relabeling(k) ? kRelabelSeconds : prices[*c];
        }
      }
      for (size_t r = 0; r < part.layouts.reorder_tensors.size(); ++r) {
        const ValueId id = part.value_of[size_t(part.layouts.reorder_tensors[r])];
        part.problem.kernels[part.layouts.real_kernels + r].cost = reorder_seconds(id);
        if (part.layouts.of_available[r]) {
          start_available_in(part.problem, part.layouts, r, natively_written.count(id) && !row_major_written.count(id));
        }
      }
      auto budget = [&] {
        return std::max(0.0, options_.solver_time_limit - report_.solve_seconds - seconds_since(start));
      };
      const PlanCacheEntry cache{&cost_model_->cache(), cost_model_->machine(), options_.solver_time_limit};
      std::vector<size_t> initial = part.last_selection;
      if (initial.empty() && !part.aliases.empty()) initial = plan_without_aliases(cache, *solver, part, budget());
      if (initial.empty()) initial = greedy_selection(part.problem).value_or(std::vector<size_t>{});
      bool from_cache = false;
      const BlpSolution solution = cached_solve_blp(cache, *solver, part.problem, {budget(), initial}, &from_cache);
      report_.cached_solves += from_cache;
      if (!solution.feasible) ORCHID_FAIL() << "orchestration found no plan for part " << p << " (an internal limit)";
      optimal = optimal && solution.proven_optimal;
      planned += solution.cost;
      part.last_selection = solution.chosen;
      for (size_t k : solution.chosen) {
        if (const std::optional<size_t> a = part.alias(k)) {
          chosen_aliases.insert(*a);
          if (part.layouts.writes_native_form(k)) natively_written.insert(alternatives_[*a].original);
        }
        if (const std::optional<int> row = part.layouts.row_major_form_made_by(k, part.problem)) {
          row_major_written.insert(part.value_of[size_t(*row)]);
        }
        const std::optional<size_t> c = part.candidate(k);
        if (!c) continue;
        const size_t i = *c;
        // (a warm start may hold both forms of one kernel)
        if (std::find(chosen[p].begin(), chosen[p].end(), i) != chosen[p].end()) continue;
        chosen[p].push_back(i);
        if (keeps_native_layouts(i) || part.layouts.writes_native_form(k)) {
          natively_written.insert(groups_[i].outputs.begin(), groups_[i].outputs.end());
        }
      }
    }
    chosen_aliases_ = std::move(chosen_aliases);
    report_.proven_optimal = optimal;
    report_.planned_seconds = planned;
    ++report_.rounds;
    report_.solve_seconds += seconds_since(start);
    return chosen;
  }

  // The chosen candidates not measured yet, the other implementations of
  // each chosen linear group, and the groups of the same anchor with longer
  // epilogue chains: an estimate cannot tell them apart (nor a cached time
  // from an estimate), so they are measured side by side. (Without the
  // longer chains a measured Conv beside a measured generated Mish looked
  // cheaper than the Conv + Mish post-op's estimate, which was never timed:
  // 8 of YOLOv4's convs took their Mish as a post-op, 54 with this.)
  std::vector<size_t> unmeasured(const std::vector<std::vector<size_t>>& chosen) const {
    std::set<size_t> out;
    for (const std::vector<size_t>& part : chosen) {
      for (size_t i : part) {
        if (costs_[i].source == CostSource::Estimated) out.insert(i);
        if (set_.candidates[i].kind != CandidateKind::Linear) continue;
        const std::vector<size_t>& nodes = set_.candidates[i].nodes;
        for (size_t j : chains_.at(nodes[0])) {
          const bool same_or_longer = set_.candidates[j].nodes.size() >= nodes.size();
          if (same_or_longer && costs_[j].source == CostSource::Estimated) out.insert(j);
        }
      }
    }
    for (const std::vector<size_t>& part : chosen) {
      for (size_t i : part) add_transpose_pieces(i, out);
    }
    return {out.begin(), out.end()};
  }

  // Once every chosen kernel is timed, the estimated candidates that merge
  // chosen timed kernels (merges.h), in at most kMergeRounds rounds: each
  // is a compiler run (YOLOX-Nano's cold compile went from 36 to 63 s when
  // every round looked for merges).
  static constexpr int kMergeRounds = 2;
  std::vector<size_t> merges(const std::vector<std::vector<size_t>>& chosen) const {
    return merges_of_chosen(set_.candidates, chosen, timed(), graph_.nodes().size());
  }

  // A chosen generated kernel holding a Transpose of the innermost axis
  // (clusters.h) runs in one order and strides through the other; its pieces
  // apart, the nodes before the Transpose, the Transpose and the nodes after
  // it, are measured beside it. Estimates cannot tell which is faster, and
  // once a few such kernels are measured slow, calibration scales every
  // generated estimate up with them and the pieces were never tried.
  void add_transpose_pieces(size_t i, std::set<size_t>& out) const {
    if (set_.candidates[i].kind != CandidateKind::Generated) return;
    const std::vector<size_t>& nodes = set_.candidates[i].nodes;
    for (size_t t : nodes) {
      if (!moves_innermost_axis(graph_.nodes()[t])) continue;
      const std::vector<size_t> before = ancestors_within(nodes, t);
      std::vector<size_t> after;
      for (size_t n : nodes) {
        if (n != t && !std::binary_search(before.begin(), before.end(), n)) after.push_back(n);
      }
      for (const std::vector<size_t>& piece : {before, after, std::vector<size_t>{t}}) {
        auto it = by_nodes_.find(piece);
        if (it != by_nodes_.end() && costs_[it->second].source == CostSource::Estimated) out.insert(it->second);
      }
    }
  }

  // The nodes of `nodes` (ascending) that node t reads from through nodes of
  // `nodes`, ascending.
  std::vector<size_t> ancestors_within(const std::vector<size_t>& nodes, size_t t) const {
    std::set<size_t> found;
    std::vector<size_t> stack = {t};
    while (!stack.empty()) {
      const size_t n = stack.back();
      stack.pop_back();
      for (ValueId id : graph_.nodes()[n].inputs) {
        const size_t p = id == kNoValue ? kNoNode : producer_[size_t(id)];
        if (p == kNoNode || found.count(p) || !std::binary_search(nodes.begin(), nodes.end(), p)) continue;
        found.insert(p);
        stack.push_back(p);
      }
    }
    return {found.begin(), found.end()};
  }

  // Builds and times the candidates; false when there is nothing to do.
  bool measure(const std::vector<size_t>& candidates) {
    if (candidates.empty()) return false;
    const auto start = Clock::now();
    std::shared_ptr<const backend::KernelModule> module = build_generated(candidates);
    size_t done = 0;
    for (size_t i : candidates) {
      const double elapsed = seconds_since(start);
      notify({"profiling", done, candidates.size(), done ? elapsed / double(done) * double(candidates.size() - done) : -1});
      ++done;
      // A kernel identical to one timed earlier in this compile (a repeated
      // layer) takes its time: one measurement per kernel, so the plan is
      // the one a warm compile makes from the cache.
      if (read_cached(i)) continue;
      costs_[i] = {time_candidate(i, module), CostSource::Measured};
      ++report_.measured;
    }
    notify({"profiling", done, candidates.size(), 0});
    report_.profile_seconds += seconds_since(start);
    return true;
  }

  double time_candidate(size_t i, const std::shared_ptr<const backend::KernelModule>& module) {
    const runtime::KernelGroup& group = groups_[i];
    std::unique_ptr<runtime::Kernel> kernel;
    try {
      kernel = backend_.make_kernel(graph_, group, module);
    } catch (const std::exception& error) {
      if (report_.unbuildable++ == 0) report_.first_unbuildable = group.name + ": " + error.what();
      return kUnbuildable;
    }
    if (shares_its_input_buffer(*kernel, group)) return kBufferShareSeconds;
    const cost::KernelClass kind = kernel_class(set_.candidates[i].kind);
    const bool native_outputs = cost::has_native_outputs(*kernel, group);  // asked before timing switches them
    const double seconds = cost_model_->measure(*kernel, graph_, group, kind);
    if (!keeps_native_layouts(i)) return seconds;
    costs_[i].seconds = seconds;  // note_native compares with it
    if (!cost::has_native_inputs(*kernel, group)) {
      // Nothing to read natively (a MatMul): the same time, not timed again.
      cost_model_->store_native(graph_, group, seconds, kind);
      note_native(i, seconds);
    } else {
      // A fresh kernel: the timed one writes its output natively now.
      std::unique_ptr<runtime::Kernel> fresh = backend_.make_kernel(graph_, group, nullptr);
      note_native(i, cost_model_->measure_native(*fresh, graph_, group, kind));
    }
    if (native_outputs) {
      std::unique_ptr<runtime::Kernel> fresh = backend_.make_kernel(graph_, group, nullptr);
      note_row_major(i, cost_model_->measure_row_major(*fresh, graph_, group, kind));
    }
    return seconds;
  }

  // A Reshape between intermediates: the executor gives its output its
  // input's buffer and skips it (runtime::Executable::same_bytes), so it
  // costs nothing but its place in the plan; timed alone it would copy.
  static constexpr double kBufferShareSeconds = 1e-7;
  bool shares_its_input_buffer(const runtime::Kernel& kernel, const runtime::KernelGroup& group) const {
    const std::optional<size_t> slot = kernel.output_is_input_bytes();
    return slot && group.outputs.size() == 1 && *slot < group.inputs.size() &&
           is_intermediate(graph_, group.inputs[*slot]) && is_intermediate(graph_, group.outputs[0]);
  }

  // A oneDNN candidate's time with native inputs, and what it spent on
  // converting its first input (the conv's src) when that was row-major.
  void note_native(size_t i, std::optional<double> native) {
    native_costs_[i] = native;
    const ValueId src = groups_[i].inputs.empty() ? kNoValue : groups_[i].inputs[0];
    if (!native || src == kNoValue || graph_.value(src).is_constant()) return;
    double& conversion = measured_conversion_[src];
    conversion = std::max(conversion, costs_[i].seconds - *native);
  }

  // A oneDNN candidate's time with a row-major output, and what writing its
  // output row-major costs it over its native layout: a row-major reader's
  // conversion, which can exceed a reorder's bytes (FSRCNN's 1 -> 56
  // channel 5x5 conv + PReLU: 1.6 ms native, about 4 ms more row-major, so
  // the plan had chosen it over the direct conv's 2.4 ms).
  void note_row_major(size_t i, std::optional<double> row_major) {
    if (!row_major || groups_[i].outputs.size() != 1) return;
    double& conversion = measured_conversion_[groups_[i].outputs[0]];
    conversion = std::max(conversion, *row_major - costs_[i].seconds);
  }

  // One module for the generated candidates among `candidates` (nullptr when none).
  std::shared_ptr<const backend::KernelModule> build_generated(const std::vector<size_t>& candidates) {
    std::vector<runtime::KernelGroup> generated;
    for (size_t i : candidates) {
      if (set_.candidates[i].kind == CandidateKind::Generated) generated.push_back(groups_[i]);
    }
    if (generated.empty()) return nullptr;
    const auto start = Clock::now();
    notify({"codegen", 0, generated.size(), -1});
    const backend::BuiltModule built = backend_.build_module(graph_, generated, cache_dir());
    report_.codegen_seconds += seconds_since(start);
    return backend_.load_module(built.path, built.sha256);
  }

  // The program: the chosen kernels part by part, each in execution order.
  // Where two chosen kernels write the same value (overlapping multi-output
  // kernels), the later one stops writing it: generated kernels drop the
  // output, a kernel left with nothing to write is dropped.
  runtime::Program assemble(const std::vector<std::vector<size_t>>& chosen) {
    if (!alternatives_.empty()) keep_chosen_forms(chosen);
    runtime::Program program;
    std::vector<bool> written(graph_.num_values(), false);
    std::vector<runtime::KernelGroup> generated;
    for (const std::vector<size_t>& part : chosen) {
      for (size_t i : part) {
        runtime::KernelGroup group = groups_[i];
        std::vector<ValueId> outputs;
        for (ValueId id : group.outputs) {
          if (!written[size_t(id)]) outputs.push_back(id);
        }
        if (outputs.empty()) continue;
        const bool is_generated = set_.candidates[i].kind == CandidateKind::Generated;
        ORCHID_CHECK(is_generated || outputs.size() == group.outputs.size())
            << "kernel '" << group.name << "' would write a value a chosen kernel already wrote";
        group.outputs = outputs;
        if (group.nodes.size() > 1) {
          // Reports list the ops; the name says where the kernel starts.
          group.name = graph_.nodes()[group.nodes[0]].name + " (+" + std::to_string(group.nodes.size() - 1) + ")";
        }
        for (ValueId id : outputs) written[size_t(id)] = true;
        if (is_generated) {
          group.symbol = "orchid_kernel_" + std::to_string(program.kernels.size());
          generated.push_back(group);
        }
        program.kernels.push_back(std::move(group));
        report_.kernel_costs.push_back(costs_[i]);
      }
    }
    if (!generated.empty()) {
      const auto start = Clock::now();
      notify({"codegen", 0, generated.size(), -1});
      backend::BuiltModule built = backend_.build_module(graph_, generated, cache_dir());
      program.generated_source = std::move(built.source);
      program.library_path = built.path;
      program.library_sha256 = built.sha256;
      report_.library_cached = built.cached;
      report_.codegen_seconds += seconds_since(start);
    }
    program.graph = std::move(graph_);
    runtime::verify_program(program);
    return program;
  }

  // The program's graph holds the chosen form of each alternative
  // (assembly.h); the chosen candidates' groups are made again on it.
  void keep_chosen_forms(const std::vector<std::vector<size_t>>& chosen) {
    std::vector<ChosenKernel> kernels;
    for (const std::vector<size_t>& part : chosen) {
      for (size_t i : part) kernels.push_back({set_.candidates[i].nodes, groups_[i].variant, groups_[i].outputs});
    }
    KeptForms kept = orchestration::keep_chosen_forms(graph_, alternatives_, kernels, chosen_aliases_);
    graph_ = std::move(kept.graph);
    size_t k = 0;
    for (const std::vector<size_t>& part : chosen) {
      for (size_t i : part) groups_[i] = std::move(kept.groups[k++]);
    }
    report_.derived_forms_chosen += kept.derived_nodes_chosen.size();
    for (std::string& name : kept.derived_nodes_chosen) report_.derived_nodes_chosen.push_back(std::move(name));
  }

  std::string cache_dir() const {
    return options_.cache_dir.empty() ? default_cache_dir() : private_cache_dir(options_.cache_dir);
  }

  void notify(const Progress& progress) const {
    if (options_.progress) options_.progress(progress);
  }

  Graph graph_;
  std::vector<Alternative> alternatives_;
  std::set<size_t> chosen_aliases_;  // the alternatives whose derived form the last solve chose
  const OrchestrateOptions& options_;
  const backend::Backend& backend_;
  OrchestrationReport& report_;
  runtime::GroupMaker make_group_;
  CandidateSet set_;
  std::vector<runtime::KernelGroup> groups_;
  std::map<std::vector<size_t>, size_t> by_nodes_;  // a candidate's nodes -> its index (the first, for linear ones)
  std::vector<size_t> producer_ = producer_nodes(graph_);
  std::map<size_t, std::vector<size_t>> chains_;  // a linear group's first node -> the candidates that start there
  std::vector<PartProblem> problems_;
  std::vector<KernelCost> costs_;
  std::vector<bool> either_layout_;  // per candidate: a non-linear kernel that works in either layout
  std::vector<bool> native_linear_;  // per candidate: a linear kernel that works in native layouts
  std::vector<KernelLayout> relabeling_;  // per candidate: RowMajor, or how it relabels (CandidateRules::relabels)
  std::vector<std::optional<double>> native_costs_;  // oneDNN candidates: measured with native inputs
  std::map<ValueId, double> measured_conversion_;    // value -> the most a oneDNN reader or writer spent converting it
  std::unique_ptr<cost::CostModel> cost_model_;
};

}  // namespace

const char* cost_source_name(CostSource source) {
  switch (source) {
    case CostSource::Measured: return "measured";
    case CostSource::Cached: return "cached";
    case CostSource::Estimated: return "estimated";
  }
  return "?";
}

runtime::Program orchestrate(Graph graph, const OrchestrateOptions& options, OrchestrationReport* report) {
  return orchestrate(std::move(graph), {}, options, report);
}

runtime::Program orchestrate(Graph graph, std::vector<Alternative> alternatives, const OrchestrateOptions& options,
                             OrchestrationReport* report) {
  OrchestrationReport local;
  Orchestrator orchestrator(std::move(graph), std::move(alternatives), options, report ? *report : local);
  return orchestrator.run();
}

}  // namespace orchid::orchestration
