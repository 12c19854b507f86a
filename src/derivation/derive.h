// The derivation stage of the pipeline (DESIGN.md: derive(graph, target)):
// for every linear primitive (Conv, ConvTranspose, MatMul) of a primitive
// graph, derivation search proposes alternative forms (search.h), each is
// instantiated into primitives (instantiate.h) and costed the way any
// kernel is (measured and cached: the cost function runs orchestration on
// the small graph), and the cheapest replaces the original when it is
// faster by a margin. Identical primitives (same operator, attributes,
// shapes) are derived and costed once.
#pragma once

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "derivation/search.h"
#include "ir/alternatives.h"
#include "ir/graph.h"

namespace orchid::derivation {

// Seconds to run a small primitive graph as the rest of the pipeline would
// plan it.
using GraphCost = std::function<double(const Graph& graph)>;

// Tighter limits than search's defaults: a model has many primitives.
SearchOptions default_derive_search_options();

struct DeriveOptions {
  SearchOptions search = default_derive_search_options();
  size_t max_alternatives = 3;  // derived forms measured per primitive: the best by `estimate`
  double min_speedup = 1.05;    // a derived form replaces the original only if this much faster
  // derive_alternatives offers a derived form measured at most this many
  // times the original's cost (alone), for orchestration to choose in context.
  double offer_ratio = 1.1;
  // Forms ranked below one measured more than this many times the original
  // are not measured.
  double give_up_ratio = 1.5;
  double max_estimate_ratio = 3;  // forms estimated slower than this times the original are not measured
  size_t max_growth = 16;         // forms with a tensor this many times the original's largest are dropped
  GraphCost cost;               // required
  // Cheap estimate that ranks the forms search found before the best few
  // are costed; empty: roofline_estimate.
  GraphCost estimate;
  std::function<void(size_t done, size_t total)> progress;  // optional
  // Seconds of search and costing for the whole graph: primitive kinds are
  // derived in the order of their measured time above `estimate` (count
  // times the gap; the originals measured while a quarter of the budget
  // lasts, the rest after them by `estimate`) while time is left; the rest keep
  // their originals, and that is stored as their decision, so a compile with
  // the same budget makes the same plan (a larger budget derives them).
  // Decisions read from the store below take no time.
  double budget_seconds = std::numeric_limits<double>::infinity();
  // Where decisions are kept between compiles (the pipeline: the cost
  // database), keyed by the region's signature and the options that shape
  // the search and the costing; empty: none. A decision read back needs no
  // search and no measurement, so a warm compile does neither.
  std::function<std::optional<std::string>(const std::string& key)> load_decision;
  std::function<void(const std::string& key, const std::string& value)> store_decision;
};

// A derived form that was measured.
struct MeasuredForm {
  std::string derivation;                  // its steps
  std::vector<std::string> instantiation;  // its operators
  double seconds = 0;
};

// What derivation did for one primitive (and every identical one).
struct DerivationRecord {
  std::vector<std::string> nodes;  // primitives with this signature
  std::string op;                  // "Conv"
  std::string signature;           // "Conv 1x512x7x7 * 512x512x3x3 pads 1,1,1,1"
  size_t alternatives = 0;         // derived forms found
  double original_seconds = 0;
  double derived_seconds = 0;      // the best derived form's cost (0 when none)
  std::string derivation;          // the best form's steps
  size_t steps = 0;                // how many
  size_t states_when_found = 0;    // states the search had expanded when it reached the best form
  double seconds_when_found = 0;
  std::vector<std::string> instantiation;  // its operators
  std::vector<MeasuredForm> measured;  // every form measured, in rank order
  bool applied = false;            // replaced (derive) or chosen by the plan (with orchestration's choice)
  bool offered = false;            // went to orchestration beside the original (derive_alternatives)
  std::string note;                // why not derived, when it was not
  SearchStats stats;
};

struct DeriveReport {
  std::vector<DerivationRecord> records;
  double search_seconds = 0;
  double cost_seconds = 0;
  size_t reused = 0;       // kinds whose decision came from the store (no search, no measurement)
  size_t over_budget = 0;  // kinds left underived because the budget was spent
  size_t applied_nodes() const;
};

// A quick estimate of a small graph: one kernel per primitive, each
// max(flops / 100 GFLOP/s, bytes / 20 GB/s) + 2 us (peaks of the order of a
// laptop core's; only the ranking matters).
double roofline_estimate(const Graph& graph);

// One record as JSON and back (the decision store); orchid::Error when malformed.
std::string derivation_record_json(const DerivationRecord& record);
DerivationRecord derivation_record_from_json(const std::string& json);

// The report as JSON (plan.json's "derivation") and as text for the CLI.
std::string derive_report_json(const DeriveReport& report);
DeriveReport derive_report_from_json(const std::string& json);  // orchid::Error when malformed
std::string format_derive_report(const DeriveReport& report);

// The graph with derived forms substituted where they are faster.
Graph derive(const Graph& primitives, const DeriveOptions& options, DeriveReport* report = nullptr);

// The graph with derived forms beside their regions, as alternatives for
// orchestration to choose jointly with fusion (ir/alternatives.h): every
// form derive() would substitute, and those measured within offer_ratio of
// the original. Node order and value ids of `primitives` are kept (derived
// nodes are inserted before their region's primitive).
struct DerivedGraph {
  Graph graph;
  std::vector<Alternative> alternatives;
};
DerivedGraph derive_alternatives(const Graph& primitives, const DeriveOptions& options,
                                 DeriveReport* report = nullptr);

// After orchestration chose: the records of offered forms say whether the
// plan uses them (`chosen_nodes`: the primitives whose derived form it uses).
void note_plan_choices(DeriveReport& report, const std::vector<std::string>& chosen_nodes);

// The goal of derivation search for a primitive: instantiable with every
// compute scope in a library operator, and not the original expression.
bool derivation_goal(Expr state);

}  // namespace orchid::derivation
