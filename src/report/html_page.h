// The report page: one self-contained HTML file (styles and script inline;
// nothing fetched). It shows
//  - a header: the model, threads, latency against the kernels' roofline
//    bounds and against the no-fusion baseline;
//  - the plan graph (plan_dot.h laid out as SVG) with a legend of kernel kinds;
//  - a sortable kernel table (click a column header);
//  - the BLP record (parts, candidates, measured and cached costs, rounds,
//    optimality, solve time) and each derived region with its steps and its
//    time before and after.
// Its script sets body's data-rendered="ok" once the table is sorted and the
// graph has a node, and records script errors in data-errors, for a
// headless-browser check (tests/report/browser_check.py).
#pragma once

#include <string>

#include "report/report_data.h"

namespace orchid::report {

// `text` with &, <, >, " and ' as character references.
std::string html_escape(const std::string& text);

// `svg` is inlined as it is (Graphviz escapes the names it draws).
std::string html_page(const ReportData& data, const std::string& svg);

}  // namespace orchid::report
