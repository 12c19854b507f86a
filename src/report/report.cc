#include "report/report.h"

#include <filesystem>
#include <fstream>

#include "backend/backend.h"
#include "orchestration/baseline_plan.h"
#include "report/graphviz.h"
#include "report/html_page.h"
#include "report/plan_dot.h"
#include "report/program_timing.h"
#include "report/report_data.h"
#include "runtime/random_inputs.h"
#include "support/error.h"
#include "support/parallel.h"

namespace orchid::report {

namespace {

// The baseline plan (one kernel per primitive, as `--no-fusion` compiles)
// of the program's primitive graph, timed like the program.
void add_baseline(const runtime::Program& program, int runs, ReportData& data) {
  runtime::Program baseline;
  baseline.graph = program.graph;
  baseline.kernels = orchestration::plan_baseline(baseline.graph);
  data.baseline_kernels = baseline.kernels.size();
  data.baseline_ms = time_program(baseline, runs).median_ms;
}

}  // namespace

std::string build_report_html(const runtime::Program& program, const runtime::ArtifactInfo& info,
                              const ReportOptions& options, runtime::Executable* timed) {
  check_graphviz();
  const int threads = num_threads();
  const ProgramTiming timing = timed ? time_executable(*timed, runtime::random_inputs(program.graph, 0), options.runs)
                                     : time_program(program, options.runs);
  ReportData data = make_report_data(program, info, timing, backend::cached_peaks(backend::cpu_backend(), options.cache_dir, threads));
  data.threads = threads;
  if (options.compare_no_fusion) add_baseline(program, options.runs, data);
  return html_page(data, render_svg(plan_dot(program, data)));
}

void write_report(const runtime::Program& program, const runtime::ArtifactInfo& info, const ReportOptions& options,
                  const std::string& path, runtime::Executable* timed) {
  // Before the runs: a missing folder should not cost them.
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!folder.empty() && !std::filesystem::is_directory(folder, ec)) {
    ORCHID_FAIL() << path << ": cannot write the report: there is no folder " << folder.string();
  }
  const std::string page = build_report_html(program, info, options, timed);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(page.data(), std::streamsize(page.size()));
  file.close();
  if (!file) ORCHID_FAIL() << path << ": cannot write the report";
}

}  // namespace orchid::report
