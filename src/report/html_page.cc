#include "report/html_page.h"

#include <map>

#include <fmt/format.h>

#include "report/page_assets.h"
#include "report/plan_dot.h"

namespace orchid::report {

namespace {

constexpr KernelKind kKinds[] = {KernelKind::Generated, KernelKind::OnednnLinear, KernelKind::DirectLinear,
                                 KernelKind::Layout,    KernelKind::Library,      KernelKind::Reference};

std::string ms(double value) { return fmt::format("{:.3f} ms", value); }
// Milliseconds for the kernel table: microsecond kernels keep digits that count.
std::string table_ms(double value) { return fmt::format("{:.{}f}", value, value >= 1 ? 3 : value >= 0.1 ? 4 : 5); }
std::string plural(size_t n, const char* noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }
std::string percent(double part, double whole) { return whole > 0 ? fmt::format("{:.0f}%", 100 * part / whole) : "-"; }

// A headline number with what it is.
std::string figure(const std::string& value, const std::string& what) {
  return fmt::format("<div class=\"figure\"><div class=\"value\">{}</div><div class=\"what\">{}</div></div>\n",
                     html_escape(value), html_escape(what));
}

std::string baseline_figure(const ReportData& data) {
  if (!data.baseline_ms) return figure("-", "no-fusion baseline not measured");
  const double speedup = data.latency_ms > 0 ? *data.baseline_ms / data.latency_ms : 0;
  return figure(ms(*data.baseline_ms), fmt::format("no-fusion baseline ({} kernels): this plan is {:.2f}x as fast",
                                                   data.baseline_kernels, speedup));
}

std::string header_section(const ReportData& data) {
  std::string out = "<header>\n<h1>Orchid plan report</h1>\n<div class=\"model\">" +
                    html_escape(data.model.empty() ? "(model not recorded)" : data.model) + "</div>\n" +
                    "<div class=\"summary\">\n";
  out += figure(ms(data.latency_ms), fmt::format("latency, median of {} runs", data.runs));
  out += figure(ms(data.bound_ms), fmt::format("roofline bound of the kernels ({} of their {} reached)",
                                               percent(data.bound_ms, data.kernels_ms), ms(data.kernels_ms)));
  out += baseline_figure(data);
  if (data.blp) out += figure(ms(data.blp->planned_ms), "planned by the BLP");
  out += figure(fmt::format("{} / {}", data.kernels.size(), data.primitives), "kernels / primitives");
  out += figure(std::to_string(data.threads), "threads");
  out += "</div>\n";
  out += fmt::format("<p class=\"note\">Bounds: each kernel's bytes at {:.1f} GB/s or its flops at {:.0f} GFLOP/s, "
                     "whichever takes longer (this machine's measured peaks).</p>\n</header>\n",
                     data.peaks.bytes_per_second / 1e9, data.peaks.flops_per_second / 1e9);
  return out;
}

// The kinds' colours, with how many kernels of each and their share of the time.
std::string legend(const ReportData& data) {
  std::map<KernelKind, std::pair<size_t, double>> totals;
  for (const KernelRow& row : data.kernels) {
    totals[row.kind].first++;
    totals[row.kind].second += row.ms;
  }
  std::string out = "<div class=\"legend\">\n";
  for (KernelKind kind : kKinds) {
    const auto [count, time] = totals[kind];
    out += fmt::format("<span><span class=\"swatch\" style=\"background:{}\"></span>{}: {}, {}</span>\n",
                       kernel_colour(kind), html_escape(kernel_kind_name(kind)), plural(count, "kernel"),
                       percent(time, data.kernels_ms));
  }
  return out + "</div>\n";
}

std::string graph_section(const ReportData& data, const std::string& svg) {
  return "<section>\n<h2>Plan</h2>\n<p class=\"note\">Each box is a kernel, filled by its kind, with the primitives "
         "it computes; its label gives its time and the share of its roofline bound it reaches.</p>\n" +
         legend(data) + "<button id=\"fit\" type=\"button\">Fit to width</button>\n<div id=\"plan\">\n" + svg +
         "\n</div>\n</section>\n";
}

// A table cell; numeric cells sort by `key` (data-sort).
std::string text_cell(const std::string& text, const char* cls = nullptr) {
  return cls ? fmt::format("<td class=\"{}\">{}</td>", cls, html_escape(text)) : "<td>" + html_escape(text) + "</td>";
}
std::string number_cell(const std::string& text, double key) {
  return fmt::format("<td class=\"num\" data-sort=\"{}\">{}</td>", key, html_escape(text));
}

std::string kernel_row_html(const KernelRow& row, size_t k, double total_ms) {
  std::string out = "<tr>" + number_cell(std::to_string(k), double(k)) + text_cell(row.name, "name") +
                    text_cell(row.ops, "name") + text_cell(row.implementation);
  out += fmt::format("<td><span class=\"swatch\" style=\"background:{}\"></span>{}</td>", kernel_colour(row.kind),
                     html_escape(kernel_kind_name(row.kind)));
  out += number_cell(std::to_string(row.nodes.size()), double(row.nodes.size()));
  out += number_cell(table_ms(row.ms), row.ms);
  out += number_cell(percent(row.ms, total_ms), total_ms > 0 ? row.ms / total_ms : 0);
  out += number_cell(table_ms(row.bound_ms), row.bound_ms);
  out += number_cell(fmt::format("{:.0f}%", 100 * row.bound_share()), row.bound_share());
  out += text_cell(row.memory_bound ? "memory" : "compute");
  out += row.planned_ms ? number_cell(table_ms(*row.planned_ms), *row.planned_ms) : number_cell("-", -1);
  return out + text_cell(row.cost_source) + "</tr>\n";
}

std::string kernel_table(const ReportData& data) {
  struct Column {
    const char* title;
    bool numeric;
  };
  static constexpr Column kColumns[] = {
      {"#", true},        {"kernel", false},      {"operators", false},  {"implementation", false},
      {"kind", false},    {"primitives", true},   {"ms", true},          {"% of kernels", true},
      {"bound ms", true}, {"% of bound", true},   {"limit", false},      {"planned ms", true},
      {"cost source", false}};
  constexpr int kSortBy = 6;  // ms
  std::string out = fmt::format("<section>\n<h2>Kernels</h2>\n<p class=\"note\">Mean time per run over {} runs "
                                "(after 3 warm-up runs); click a column to sort.</p>\n"
                                "<table id=\"kernels\" class=\"sortable\">\n<thead data-initial-sort=\"{}\"><tr>",
                                data.runs, kSortBy);
  for (const Column& c : kColumns) {
    out += fmt::format("<th data-type=\"{}\"{}>{}</th>", c.numeric ? "num" : "text", c.numeric ? " class=\"num\"" : "",
                       html_escape(c.title));
  }
  out += "</tr></thead>\n<tbody>\n";
  for (size_t k = 0; k < data.kernels.size(); ++k) out += kernel_row_html(data.kernels[k], k, data.kernels_ms);
  return out + "</tbody>\n</table>\n</section>\n";
}

std::string definition(const std::string& term, const std::string& value) {
  return "<dt>" + html_escape(term) + "</dt><dd>" + html_escape(value) + "</dd>\n";
}

std::string parts_table(const std::vector<PlanPart>& parts) {
  std::string out = "<table class=\"sortable\" id=\"parts\">\n<thead><tr><th data-type=\"num\" class=\"num\">part</th>"
                    "<th data-type=\"text\">clusters</th><th data-type=\"num\" class=\"num\">primitives</th>"
                    "<th data-type=\"num\" class=\"num\">candidates</th><th data-type=\"text\">cut</th></tr></thead>\n"
                    "<tbody>\n";
  for (size_t i = 0; i < parts.size(); ++i) {
    const PlanPart& p = parts[i];
    out += "<tr>" + number_cell(std::to_string(i), double(i)) +
           text_cell(fmt::format("[{}, {})", p.first_cluster, p.end_cluster)) +
           number_cell(std::to_string(p.primitives), double(p.primitives)) +
           number_cell(std::to_string(p.candidates), double(p.candidates)) + text_cell(p.cut) + "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string compile_times(const BlpRecord& r) {
  return fmt::format("enumerate {:.2f} s, profile {:.2f} s, solve {:.2f} s, code generation {:.2f} s{}",
                     r.enumerate_seconds, r.profile_seconds, r.solve_seconds, r.codegen_seconds,
                     r.library_cached ? " (library from the cache)" : "");
}

std::string blp_section(const std::optional<BlpRecord>& blp) {
  std::string out = "<section>\n<h2>How the plan was chosen (BLP)</h2>\n";
  if (!blp) return out + "<p class=\"note\">No orchestration record: the program was not planned by the BLP "
                         "(a --no-fusion build) or was saved without the record.</p>\n</section>\n";
  const BlpRecord& r = *blp;
  out += "<dl class=\"record\">\n" +
         definition("candidates", fmt::format("{} ({} fused) from {} clusters", r.candidates, r.fused_candidates,
                                              r.clusters)) +
         definition("parts", std::to_string(r.parts.size())) +
         definition("costs", fmt::format("{} measured in this compile, {} from the cache{}", r.measured, r.cached,
                                         r.unbuildable ? fmt::format(", {} could not be built", r.unbuildable) : "")) +
         definition("BLP rounds", std::to_string(r.rounds)) +
         definition("proven optimal", r.proven_optimal ? "yes" : "no (solver time limit reached)") +
         definition("planned time", ms(r.planned_ms)) +
         definition("compile time", compile_times(r)) + "</dl>\n";
  if (!r.parts.empty()) out += "<h3>Parts</h3>\n" + parts_table(r.parts);
  return out + "</section>\n";
}

// "a -> b (detail) -> c" as a numbered list of steps.
std::string steps_list(const std::string& derivation) {
  std::string out = "<ol class=\"steps\">\n";
  size_t start = 0;
  while (start <= derivation.size()) {
    const size_t arrow = derivation.find(" -> ", start);
    const std::string step = derivation.substr(start, arrow == std::string::npos ? std::string::npos : arrow - start);
    out += "<li>" + html_escape(step) + "</li>\n";
    if (arrow == std::string::npos) break;
    start = arrow + 4;
  }
  return out + "</ol>\n";
}

std::string list_of(const std::vector<std::string>& items, const char* cls) {
  std::string out = fmt::format("<ul class=\"{}\">\n", cls);
  for (const std::string& item : items) out += "<li>" + html_escape(item) + "</li>\n";
  return out + "</ul>\n";
}

std::string region_html(const derivation::DerivationRecord& r) {
  // Whether the best derived form replaced the original (when one was measured).
  const std::string badge =
      r.derived_seconds > 0 ? fmt::format("<span class=\"badge {0}\">{0}</span>", r.applied ? "applied" : "kept") : "";
  std::string out = "<div class=\"region\">\n<h3>" + html_escape(r.signature) + badge + "</h3>\n";
  std::string nodes;
  for (size_t i = 0; i < r.nodes.size() && i < 8; ++i) nodes += (i ? ", " : "") + r.nodes[i];
  if (r.nodes.size() > 8) nodes += fmt::format(", ... ({} in all)", r.nodes.size());
  out += "<dl class=\"record\">\n" + definition("primitives", nodes) +
         definition("forms found", std::to_string(r.alternatives));
  if (r.derived_seconds > 0) {
    out += definition("before / after", fmt::format("{} -> {} ({:.2f}x)", ms(r.original_seconds * 1e3),
                                                    ms(r.derived_seconds * 1e3),
                                                    r.original_seconds / r.derived_seconds));
  }
  out += definition("search", r.stats.to_string()) + "</dl>\n";
  if (!r.derivation.empty()) out += "<div>Steps of the best form:</div>\n" + steps_list(r.derivation);
  if (!r.instantiation.empty()) out += "<div>Its operators:</div>\n" + list_of(r.instantiation, "steps");
  if (r.measured.size() > 1) {
    std::vector<std::string> forms;
    for (const derivation::MeasuredForm& f : r.measured) forms.push_back(ms(f.seconds * 1e3) + ": " + f.derivation);
    out += "<div>Forms measured:</div>\n" + list_of(forms, "steps");
  }
  if (!r.note.empty()) out += "<p class=\"note\">" + html_escape(r.note) + "</p>\n";
  return out + "</div>\n";
}

std::string derivation_section(const std::optional<derivation::DeriveReport>& report) {
  std::string out = "<section>\n<h2>Derived regions</h2>\n";
  if (!report) return out + "<p class=\"note\">No derivation record (compiled without --derive).</p>\n</section>\n";
  out += fmt::format("<p>{} primitives replaced by derived forms; search {:.1f} s, costing {:.1f} s.</p>\n",
                     report->applied_nodes(), report->search_seconds, report->cost_seconds);
  for (const derivation::DerivationRecord& r : report->records) out += region_html(r);
  return out + "</section>\n";
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string html_page(const ReportData& data, const std::string& svg) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Orchid report: " +
         html_escape(data.model) + "</title>\n<style>" + kPageStyle + "</style>\n</head>\n<body>\n" +
         header_section(data) + graph_section(data, svg) + kernel_table(data) + blp_section(data.blp) +
         derivation_section(data.derivation) + "<script>" + kPageScript + "</script>\n</body>\n</html>\n";
}

}  // namespace orchid::report
