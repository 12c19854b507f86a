// The derivation stage's default search limits and its report as JSON and
// as text (derive.h).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "derivation/derive.h"
#include "support/error.h"

namespace orchid::derivation {

SearchOptions default_derive_search_options() {
  SearchOptions options;
  options.max_depth = 4;
  options.time_limit_seconds = 1.5;  // OLLIE's forms are found within 0.8 s (docs/results.md)
  options.max_states = 20000;
  options.max_found = 256;
  return options;
}

size_t DeriveReport::applied_nodes() const {
  size_t n = 0;
  for (const DerivationRecord& r : records) {
    if (r.applied) n += r.nodes.size();
  }
  return n;
}


namespace {

nlohmann::json measured_json(const std::vector<MeasuredForm>& forms) {
  nlohmann::json out = nlohmann::json::array();
  for (const MeasuredForm& f : forms) {
    out.push_back({{"derivation", f.derivation}, {"instantiation", f.instantiation}, {"ms", f.seconds * 1e3}});
  }
  return out;
}

}  // namespace

namespace {

nlohmann::json record_to_json(const DerivationRecord& r) {
  return {{"nodes", r.nodes},
          {"op", r.op},
          {"signature", r.signature},
          {"alternatives", r.alternatives},
          {"original_ms", r.original_seconds * 1e3},
          {"derived_ms", r.derived_seconds * 1e3},
          {"derivation", r.derivation},
          {"steps", r.steps},
          {"states_when_found", r.states_when_found},
          {"seconds_when_found", r.seconds_when_found},
          {"instantiation", r.instantiation},
          {"measured", measured_json(r.measured)},
          {"applied", r.applied},
          {"offered", r.offered},
          {"note", r.note},
          {"search", {{"states", r.stats.states},
                      {"generated", r.stats.generated},
                      {"dedup_hits", r.stats.dedup_hits},
                      {"guided_steps", r.stats.guided_steps},
                      {"depth", r.stats.depth},
                      {"seconds", r.stats.seconds},
                      {"limit_reached", r.stats.limit_reached}}}};
}

DerivationRecord record_from(const nlohmann::json& j) {
  DerivationRecord r;
  r.nodes = j.value("nodes", std::vector<std::string>{});
  r.op = j.value("op", "");
  r.signature = j.value("signature", "");
  r.alternatives = j.value("alternatives", size_t(0));
  r.original_seconds = j.value("original_ms", 0.0) / 1e3;
  r.derived_seconds = j.value("derived_ms", 0.0) / 1e3;
  r.derivation = j.value("derivation", "");
  r.steps = j.value("steps", size_t(0));
  r.states_when_found = j.value("states_when_found", size_t(0));
  r.seconds_when_found = j.value("seconds_when_found", 0.0);
  r.instantiation = j.value("instantiation", std::vector<std::string>{});
  for (const auto& f : j.value("measured", nlohmann::json::array())) {
    r.measured.push_back({f.value("derivation", ""), f.value("instantiation", std::vector<std::string>{}),
                          f.value("ms", 0.0) / 1e3});
  }
  r.applied = j.value("applied", false);
  r.offered = j.value("offered", false);
  r.note = j.value("note", "");
  const auto& s = j.value("search", nlohmann::json::object());
  r.stats.states = s.value("states", size_t(0));
  r.stats.generated = s.value("generated", size_t(0));
  r.stats.dedup_hits = s.value("dedup_hits", size_t(0));
  r.stats.guided_steps = s.value("guided_steps", size_t(0));
  r.stats.depth = s.value("depth", 0);
  r.stats.seconds = s.value("seconds", 0.0);
  r.stats.limit_reached = s.value("limit_reached", false);
  return r;
}

}  // namespace

std::string derivation_record_json(const DerivationRecord& record) { return record_to_json(record).dump(); }

DerivationRecord derivation_record_from_json(const std::string& text) {
  nlohmann::json in = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!in.is_object()) ORCHID_FAIL() << "derivation record: not valid JSON";
  try {
    return record_from(in);
  } catch (const nlohmann::json::exception& error) {
    ORCHID_FAIL() << "derivation record: " << error.what();
  }
  return {};
}

std::string derive_report_json(const DeriveReport& report) {
  nlohmann::json records = nlohmann::json::array();
  for (const DerivationRecord& r : report.records) records.push_back(record_to_json(r));
  nlohmann::json out = {{"records", records},
                        {"applied_nodes", report.applied_nodes()},
                        {"search_seconds", report.search_seconds},
                        {"cost_seconds", report.cost_seconds},
                        {"reused", report.reused},
                        {"over_budget", report.over_budget}};
  return out.dump();
}

DeriveReport derive_report_from_json(const std::string& text) {
  nlohmann::json in = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (in.is_discarded() || !in.contains("records")) ORCHID_FAIL() << "derivation record: not valid JSON";
  DeriveReport report;
  report.search_seconds = in.value("search_seconds", 0.0);
  report.cost_seconds = in.value("cost_seconds", 0.0);
  report.reused = in.value("reused", size_t(0));
  report.over_budget = in.value("over_budget", size_t(0));
  try {
    for (const auto& j : in["records"]) report.records.push_back(record_from(j));
  } catch (const nlohmann::json::exception& error) {
    ORCHID_FAIL() << "derivation record: " << error.what();
  }
  return report;
}

std::string format_derive_report(const DeriveReport& report) {
  std::string out = fmt::format("derivation: {} of {} linear primitive kinds derived ({} nodes); search {:.1f} s, "
                                "costing {:.1f} s\n",
                                [&] {
                                  size_t n = 0;
                                  for (const auto& r : report.records) n += r.applied;
                                  return n;
                                }(),
                                report.records.size(), report.applied_nodes(), report.search_seconds,
                                report.cost_seconds);
  if (report.reused || report.over_budget) {
    out += fmt::format("  {} kinds decided in an earlier compile (from the cache), {} left underived (budget spent)\n",
                       report.reused, report.over_budget);
  }
  for (const DerivationRecord& r : report.records) {
    out += fmt::format("  {} ({} node{}: {}{})\n", r.signature, r.nodes.size(), r.nodes.size() == 1 ? "" : "s",
                       r.nodes.empty() ? "" : r.nodes[0], r.nodes.size() > 1 ? ", ..." : "");
    if (r.derived_seconds > 0) {
      const char* outcome = r.applied ? (r.offered ? "CHOSEN" : "REPLACED") : r.offered ? "offered" : "kept";
      out += fmt::format("    {} {:.3f} ms -> derived {:.3f} ms ({:.2f}x): {}\n", outcome,
                         r.original_seconds * 1e3, r.derived_seconds * 1e3,
                         r.original_seconds / r.derived_seconds, r.derivation);
      for (const std::string& op : r.instantiation) out += "      " + op + "\n";
    }
    if (r.measured.size() > 1) {
      out += "    forms measured:\n";
      for (const MeasuredForm& f : r.measured) out += fmt::format("      {:.3f} ms: {}\n", f.seconds * 1e3, f.derivation);
    }
    if (!r.note.empty()) out += "    " + r.note + "\n";
    out += "    search: " + r.stats.to_string() + "\n";
  }
  return out;
}

}  // namespace orchid::derivation
