// Lays out a DOT graph with Graphviz's `dot` (run as a subprocess) into SVG.
#pragma once

#include <string>

namespace orchid::report {

// The <svg> element `dot -Tsvg` makes of `dot_text` (its XML prolog and
// doctype dropped, so that it can be inlined in HTML). `dot_program` is
// looked up on PATH; orchid::Error saying to install Graphviz when it is
// not found, and when it fails (with its messages).
// Whether `dot_program` runs (`dot -V`): the same errors as render_svg, for
// callers that would rather fail before a long computation than after it.
void check_graphviz(const std::string& dot_program = "dot");

std::string render_svg(const std::string& dot_text, const std::string& dot_program = "dot");

}  // namespace orchid::report
