// The derivation stage: alternative forms of linear primitives, costed and
// substituted where faster (derive.h).
#include "derivation/derive.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

#include "cost/analytical_model.h"
#include "derivation/instantiate.h"
#include "derivation/region.h"
#include "fission/builder.h"
#include "ir/expr_affine.h"
#include "ir/expr_utils.h"
#include "ir/graph_utils.h"
#include "orchestration/baseline_plan.h"
#include "reference/ops/banded.h"
#include "ir/expr_fingerprint.h"
#include "ir/expr_parser.h"
#include "ir/expr_printer.h"
#include "support/error.h"
#include "support/sha256.h"

namespace orchid::derivation {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool is_derivable_op(const Node& node) {
  if (node.domain == reference::kOrchidDomain) return node.op == "G2BMM" || node.op == "GBMM";
  return node.domain.empty() && (node.op == "Conv" || node.op == "ConvTranspose" || node.op == "MatMul");
}

// A graph computing the region's output from its leaves through `state`.
Graph derived_graph(const Graph& graph, const Region& region, Expr state) {
  Graph g;
  std::map<ValueId, ValueId> copied;
  std::map<std::string, ValueId, std::less<>> inputs;
  for (const auto& [name, id] : region.inputs) inputs[name] = copy_leaf(graph, id, g, copied);
  fission::FissionBuilder builder(g, graph.nodes()[region.nodes.back()]);
  g.outputs().push_back(instantiate(state, inputs, builder));
  return g;
}

// What distinguishes one derived program from another for the purpose of
// trying it: its library operators with the parameters that change their
// speed class (a convolution's dilation and kernel size, a band's
// dilation). A rewrite that keeps these (a relaxed range, a split
// reduction) is not worth costing.
std::vector<std::string> structure_key(Expr state) {
  std::vector<std::string> key;
  for (const expr::ScopeNode* scope : compute_scopes(state)) {
    std::optional<LinearMatch> m = match_linear(*scope);
    if (!m) {
      key.push_back("?");
      continue;
    }
    std::string k = linear_op_name(m->op);
    for (const ConvSpatial& d : m->spatial) k += fmt::format(" {}d{}s{}", d.tap.extent(), d.dilation, d.stride);
    if (m->op == LinearOp::G2BMM || m->op == LinearOp::GBMM) k += fmt::format(" d{}", m->dilation);
    if (!m->groups.empty()) k += " grouped";
    key.push_back(k);
  }
  std::sort(key.begin(), key.end());
  return key;
}

// The largest tensor of a graph, in bytes.
size_t largest_value_bytes(const Graph& graph) {
  size_t most = 0;
  for (size_t v = 0; v < graph.num_values(); ++v) {
    const TensorType& type = graph.type(ValueId(v));
    most = std::max(most, type.nbytes());
  }
  return most;
}

double estimate_of(const DeriveOptions& options, const Graph& graph) {
  return options.estimate ? options.estimate(graph) : roofline_estimate(graph);
}

// A derived form ready to cost: its small graph and estimate.
struct RankedForm {
  const Derivation* derivation;
  Graph graph;
  double estimate;
};

// The distinct forms (by structure_key), best first by the estimate; forms
// that fail to instantiate, or whose intermediates dwarf the original's
// (a reduction materialized over every input position), are dropped.
std::vector<RankedForm> ranked_forms(const Graph& graph, const Region& region, const Graph& original,
                                     const SearchResult& result, const DeriveOptions& options) {
  std::vector<RankedForm> ranked;
  std::vector<std::vector<std::string>> seen;
  const size_t size_limit = options.max_growth * std::max<size_t>(largest_value_bytes(original), 1 << 20);
  for (const Derivation& d : result.found) {
    std::vector<std::string> key = structure_key(d.state);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    try {
      Graph g = derived_graph(graph, region, d.state);
      if (largest_value_bytes(g) > size_limit) continue;
      double estimate = estimate_of(options, g);
      ranked.push_back({&d, std::move(g), estimate});
    } catch (const Error&) {
      continue;
    }
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.estimate < b.estimate; });
  if (ranked.size() > options.max_alternatives) ranked.resize(options.max_alternatives);
  return ranked;
}

struct Decision {
  DerivationRecord record;
  Expr state = nullptr;  // the chosen derived form; nullptr: keep the original
  // >= 0: not derived because a budget of this many seconds was spent (kept,
  // so a compile with the same budget makes the same plan without deriving;
  // a larger budget derives it).
  double skipped_at_budget = -1;
};

// Decides one kind within `seconds_left` of the budget: once that is spent,
// forms ranked below the ones measured are not measured.
Decision decide(const Graph& graph, const Region& region, const DeriveOptions& options, DeriveReport& report,
                double seconds_left) {
  const auto kind_start = std::chrono::steady_clock::now();
  Decision decision;
  DerivationRecord& r = decision.record;
  r.op = graph.nodes()[region.nodes.back()].op;
  r.signature = region.signature;
  auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> original_key = structure_key(region.expr);
  auto goal = [&](Expr state) { return derivation_goal(state) && structure_key(state) != original_key; };
  SearchResult result = search(region.expr, goal, options.search);
  report.search_seconds += seconds_since(start);
  r.stats = result.stats;
  r.alternatives = result.found.size();
  const Graph original = region_graph(graph, region);
  std::vector<RankedForm> forms = ranked_forms(graph, region, original, result, options);
  if (forms.empty()) {
    r.note = "search found no instantiable form other than the original's";
    return decision;
  }
  start = std::chrono::steady_clock::now();
  r.original_seconds = options.cost(original);
  const double original_estimate = estimate_of(options, original);
  for (const RankedForm& ranked : forms) {
    const Derivation* form = ranked.derivation;
    // Measuring builds and times every kernel of the form: not for forms the
    // estimate already puts far behind.
    if (ranked.estimate > options.max_estimate_ratio * original_estimate) {
      if (r.note.empty()) r.note = "a derived form estimated far slower was not measured";
      continue;
    }
    if (!r.measured.empty() && seconds_since(kind_start) >= seconds_left) {
      if (r.note.empty()) r.note = "the derivation budget ran out: forms ranked below those measured were not measured";
      break;
    }
    double seconds = 0;
    try {
      seconds = options.cost(ranked.graph);
    } catch (const Error& error) {
      if (r.note.empty()) r.note = std::string("a derived form failed to build: ") + error.what();
      continue;
    }
    r.measured.push_back({form->to_string(), describe_instantiation(form->state), seconds});
    // The forms are ranked best first by the estimate: when one measures far
    // behind the original, those ranked below it are not measured (measuring
    // builds their kernels, most of a compile's derivation time).
    const bool far_behind = seconds > options.give_up_ratio * r.original_seconds;
    if (far_behind && &ranked != &forms.back() && r.note.empty()) {
      r.note = fmt::format("forms ranked below one measured {:.1f}x the original were not measured",
                           seconds / r.original_seconds);
    }
    if (r.derived_seconds == 0 || seconds < r.derived_seconds) {
      r.derived_seconds = seconds;
      r.derivation = r.measured.back().derivation;
      r.instantiation = r.measured.back().instantiation;
      r.steps = form->steps.size();
      r.states_when_found = form->states_when_found;
      r.seconds_when_found = form->seconds_when_found;
      decision.state = form->state;
    }
    if (far_behind) break;
  }
  report.cost_seconds += seconds_since(start);
  if (decision.state && r.derived_seconds * options.min_speedup <= r.original_seconds) {
    r.applied = true;
  } else if (decision.state && r.derived_seconds <= options.offer_ratio * r.original_seconds) {
    r.note = "the original is faster alone";
  } else {
    if (decision.state) r.note = "the original is faster";
    decision.state = nullptr;
  }
  return decision;
}

// The regions and the forms decide() kept, by signature (identical regions share a decision).
struct Decisions {
  std::map<size_t, std::pair<Region, Expr>> forms;  // region's primitive node -> its region and derived form
  std::map<size_t, std::string> derivation;         // the same node -> the form's steps
  std::map<size_t, double> original_seconds;        // the same node -> the original's cost alone
  std::set<size_t> applied;                         // the nodes whose form derive() substitutes
};

// The version of what decides: bump it when the search, the operator
// patterns or the instantiation change what a region derives to (v3: grouped
// and depthwise Convs match the Conv pattern), so that no decision of an
// earlier engine is reused.
constexpr int kDecisionVersion = 3;

// The key a decision is stored under: the version, the region and every
// option that shapes what search finds and what is measured.
std::string decision_key(const Region& region, const DeriveOptions& options) {
  const SearchOptions& s = options.search;
  return "derive " + sha256_of_text(fmt::format(
                         "v{}|{}|{} {} {} {} {} {} {} {}|{} {} {} {} {} {}", kDecisionVersion, region.signature, s.max_depth, s.max_states,
                         s.time_limit_seconds, s.max_found, s.fingerprint_dedup, s.guided, s.max_guided_steps,
                         s.rules.size(), options.max_alternatives, options.max_estimate_ratio, options.max_growth,
                         options.min_speedup, options.offer_ratio, options.give_up_ratio));
}

std::string stored_decision(const Decision& d) {
  nlohmann::json value = {{"record", nlohmann::json::parse(derivation_record_json(d.record))},
                          {"state", d.state ? expr::print_program(d.state) : ""},
                          {"fingerprint", d.state ? fmt::format("{:x}", expr::fingerprint(d.state)) : ""}};
  if (d.skipped_at_budget >= 0) value["skipped_at_budget"] = d.skipped_at_budget;
  return value.dump();
}

// A stored decision, when it reads back whole (its form parses to the same
// fingerprint); nullopt otherwise (it is decided again).
std::optional<Decision> read_decision(const std::string& text) {
  const nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!value.is_object() || !value.contains("record") || !value["record"].is_object()) return std::nullopt;
  try {
    Decision d;
    d.record = derivation_record_from_json(value["record"].dump());
    const std::string state = value.value("state", "");
    if (!state.empty()) {
      d.state = expr::parse(state);
      if (fmt::format("{:x}", expr::fingerprint(d.state)) != value.value("fingerprint", "")) return std::nullopt;
    }
    d.record.nodes.clear();
    d.skipped_at_budget = value.value("skipped_at_budget", -1.0);
    return d;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The derivable regions, grouped by signature, heaviest kind first (by the
// estimate of one region): a budget goes where the time is.
std::vector<std::vector<std::pair<size_t, Region>>> regions_by_kind(const Graph& primitives,
                                                                    const DeriveOptions& options) {
  RegionBuilder builder(primitives);
  std::map<std::string, size_t> kind_of;
  std::vector<std::vector<std::pair<size_t, Region>>> kinds;
  for (size_t n = 0; n < primitives.nodes().size(); ++n) {
    if (!is_derivable_op(primitives.nodes()[n])) continue;
    std::optional<Region> region = builder.region(n);
    if (!region) continue;
    auto [it, added] = kind_of.emplace(region->signature, kinds.size());
    if (added) kinds.emplace_back();
    kinds[it->second].emplace_back(n, std::move(*region));
  }
  std::vector<double> weight;
  for (const auto& kind : kinds) {
    weight.push_back(double(kind.size()) * estimate_of(options, region_graph(primitives, kind[0].second)));
  }
  std::vector<size_t> order(kinds.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return weight[a] > weight[b]; });
  std::vector<std::vector<std::pair<size_t, Region>>> sorted;
  for (size_t k : order) sorted.push_back(std::move(kinds[k]));
  return sorted;
}

// The stored decision for `region`, when this compile keeps it: any but a
// skip at a smaller budget than this one.
std::optional<Decision> standing_decision(const Region& region, const DeriveOptions& options) {
  if (!options.load_decision) return std::nullopt;
  std::optional<std::string> text = options.load_decision(decision_key(region, options));
  if (!text) return std::nullopt;
  std::optional<Decision> stored = read_decision(*text);
  if (stored && stored->skipped_at_budget >= 0 && options.budget_seconds > stored->skipped_at_budget) return std::nullopt;
  return stored;
}

// With a finite budget, the kinds still to decide are put in the order of
// what derivation can gain on them: each one's original is measured (the
// measurement decide() makes, kept by the cost database), heaviest estimate
// first while a quarter of the budget lasts, and those measured go first, by
// their count times their time above the estimate (the roofline at nominal
// peaks). The estimate alone cannot see where the library is slow: Candy's
// 32 -> 3 channel 9x9 conv, 42 ms in oneDNN against a 9 ms bound, was fifth
// of seven by it and left underived when the host was busy. The time spent
// here counts against the budget.
void order_by_measured_gap(const Graph& primitives, const DeriveOptions& options,
                           std::vector<std::vector<std::pair<size_t, Region>>>& kinds, double& spent,
                           DeriveReport& rep) {
  if (!std::isfinite(options.budget_seconds)) return;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::pair<double, size_t>> measured;  // (gap, kind)
  std::vector<size_t> rest;
  for (size_t k = 0; k < kinds.size(); ++k) {
    const Region& region = kinds[k][0].second;
    if (standing_decision(region, options) || spent + seconds_since(start) >= options.budget_seconds / 4) {
      rest.push_back(k);
      continue;
    }
    const Graph original = region_graph(primitives, region);
    try {
      const double gap = options.cost(original) - estimate_of(options, original);
      measured.push_back({double(kinds[k].size()) * gap, k});
    } catch (const Error&) {
      rest.push_back(k);  // decide() meets the same failure and reports it
    }
  }
  std::stable_sort(measured.begin(), measured.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::vector<std::pair<size_t, Region>>> sorted;
  for (const auto& [gap, k] : measured) sorted.push_back(std::move(kinds[k]));
  for (size_t k : rest) sorted.push_back(std::move(kinds[k]));
  kinds = std::move(sorted);
  const double seconds = seconds_since(start);
  spent += seconds;
  rep.cost_seconds += seconds;
}

// A kind's decision: stored, decided within the budget, or none when the
// budget is spent. That last is stored too, so that compiles with the same
// budget make the same plan (and a warm one derives nothing); a compile with
// a larger budget decides it.
Decision decide_kind(const Graph& primitives, const Region& region, const DeriveOptions& options, DeriveReport& rep,
                     double& spent) {
  const std::string key = decision_key(region, options);
  if (std::optional<Decision> stored = standing_decision(region, options)) {
    if (stored->skipped_at_budget >= 0) {
      ++rep.over_budget;
    } else {
      ++rep.reused;
    }
    return std::move(*stored);
  }
  if (spent >= options.budget_seconds) {
    Decision d;
    d.record.op = primitives.nodes()[region.nodes.back()].op;
    d.record.signature = region.signature;
    d.record.note = fmt::format("not derived: the derivation budget ({:g} s) was spent on operators ranked first",
                                options.budget_seconds);
    d.skipped_at_budget = options.budget_seconds;
    ++rep.over_budget;
    if (options.store_decision) options.store_decision(key, stored_decision(d));
    return d;
  }
  const auto start = std::chrono::steady_clock::now();
  Decision d = decide(primitives, region, options, rep, options.budget_seconds - spent);
  spent += seconds_since(start);
  if (options.store_decision) options.store_decision(key, stored_decision(d));
  return d;
}

Decisions decide_all(const Graph& primitives, const DeriveOptions& options, DeriveReport& rep) {
  std::vector<std::vector<std::pair<size_t, Region>>> kinds = regions_by_kind(primitives, options);
  Decisions decisions;
  double spent = 0;
  order_by_measured_gap(primitives, options, kinds, spent, rep);
  for (size_t k = 0; k < kinds.size(); ++k) {
    if (options.progress) options.progress(k, kinds.size());
    auto& members = kinds[k];
    Decision d = decide_kind(primitives, members[0].second, options, rep, spent);
    for (auto& [n, region] : members) {
      d.record.nodes.push_back(primitives.nodes()[n].name);
      if (!d.state) continue;
      decisions.derivation[n] = d.record.derivation;
      decisions.original_seconds[n] = d.record.original_seconds;
      if (d.record.applied) decisions.applied.insert(n);
      decisions.forms.emplace(n, std::make_pair(std::move(region), d.state));
    }
    rep.records.push_back(d.record);
  }
  if (options.progress) options.progress(kinds.size(), kinds.size());
  return decisions;
}

// Drops nodes none of whose outputs is read (absorbed producers whose only
// reader was replaced).
void remove_dead_nodes(Graph& graph) {
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<bool> used(graph.num_values(), false);
    for (ValueId id : graph.outputs()) used[size_t(id)] = true;
    for (const Node& node : graph.nodes()) {
      for (ValueId id : node.inputs) {
        if (id != kNoValue) used[size_t(id)] = true;
      }
    }
    auto dead = [&](const Node& node) {
      for (ValueId id : node.outputs) {
        if (id != kNoValue && used[size_t(id)]) return false;
      }
      return true;
    };
    size_t before = graph.nodes().size();
    std::erase_if(graph.nodes(), dead);
    changed = graph.nodes().size() != before;
  }
}

// Appends the derived form of `region` (whose primitive is `node`) to
// `graph`: an alternative with its derived nodes and value, or nullopt
// (and nothing appended) when the form is not a node chain ending in the
// derived value of the original's type.
std::optional<Alternative> insert_form(Graph& graph, const Node& node, const Region& region, Expr state) {
  const size_t before = graph.nodes().size();
  const auto roll_back = [&] { graph.nodes().erase(graph.nodes().begin() + std::ptrdiff_t(before), graph.nodes().end()); };
  ValueId result = kNoValue;
  try {
    fission::FissionBuilder builder(graph, node);
    result = instantiate(state, region.inputs, builder);
  } catch (const Error&) {
    roll_back();
    return std::nullopt;
  }
  const size_t after = graph.nodes().size();
  const bool ends_in_result = after > before && !graph.nodes()[after - 1].outputs.empty() &&
                              graph.nodes()[after - 1].outputs[0] == result;
  if (!ends_in_result || graph.type(result) != graph.type(node.outputs[0])) {
    roll_back();
    return std::nullopt;
  }
  Alternative alternative;
  alternative.derived = result;
  for (size_t i = before; i < after; ++i) alternative.derived_nodes.push_back(i);
  return alternative;
}

// Rebuilds `graph` with every region that has a derived form replaced.
Graph substitute(const Graph& graph, const std::map<size_t, std::pair<Region, Expr>>& replaced) {
  Graph out = graph;
  out.nodes().clear();
  std::vector<ValueId> remap(graph.num_values());
  for (size_t i = 0; i < remap.size(); ++i) remap[i] = ValueId(i);
  auto mapped = [&](ValueId id) { return id == kNoValue ? kNoValue : remap[size_t(id)]; };
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& original = graph.nodes()[n];
    Node node = original;
    for (ValueId& id : node.inputs) id = mapped(id);
    auto it = replaced.find(n);
    if (it == replaced.end()) {
      out.add_node(std::move(node));
      continue;
    }
    const auto& [region, state] = it->second;
    std::map<std::string, ValueId, std::less<>> inputs;
    for (const auto& [name, id] : region.inputs) inputs[name] = mapped(id);
    fission::FissionBuilder builder(out, node);
    ValueId result = instantiate(state, inputs, builder);
    ORCHID_CHECK(out.type(result) == graph.type(original.outputs[0]))
        << original.describe() << ": derived form has type " << out.type(result).to_string();
    remap[size_t(original.outputs[0])] = result;
  }
  for (ValueId& id : out.outputs()) id = mapped(id);
  keep_output_names(graph, out);
  remove_dead_nodes(out);
  return remove_unused_values(out);
}

}  // namespace

double roofline_estimate(const Graph& graph) {
  double seconds = 0;
  for (const runtime::KernelGroup& kernel : orchestration::plan_baseline(graph)) {
    cost::KernelWork work = cost::kernel_work(graph, kernel);
    seconds += std::max(work.flops / 100e9, work.bytes / 20e9) + 2e-6;
  }
  return seconds;
}

bool derivation_goal(Expr state) { return !compute_scopes(state).empty() && instantiable(state); }

Graph derive(const Graph& primitives, const DeriveOptions& options, DeriveReport* report) {
  ORCHID_CHECK(bool(options.cost)) << "derive needs a cost function";
  DeriveReport local;
  DeriveReport& rep = report ? *report : local;
  Decisions decisions = decide_all(primitives, options, rep);
  std::erase_if(decisions.forms, [&](const auto& form) { return !decisions.applied.count(form.first); });
  if (decisions.forms.empty()) return primitives;
  return substitute(primitives, decisions.forms);
}

DerivedGraph derive_alternatives(const Graph& primitives, const DeriveOptions& options, DeriveReport* report) {
  ORCHID_CHECK(bool(options.cost)) << "derive needs a cost function";
  DeriveReport local;
  DeriveReport& rep = report ? *report : local;
  const Decisions decisions = decide_all(primitives, options, rep);
  DerivedGraph out{primitives, {}};
  if (decisions.forms.empty()) return out;
  out.graph.nodes().clear();
  std::vector<size_t> new_index(primitives.nodes().size());
  std::set<std::string> offered;
  for (size_t n = 0; n < primitives.nodes().size(); ++n) {
    const Node& original = primitives.nodes()[n];
    if (auto it = decisions.forms.find(n); it != decisions.forms.end()) {
      if (std::optional<Alternative> a = insert_form(out.graph, original, it->second.first, it->second.second)) {
        for (size_t node : it->second.first.nodes) {
          a->original_nodes.push_back(node == n ? out.graph.nodes().size() : new_index[node]);
        }
        a->original = original.outputs[0];
        a->derivation = decisions.derivation.at(n);
        a->choice_margin_seconds = (options.min_speedup - 1) * decisions.original_seconds.at(n);
        out.alternatives.push_back(std::move(*a));
        offered.insert(original.name);
      }
    }
    new_index[n] = out.graph.nodes().size();
    out.graph.add_node(original);
  }
  check_alternatives(out.graph, out.alternatives);
  for (DerivationRecord& record : rep.records) {
    record.offered = std::any_of(record.nodes.begin(), record.nodes.end(), [&](const auto& n) { return offered.count(n); });
    record.applied = false;  // until the plan chooses (note_plan_choices)
  }
  return out;
}

void note_plan_choices(DeriveReport& report, const std::vector<std::string>& chosen_nodes) {
  const std::set<std::string> chosen(chosen_nodes.begin(), chosen_nodes.end());
  for (DerivationRecord& record : report.records) {
    if (!record.offered) continue;
    const size_t uses = size_t(std::count_if(record.nodes.begin(), record.nodes.end(),
                                             [&](const std::string& n) { return chosen.count(n); }));
    record.applied = uses > 0;
    if (uses == record.nodes.size()) {
      record.note = "the plan uses the derived form";
    } else if (uses > 0) {
      record.note = fmt::format("the plan uses the derived form at {} of {} nodes", uses, record.nodes.size());
    } else {
      record.note = "offered beside the original; the plan keeps the original (with the kernels around it)";
    }
  }
}

}  // namespace orchid::derivation
