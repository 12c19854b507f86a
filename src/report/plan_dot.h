// The plan as a Graphviz graph (DOT text): each kernel a cluster, filled
// with its kind's colour (kernel_colour), holding the primitives it
// computes (a primitive computed by several kernels appears in each), with
// edges from the primitive that writes a value to those that read it; graph
// inputs and outputs as ellipses. A cluster's label gives the kernel's name,
// its operators, its time and the share of its roofline bound it reaches.
// Plans of more primitives than `max_primitives` draw one box per kernel
// instead, with an edge per kernel that reads another's output, so that
// huge graphs stay legible and quick to lay out.
#pragma once

#include <cstddef>
#include <string>

#include "runtime/program.h"
#include "report/report_data.h"

namespace orchid::report {

struct DotOptions {
  size_t max_primitives = 1000;
  size_t max_label = 48;  // longer names and operator lists are cut, ending in "..."
};

// The fill colour of a kernel kind ("#rrggbb"), shared by the graph and the page's legend.
const char* kernel_colour(KernelKind kind);

// `data.kernels` are the program's kernels, in order.
std::string plan_dot(const runtime::Program& program, const ReportData& data, const DotOptions& options = {});

}  // namespace orchid::report
