// The reference interpreter: evaluates a Graph node by node with the
// straightforward implementations of the operator registry. It is slow,
// simple, and the oracle for every later stage's tests.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace orchid::reference {

// Feeds: one tensor per graph input, by name. Returns the graph's outputs in
// order. orchid::Error when an input is missing or its dtype/shape differs
// from the graph's declaration.
std::vector<Tensor> run_graph(const Graph& graph, const std::map<std::string, Tensor>& feeds);

// Checks that a fed tensor matches a graph input's declared type.
void check_feed(const Value& input, const Tensor& tensor);

}  // namespace orchid::reference
