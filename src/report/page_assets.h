// The report page's inline style sheet and script (html_page.h).
#pragma once

namespace orchid::report {

extern const char* const kPageStyle;
// Expects the kernel table as table#kernels (its header's data-initial-sort:
// the column to sort by first, descending) and the graph in #plan.
extern const char* const kPageScript;

}  // namespace orchid::report
