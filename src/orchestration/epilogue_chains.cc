#include "orchestration/epilogue_chains.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

namespace orchid::orchestration {

EpilogueChains::EpilogueChains(const Graph& graph)
    : graph_(graph), consumers_(graph.num_values()), producer_(graph.num_values()),
      graph_output_(graph.num_values(), false) {
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    for (ValueId id : graph.nodes()[i].inputs) {
      if (id != kNoValue) consumers_[size_t(id)].push_back(i);
    }
    for (ValueId id : graph.nodes()[i].outputs) {
      if (id != kNoValue) producer_[size_t(id)] = i;
    }
  }
  for (ValueId id : graph.outputs()) graph_output_[size_t(id)] = true;
}

// The node that reads `value` as the only reader (once).
std::optional<size_t> EpilogueChains::sole_consumer(ValueId value) const {
  if (value == kNoValue || graph_output_[size_t(value)] || consumers_[size_t(value)].size() != 1) return std::nullopt;
  return consumers_[size_t(value)][0];
}

// The node reading `value` whose op is `op` (the last such reader).
std::optional<size_t> EpilogueChains::reader(ValueId value, const char* op) const {
  std::optional<size_t> found;
  for (size_t node : consumers_[size_t(value)]) {
    if (graph_.nodes()[node].op == op) found = node;
  }
  return found;
}

// Appends to `nodes` the chain of sole readers from its last node, one per
// op of `ops` and of that op; false where the chain breaks.
bool EpilogueChains::follow(std::vector<size_t>& nodes, std::initializer_list<const char*> ops) const {
  for (const char* op : ops) {
    const Node& last = graph_.nodes()[nodes.back()];
    std::optional<size_t> next = last.outputs.size() == 1 ? sole_consumer(last.outputs[0]) : std::nullopt;
    if (!next || graph_.nodes()[*next].op != op) return false;
    nodes.push_back(*next);
  }
  return true;
}

// SiLU after `value`: the Sigmoid and Mul nodes when `value` is read by
// exactly a Sigmoid and a Mul of it with the Sigmoid's output (and nothing
// else reads the Sigmoid's output).
std::optional<std::vector<size_t>> EpilogueChains::silu_after(ValueId value) const {
  if (value == kNoValue || graph_output_[size_t(value)] || consumers_[size_t(value)].size() != 2) return std::nullopt;
  auto [a, b] = std::pair(consumers_[size_t(value)][0], consumers_[size_t(value)][1]);
  if (graph_.nodes()[a].op != "Sigmoid") std::swap(a, b);
  const Node& sigmoid = graph_.nodes()[a];
  if (sigmoid.op != "Sigmoid" || graph_.nodes()[b].op != "Mul" || sigmoid.outputs.size() != 1) return std::nullopt;
  const ValueId s = sigmoid.outputs[0];
  if (graph_output_[size_t(s)] || consumers_[size_t(s)] != std::vector<size_t>{b}) return std::nullopt;
  return std::vector<size_t>{a, b};
}

// HardSwish after `value`, as fission writes it: x * Min(Max(x / 6 + 0.5,
// 0), 1), the Div, Add, Max, Min and Mul nodes when `value` is read by
// exactly the Div and the Mul and each gate step only by the next. (Which
// constants they use is the kernel's to check: accepts turns others down.)
std::optional<std::vector<size_t>> EpilogueChains::hard_swish_after(ValueId value) const {
  if (value == kNoValue || graph_output_[size_t(value)] || consumers_[size_t(value)].size() != 2) return std::nullopt;
  auto [div, mul] = std::pair(consumers_[size_t(value)][0], consumers_[size_t(value)][1]);
  if (graph_.nodes()[div].op != "Div") std::swap(div, mul);
  if (graph_.nodes()[div].op != "Div" || graph_.nodes()[mul].op != "Mul") return std::nullopt;
  std::vector<size_t> nodes = {div};
  if (!follow(nodes, {"Add", "Max", "Min"})) return std::nullopt;
  const Node& min = graph_.nodes()[nodes.back()];
  if (min.outputs.size() != 1 || sole_consumer(min.outputs[0]) != mul) return std::nullopt;
  nodes.push_back(mul);
  return nodes;
}

// Mish after `value`, as fission writes it (elementwise_rules.cc): x *
// Tanh(Max(x, 0) + Log(Exp(-|x|) + 1)), the nine nodes Abs, Neg, Exp, Add,
// Log, Max, Add, Tanh, Mul when `value` is read by exactly the Abs, the Max
// and the Mul and each step only by the next. (The constants are the
// kernel's to check.)
std::optional<std::vector<size_t>> EpilogueChains::mish_after(ValueId value) const {
  if (value == kNoValue || graph_output_[size_t(value)] || consumers_[size_t(value)].size() != 3) return std::nullopt;
  const std::optional<size_t> abs = reader(value, "Abs"), max = reader(value, "Max"), mul = reader(value, "Mul");
  if (!abs || !max || !mul) return std::nullopt;
  std::vector<size_t> nodes = {*abs};
  if (!follow(nodes, {"Neg", "Exp", "Add", "Log", "Add"})) return std::nullopt;
  const size_t softplus = nodes.back();
  const Node& max_node = graph_.nodes()[*max];
  if (max_node.outputs.size() != 1 || sole_consumer(max_node.outputs[0]) != softplus) return std::nullopt;
  nodes.insert(nodes.end() - 1, *max);
  if (!follow(nodes, {"Tanh", "Mul"}) || nodes.back() != *mul) return std::nullopt;
  return nodes;
}

// LeakyReLU after `value`, as fission writes it: Where(Less(x, 0), Mul(x,
// alpha), x), the Less, Mul and Where nodes when `value` is read by exactly
// those three and the Less and the Mul only by the Where.
std::optional<std::vector<size_t>> EpilogueChains::leaky_relu_after(ValueId value) const {
  if (value == kNoValue || graph_output_[size_t(value)] || consumers_[size_t(value)].size() != 3) return std::nullopt;
  const std::optional<size_t> less = reader(value, "Less"), mul = reader(value, "Mul"), where = reader(value, "Where");
  if (!less || !mul || !where) return std::nullopt;
  for (size_t step : {*less, *mul}) {
    const Node& node = graph_.nodes()[step];
    if (node.outputs.size() != 1 || sole_consumer(node.outputs[0]) != where) return std::nullopt;
  }
  return std::vector<size_t>{std::min(*less, *mul), std::max(*less, *mul), *where};
}

bool EpilogueChains::arithmetic(size_t node) const {
  static const std::set<std::string> ops = {"Add", "Sub", "Mul", "Div", "Pow", "Erf", "Tanh"};
  const Node& n = graph_.nodes()[node];
  return n.domain.empty() && ops.count(n.op) && n.outputs.size() == 1 && n.outputs[0] != kNoValue;
}

// Whether the nodes in `region` read only `value`, values they compute and
// constants; `open` gets their outputs that a node outside the region (or
// the graph's outputs) reads.
bool EpilogueChains::closed_inputs(const std::set<size_t>& region, ValueId value, std::vector<ValueId>& open) const {
  bool closed = true;
  for (size_t n : region) {
    const Node& node = graph_.nodes()[n];
    for (ValueId in : node.inputs) {
      const bool inside = in != kNoValue && producer_[size_t(in)] && region.count(*producer_[size_t(in)]);
      closed = closed && (in == value || inside || (in != kNoValue && graph_.value(in).is_constant()));
    }
    const ValueId out = node.outputs[0];
    const std::vector<size_t>& readers = consumers_[size_t(out)];
    if (graph_output_[size_t(out)] ||
        std::any_of(readers.begin(), readers.end(), [&](size_t r) { return !region.count(r); })) {
      open.push_back(out);
    }
  }
  return closed;
}

// An arithmetic function of `value` that reads it more than once (GELU's
// forms: x (1 + erf(x / sqrt 2)) / 2, the tanh form with its x^3): the
// smallest region of arithmetic nodes (Add, Sub, Mul, Div, Pow, Erf, Tanh)
// holding every reader of `value`, reading nothing else but constants and
// its own values, with one value read outside, at most 12 nodes; then
// extended along sole readers that combine the result with a constant
// (PyTorch's GELU halves last). Grown from its earliest open value. Which
// function it computes is the kernel's to check (onednn_linear_spec.cc).
std::optional<std::vector<size_t>> EpilogueChains::arithmetic_region_after(ValueId value) const {
  constexpr size_t kMaxNodes = 12;
  if (value == kNoValue || graph_output_[size_t(value)] || consumers_[size_t(value)].size() < 2) return std::nullopt;
  std::set<size_t> region;
  for (size_t n : consumers_[size_t(value)]) {
    if (!arithmetic(n)) return std::nullopt;
    region.insert(n);
  }
  while (region.size() <= kMaxNodes) {
    std::vector<ValueId> open;
    const bool closed = closed_inputs(region, value, open);
    if (closed && open.size() == 1 && producer_[size_t(open[0])] == *region.rbegin()) break;
    if (open.empty()) return std::nullopt;
    const auto earliest = std::min_element(open.begin(), open.end(), [&](ValueId a, ValueId b) {
      return *producer_[size_t(a)] < *producer_[size_t(b)];
    });
    if (graph_output_[size_t(*earliest)]) return std::nullopt;
    for (size_t r : consumers_[size_t(*earliest)]) {
      if (!arithmetic(r)) return std::nullopt;
      region.insert(r);
    }
  }
  if (region.size() > kMaxNodes) return std::nullopt;
  std::vector<size_t> nodes(region.begin(), region.end());
  while (nodes.size() < kMaxNodes) {
    const ValueId out = graph_.nodes()[nodes.back()].outputs[0];
    const std::optional<size_t> next = sole_consumer(out);
    if (!next || !arithmetic(*next)) break;
    const Node& n = graph_.nodes()[*next];
    const bool with_constant = n.inputs.size() == 2 && std::all_of(n.inputs.begin(), n.inputs.end(), [&](ValueId in) {
      return in == out || (in != kNoValue && graph_.value(in).is_constant());
    });
    if (!with_constant) break;
    nodes.push_back(*next);
  }
  return nodes;
}

// The nodes that would extend a chain ending in `value`: SiLU's pair,
// HardSwish's five nodes, Mish's nine, LeakyReLU's three, an arithmetic
// region (GELU), or the sole reader when it has one output.
std::optional<std::vector<size_t>> EpilogueChains::next_epilogue(ValueId value) const {
  if (std::optional<std::vector<size_t>> silu = silu_after(value)) return silu;
  if (std::optional<std::vector<size_t>> hard_swish = hard_swish_after(value)) return hard_swish;
  if (std::optional<std::vector<size_t>> mish = mish_after(value)) return mish;
  if (std::optional<std::vector<size_t>> leaky_relu = leaky_relu_after(value)) return leaky_relu;
  if (std::optional<std::vector<size_t>> region = arithmetic_region_after(value)) return region;
  std::optional<size_t> next = sole_consumer(value);
  if (!next || graph_.nodes()[*next].outputs.size() != 1) return std::nullopt;
  return std::vector<size_t>{*next};
}

std::optional<size_t> EpilogueChains::operand_transpose(size_t anchor) const {
  const Node& node = graph_.nodes()[anchor];
  if (node.op != "MatMul" || node.inputs.size() != 2 || node.inputs[1] == kNoValue) return std::nullopt;
  const ValueId operand = node.inputs[1];
  const std::optional<size_t> producer = producer_[size_t(operand)];
  if (!producer || graph_.nodes()[*producer].op != "Transpose" || sole_consumer(operand) != anchor) return std::nullopt;
  return producer;
}

std::vector<std::vector<size_t>> EpilogueChains::prefixes(
    size_t anchor, const std::function<bool(const std::vector<size_t>&)>& accepts) const {
  std::vector<std::vector<size_t>> out;
  const Node& node = graph_.nodes()[anchor];
  if (node.outputs.size() != 1) return out;
  std::vector<size_t> members = {anchor};
  ValueId current = node.outputs[0];
  while (std::optional<std::vector<size_t>> next = next_epilogue(current)) {
    members.insert(members.end(), next->begin(), next->end());
    if (!accepts(members)) break;
    out.push_back(members);
    current = graph_.nodes()[next->back()].outputs[0];
  }
  return out;
}

}  // namespace orchid::orchestration
