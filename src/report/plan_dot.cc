#include "report/plan_dot.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "support/error.h"

namespace orchid::report {

namespace {

constexpr int kNone = -1;

// Where a value is written to memory: the kernel listing it among its
// outputs and the node of that kernel computing it (kNone: no kernel).
struct Writer {
  int kernel = kNone;
  int node = kNone;
};

std::vector<Writer> value_writers(const Graph& graph, const std::vector<runtime::KernelGroup>& kernels) {
  std::vector<Writer> writers(graph.num_values());
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (size_t n : kernels[k].nodes) {
      for (ValueId v : graph.nodes()[n].outputs) {
        const auto& outs = kernels[k].outputs;
        const bool written = v != kNoValue && std::find(outs.begin(), outs.end(), v) != outs.end();
        if (written) writers[size_t(v)] = {int(k), int(n)};
      }
    }
  }
  return writers;
}

// `text` as a DOT string's contents: backslashes and quotes escaped, line
// breaks folded into spaces, cut to `max` characters.
std::string dot_text(std::string text, size_t max) {
  if (text.size() > max) text = text.substr(0, max > 3 ? max - 3 : 0) + "...";
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out;
}

// A kernel's label: its name, its operators, its time against its bound
// (lines joined by DOT's "\n").
std::string kernel_label(const KernelRow& row, const DotOptions& options) {
  std::string label = dot_text(row.name, options.max_label);
  if (row.ops != row.name) label += "\\n" + dot_text(row.ops, options.max_label);
  label += fmt::format("\\n{:.3f} ms, {:.0f}% of bound", row.ms, 100 * row.bound_share());
  return label;
}

// The DOT text of a plan, built a statement at a time; edges are listed
// once each, in the order they are first added.
class DotWriter {
 public:
  DotWriter(const runtime::Program& program, const ReportData& data, const DotOptions& options)
      : graph_(program.graph), data_(data), options_(options), writers_(value_writers(graph_, program.kernels)) {}

  std::string write(bool collapsed) {
    out_ = "digraph plan {\n"
           "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=10, nodesep=0.2, ranksep=0.3];\n"
           "  node [shape=box, style=\"rounded,filled\", fillcolor=\"white\", fontname=\"Helvetica\", "
           "fontsize=9, height=0.3];\n"
           "  edge [color=\"#555555\", arrowsize=0.6];\n";
    write_interface();
    for (size_t k = 0; k < data_.kernels.size(); ++k) collapsed ? write_box(k) : write_cluster(k);
    for (size_t k = 0; k < data_.kernels.size(); ++k) add_kernel_edges(k, collapsed);
    add_output_edges(collapsed);
    for (const auto& [from, to] : edges_) out_ += fmt::format("  {} -> {};\n", from, to);
    return out_ + "}\n";
  }

 private:
  void write_interface() {
    for (size_t i = 0; i < graph_.inputs().size(); ++i) {
      out_ += fmt::format("  in{} [label=\"{}\", shape=ellipse, style=solid];\n", i,
                          dot_text(graph_.value(graph_.inputs()[i]).name, options_.max_label));
    }
    for (size_t i = 0; i < graph_.outputs().size(); ++i) {
      out_ += fmt::format("  out{} [label=\"{}\", shape=ellipse, style=solid];\n", i,
                          dot_text(graph_.value(graph_.outputs()[i]).name, options_.max_label));
    }
  }

  void write_cluster(size_t k) {
    const KernelRow& row = data_.kernels[k];
    out_ += fmt::format("  subgraph cluster_{} {{\n    label=\"{}\";\n", k, kernel_label(row, options_)) +
            fmt::format("    style=\"filled,rounded\"; fillcolor=\"{}\"; color=\"#888888\"; tooltip=\"{}\";\n",
                        kernel_colour(row.kind), dot_text(row.implementation, options_.max_label));
    for (size_t n : row.nodes) {
      const Node& node = graph_.nodes()[n];
      out_ += fmt::format("    k{}n{} [label=\"{}\", tooltip=\"{}\"];\n", k, n, dot_text(node.op, options_.max_label),
                          dot_text(node.name, options_.max_label));
    }
    out_ += "  }\n";
  }

  void write_box(size_t k) {
    const KernelRow& row = data_.kernels[k];
    out_ += fmt::format("  k{} [label=\"{}\", fillcolor=\"{}\", tooltip=\"{}\"];\n", k, kernel_label(row, options_),
                        kernel_colour(row.kind), dot_text(row.implementation, options_.max_label));
  }

  // The DOT node that holds value `v` for readers outside its kernel: its
  // writer's node (or the kernel's box), a graph input, or none (constants).
  std::string source_of(ValueId v, bool collapsed) const {
    const Writer& w = writers_[size_t(v)];
    if (w.kernel != kNone) return collapsed ? fmt::format("k{}", w.kernel) : fmt::format("k{}n{}", w.kernel, w.node);
    const auto& inputs = graph_.inputs();
    const auto it = std::find(inputs.begin(), inputs.end(), v);
    return it == inputs.end() ? "" : fmt::format("in{}", it - inputs.begin());
  }

  void add_edge(std::string from, std::string to) {
    if (from.empty() || from == to) return;
    std::pair<std::string, std::string> edge{std::move(from), std::move(to)};
    if (seen_.insert(edge).second) edges_.push_back(std::move(edge));
  }

  // Edges into kernel k's primitives (or its box): from the primitive of the
  // same kernel that computes a value, else from where the value is written.
  void add_kernel_edges(size_t k, bool collapsed) {
    std::map<ValueId, size_t> computed_here;  // value -> its node in this kernel
    for (size_t n : data_.kernels[k].nodes) {
      for (ValueId v : graph_.nodes()[n].outputs) computed_here[v] = n;
    }
    for (size_t n : data_.kernels[k].nodes) {
      const std::string to = collapsed ? fmt::format("k{}", k) : fmt::format("k{}n{}", k, n);
      for (ValueId v : graph_.nodes()[n].inputs) {
        if (v == kNoValue) continue;
        const auto here = computed_here.find(v);
        if (here == computed_here.end()) {
          add_edge(source_of(v, collapsed), to);
        } else if (!collapsed) {
          add_edge(fmt::format("k{}n{}", k, here->second), to);
        }
      }
    }
  }

  void add_output_edges(bool collapsed) {
    for (size_t i = 0; i < graph_.outputs().size(); ++i) {
      add_edge(source_of(graph_.outputs()[i], collapsed), fmt::format("out{}", i));
    }
  }

  const Graph& graph_;
  const ReportData& data_;
  const DotOptions& options_;
  std::vector<Writer> writers_;
  std::string out_;
  std::vector<std::pair<std::string, std::string>> edges_;
  std::set<std::pair<std::string, std::string>> seen_;
};

}  // namespace

const char* kernel_colour(KernelKind kind) {
  switch (kind) {
    case KernelKind::Generated: return "#b3e2cd";
    case KernelKind::OnednnLinear: return "#fdcdac";
    case KernelKind::DirectLinear: return "#cbd5e8";
    case KernelKind::Layout: return "#f4cae4";
    case KernelKind::Library: return "#e6f5c9";
    case KernelKind::Reference: return "#fbb4ae";
  }
  return "#ffffff";
}

std::string plan_dot(const runtime::Program& program, const ReportData& data, const DotOptions& options) {
  ORCHID_CHECK(data.kernels.size() == program.kernels.size())
      << data.kernels.size() << " kernel rows for a program of " << program.kernels.size() << " kernels";
  size_t drawn = 0;
  for (const KernelRow& row : data.kernels) drawn += row.nodes.size();
  return DotWriter(program, data, options).write(/*collapsed=*/drawn > options.max_primitives);
}

}  // namespace orchid::report
