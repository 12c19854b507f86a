#include "ir/alternatives.h"

#include <set>

#include "ir/graph_utils.h"
#include "support/error.h"

namespace orchid {

namespace {

// Values written by `nodes` that a node outside them reads.
std::set<ValueId> values_leaving(const Graph& graph, const std::vector<size_t>& nodes) {
  const std::set<size_t> inside(nodes.begin(), nodes.end());
  std::set<ValueId> written;
  for (size_t n : nodes) written.insert(graph.nodes().at(n).outputs.begin(), graph.nodes().at(n).outputs.end());
  std::set<ValueId> leaving;
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    if (inside.count(n)) continue;
    for (ValueId id : graph.nodes()[n].inputs) {
      if (written.count(id)) leaving.insert(id);
    }
  }
  for (ValueId id : graph.outputs()) {
    if (written.count(id)) leaving.insert(id);
  }
  return leaving;
}

}  // namespace

void check_alternatives(const Graph& graph, const std::vector<Alternative>& alternatives) {
  std::set<size_t> used;
  const std::vector<size_t> producer = producer_nodes(graph);
  for (const Alternative& a : alternatives) {
    ORCHID_CHECK(!a.original_nodes.empty() && !a.derived_nodes.empty()) << "alternative with an empty form";
    for (const auto* nodes : {&a.original_nodes, &a.derived_nodes}) {
      for (size_t n : *nodes) {
        ORCHID_CHECK(n < graph.nodes().size() && used.insert(n).second)
            << "alternative forms overlap or name node " << n << " of " << graph.nodes().size();
      }
    }
    ORCHID_CHECK(producer.at(size_t(a.original)) == a.original_nodes.back() &&
                 producer.at(size_t(a.derived)) == a.derived_nodes.back())
        << "an alternative's values are not written by its forms' last nodes";
    ORCHID_CHECK(graph.type(a.original) == graph.type(a.derived))
        << "alternative forms of different types: " << graph.type(a.original).to_string() << " and "
        << graph.type(a.derived).to_string();
    const std::set<ValueId> original_leaving = values_leaving(graph, a.original_nodes);
    ORCHID_CHECK(original_leaving.size() <= 1 && (original_leaving.empty() || *original_leaving.begin() == a.original))
        << "a value of an alternative's original form other than its result is read outside it";
    ORCHID_CHECK(values_leaving(graph, a.derived_nodes).empty()) << "a derived form's value is read outside it";
  }
}

}  // namespace orchid
