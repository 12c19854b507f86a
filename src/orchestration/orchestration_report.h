// How orchestration chose a plan, for people and for plan.json: the
// OrchestrationReport as text (what `orchid compile` prints) and as the JSON
// record an artifact keeps (its "orchestration" field).
#pragma once

#include <string>

#include "orchestration/orchestrate.h"
#include "runtime/program.h"

namespace orchid::orchestration {

// Parts, candidates, costs measured and cached, BLP rounds and optimality,
// the planned time, and each kernel of `program` with its cost and source.
std::string orchestration_report_json(const OrchestrationReport& report, const runtime::Program& program);

// A few indented lines: candidates, costs, BLP, planned time, code generation.
std::string format_orchestration_report(const OrchestrationReport& report);

}  // namespace orchid::orchestration
