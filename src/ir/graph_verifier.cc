#include "ir/graph_verifier.h"

#include <vector>

#include "support/error.h"

namespace orchid {

namespace {

enum class State : uint8_t { Undefined, Input, Constant, Computed };

void check_id(const Graph& graph, ValueId id, const std::string& where) {
  ORCHID_CHECK(id >= 0 && size_t(id) < graph.num_values()) << where << " refers to value id " << id;
}

}  // namespace

void verify_graph(const Graph& graph) {
  std::vector<State> state(graph.num_values(), State::Undefined);
  for (size_t id = 0; id < graph.num_values(); ++id) {
    const Value& value = graph.value(ValueId(id));
    if (value.is_constant()) {
      state[id] = State::Constant;
      ORCHID_CHECK(value.constant->type() == value.type) << "constant '" << value.name << "' has data of type "
                                                         << value.constant->type().to_string() << " but is declared "
                                                         << value.type.to_string();
    }
  }
  for (ValueId id : graph.inputs()) {
    check_id(graph, id, "graph input");
    ORCHID_CHECK(state[size_t(id)] == State::Undefined) << "graph input '" << graph.value(id).name
                                                        << "' is also a constant or listed twice";
    state[size_t(id)] = State::Input;
  }
  for (const Node& node : graph.nodes()) {
    for (ValueId id : node.inputs) {
      if (id == kNoValue) continue;
      check_id(graph, id, node.describe());
      ORCHID_CHECK(state[size_t(id)] != State::Undefined)
          << node.describe() << " reads '" << graph.value(id).name << "' before any node computes it";
    }
    for (ValueId id : node.outputs) {
      if (id == kNoValue) continue;
      check_id(graph, id, node.describe());
      ORCHID_CHECK(state[size_t(id)] == State::Undefined)
          << node.describe() << " writes '" << graph.value(id).name << "', which is already defined";
      state[size_t(id)] = State::Computed;
    }
  }
  for (ValueId id : graph.outputs()) {
    check_id(graph, id, "graph output");
    ORCHID_CHECK(state[size_t(id)] != State::Undefined) << "graph output '" << graph.value(id).name
                                                        << "' is never computed";
  }
}

}  // namespace orchid
