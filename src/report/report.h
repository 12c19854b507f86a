// The plan report behind `orchid report MODEL|DIR -o report.html`: one
// self-contained HTML page (html_page.h) describing a compiled program's
// plan: the plan graph coloured by kernel kind, every kernel's measured time
// against its roofline bound and its planned cost, the whole program against
// the no-fusion baseline plan, how the BLP chose the plan, and which regions
// derivation rewrote.
#pragma once

#include <string>

#include "runtime/artifact.h"
#include "runtime/executable.h"
#include "runtime/program.h"

namespace orchid::report {

struct ReportOptions {
  int runs = 20;                  // timed runs for per-kernel times (after 3 warm-up runs)
  bool compare_no_fusion = true;  // also build and time the baseline plan (one kernel per primitive)
  std::string cache_dir;          // kernel/cost cache (the machine's peaks; empty: default)
};

// Runs the program (a copy: Program copies share constant tensors) to time
// it and renders the page. orchid::Error when runs < 1, when Graphviz's
// `dot` is missing, or when a record in `info` is malformed.
// With `timed`, that executable of the program is timed instead of a copy
// (a Model's instance: no second packing of its weights).
std::string build_report_html(const runtime::Program& program, const runtime::ArtifactInfo& info,
                              const ReportOptions& options, runtime::Executable* timed = nullptr);

// build_report_html, then writes it to `path` (orchid::Error naming the path
// when it cannot be written).
void write_report(const runtime::Program& program, const runtime::ArtifactInfo& info, const ReportOptions& options,
                  const std::string& path, runtime::Executable* timed = nullptr);

}  // namespace orchid::report
