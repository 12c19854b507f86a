#include "orchestration/blp_builder.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "ir/graph_utils.h"

namespace orchid::orchestration {

namespace {

// Where values are made and read, by part.
struct PartFacts {
  std::vector<size_t> part_of_node;
  std::vector<size_t> producer;       // per value: its node, kNoNode for inputs and constants
  std::vector<size_t> producer_part;  // per value: its producer's part, kNoNode for none
  std::vector<bool> read_elsewhere;   // per value: a graph output, or read by another part
};

PartFacts part_facts(const Graph& graph, const CandidateSet& set) {
  PartFacts facts;
  facts.part_of_node.assign(graph.nodes().size(), 0);
  for (size_t p = 0; p < set.parts.size(); ++p) {
    for (size_t c = set.parts[p].begin; c < set.parts[p].end; ++c) {
      for (size_t node : set.clusters.members[c]) facts.part_of_node[node] = p;
    }
  }
  facts.producer = producer_nodes(graph);
  facts.producer_part.assign(graph.num_values(), kNoNode);
  for (size_t id = 0; id < facts.producer.size(); ++id) {
    if (facts.producer[id] != kNoNode) facts.producer_part[id] = facts.part_of_node[facts.producer[id]];
  }
  facts.read_elsewhere.assign(graph.num_values(), false);
  for (ValueId id : graph.outputs()) facts.read_elsewhere[size_t(id)] = true;
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    for (ValueId id : graph.nodes()[n].inputs) {
      if (id != kNoValue && facts.producer_part[size_t(id)] != facts.part_of_node[n]) {
        facts.read_elsewhere[size_t(id)] = true;
      }
    }
  }
  return facts;
}

// Per alternative: whether its alias is in the BLP (both forms in one part).
std::vector<bool> active_alternatives(const std::vector<Alternative>& alternatives, const PartFacts& facts) {
  std::vector<bool> active;
  for (const Alternative& a : alternatives) {
    active.push_back(facts.producer_part[size_t(a.original)] == facts.producer_part[size_t(a.derived)]);
  }
  return active;
}

// The values a node set reads from outside it.
std::set<ValueId> read_from_outside(const Graph& graph, const std::vector<size_t>& nodes) {
  std::set<ValueId> written, read;
  for (size_t n : nodes) {
    for (ValueId id : graph.nodes()[n].inputs) {
      if (id != kNoValue && !written.count(id)) read.insert(id);
    }
    written.insert(graph.nodes()[n].outputs.begin(), graph.nodes()[n].outputs.end());
  }
  return read;
}

// The nodes of `nodes` (a form's) that `value` depends on through them.
std::vector<size_t> depends_within(const Graph& graph, const std::vector<size_t>& nodes, ValueId value) {
  std::set<ValueId> wanted = {value};
  std::vector<size_t> found;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const Node& node = graph.nodes()[*it];
    if (std::none_of(node.outputs.begin(), node.outputs.end(), [&](ValueId id) { return wanted.count(id) > 0; })) {
      continue;
    }
    found.push_back(*it);
    wanted.insert(node.inputs.begin(), node.inputs.end());
  }
  return found;
}

// Valid inequalities that make the LP relaxation tight: every node a
// required value depends on (within its part) is computed by some chosen
// kernel, since a kernel computes its nodes from its inputs only. Korch's
// constraints alone let the relaxation buy 1/8 of a kernel whose inputs
// then need only 1/8 of a writer, and so on upstream: on a transformer
// layer its bound was 1/24 of the optimum and CBC took 20 s per solve.
// As cuts with an empty all_of: "some kernel of one_of is chosen". With
// alternatives, a node of either form is needed in neither (the other form
// may be chosen); the original value being needed makes the values both
// forms read needed instead.
void add_node_covers(const Graph& graph, const CandidateSet& set, const PartFacts& facts,
                     const std::vector<Alternative>& alternatives, const std::vector<bool>& active,
                     std::vector<PartProblem>& problems) {
  const size_t n = graph.nodes().size();
  std::vector<bool> in_a_form(n, false);
  std::map<size_t, std::vector<ValueId>> read_by_both;  // an active alternative's original result node -> values
  for (size_t a = 0; a < alternatives.size(); ++a) {
    if (!active[a]) continue;
    for (const auto* nodes : {&alternatives[a].original_nodes, &alternatives[a].derived_nodes}) {
      for (size_t node : *nodes) in_a_form[node] = true;
    }
    const std::set<ValueId> original = read_from_outside(graph, alternatives[a].original_nodes);
    const std::set<ValueId> derived = read_from_outside(graph, alternatives[a].derived_nodes);
    std::vector<ValueId>& both = read_by_both[alternatives[a].original_nodes.back()];
    std::set_intersection(original.begin(), original.end(), derived.begin(), derived.end(), std::back_inserter(both));
  }
  std::vector<bool> needed(n, false);
  for (size_t i = n; i-- > 0;) {
    for (ValueId id : graph.nodes()[i].outputs) {
      needed[i] = needed[i] || (id != kNoValue && facts.read_elsewhere[size_t(id)]);
    }
    if (!needed[i]) continue;
    std::vector<ValueId> inputs = graph.nodes()[i].inputs;
    if (in_a_form[i]) {
      auto it = read_by_both.find(i);
      inputs = it == read_by_both.end() ? std::vector<ValueId>{} : it->second;
    }
    for (ValueId id : inputs) {
      if (id == kNoValue || facts.producer[size_t(id)] == kNoNode) continue;
      const size_t producer = facts.producer[size_t(id)];
      if (facts.part_of_node[producer] == facts.part_of_node[i]) needed[producer] = true;
    }
  }
  std::vector<std::vector<size_t>> covering(n);  // per node: local kernel indices of its part
  for (PartProblem& part : problems) {
    for (size_t k = 0; k < part.candidates.size(); ++k) {
      for (size_t node : set.candidates[part.candidates[k]].nodes) covering[node].push_back(k);
    }
  }
  std::vector<std::set<std::pair<std::vector<size_t>, std::vector<size_t>>>> seen(problems.size());
  auto add_cut = [&](size_t p, std::vector<size_t> all_of, std::vector<size_t> one_of) {
    if (seen[p].insert({all_of, one_of}).second) problems[p].problem.cuts.push_back({std::move(all_of), std::move(one_of)});
  };
  for (size_t i = 0; i < n; ++i) {
    if (needed[i] && !in_a_form[i]) add_cut(facts.part_of_node[i], {}, covering[i]);
  }
  // A form's nodes, conditioned on the choice: with the alias chosen the
  // derived value is read, so every derived node it depends on is computed;
  // without it, where the original value is needed, every original node it
  // depends on is ("the alias, or some kernel covering the node").
  std::vector<size_t> next_alias(problems.size(), 0);
  for (size_t a = 0; a < alternatives.size(); ++a) {
    if (!active[a]) continue;
    const size_t p = facts.producer_part[size_t(alternatives[a].original)];
    const size_t alias = problems[p].candidates.size() + next_alias[p]++;
    for (size_t node : depends_within(graph, alternatives[a].derived_nodes, alternatives[a].derived)) {
      add_cut(p, {alias}, covering[node]);
    }
    if (!needed[alternatives[a].original_nodes.back()]) continue;
    for (size_t node : depends_within(graph, alternatives[a].original_nodes, alternatives[a].original)) {
      std::vector<size_t> one_of = covering[node];
      one_of.push_back(alias);
      add_cut(p, {}, std::move(one_of));
    }
  }
}

// Per value: whether a candidate of another part than its producer's reads
// it in a native layout (a oneDNN conv, a kernel that works in either).
std::vector<bool> read_natively_elsewhere(const Graph& graph, const CandidateSet& set,
                                          const std::vector<runtime::KernelGroup>& groups,
                                          const std::vector<KernelLayout>& layouts, const PartFacts& facts) {
  std::vector<bool> native(graph.num_values(), false);
  for (size_t i = 0; i < set.candidates.size(); ++i) {
    if (layouts[i] == KernelLayout::RowMajor) continue;
    for (ValueId id : groups[i].inputs) {
      if (facts.producer_part[size_t(id)] != kNoNode && facts.producer_part[size_t(id)] != set.candidates[i].part) {
        native[size_t(id)] = true;
      }
    }
  }
  return native;
}

// A tensor that a later part reads may be left in either form, unless it
// is a graph output or no later reader could take it natively: then it is
// required row-major here, so this part pays its conversion (parts are
// solved in turn; FSRCNN's last conv, read only by the row-major GEMM +
// col2im deconvolution, was left native for the next part to convert at
// 2 ms, where a direct conv writing row-major took 1.2).
void add_layouts(const Graph& graph, const std::vector<KernelLayout>& layouts, const std::map<ValueId, int>& ids,
                 const std::vector<bool>& read_natively_elsewhere, PartProblem& part) {
  part.value_of.assign(ids.size(), kNoValue);
  for (const auto& [value, id] : ids) part.value_of[size_t(id)] = value;
  std::vector<KernelLayout> kernel_layouts;
  for (size_t i : part.candidates) kernel_layouts.push_back(layouts[i]);
  kernel_layouts.resize(kernel_layouts.size() + part.aliases.size(), KernelLayout::Either);
  std::vector<bool> row_major(ids.size(), false);
  for (const auto& [value, id] : ids) row_major[size_t(id)] = !read_natively_elsewhere[size_t(value)];
  for (ValueId id : graph.outputs()) {
    if (auto it = ids.find(id); it != ids.end()) row_major[size_t(it->second)] = true;
  }
  part.layouts = add_native_layouts(part.problem, kernel_layouts, [](int) { return 0.0; }, row_major);
}

}  // namespace

std::optional<size_t> PartProblem::candidate(size_t k) const {
  const std::optional<size_t> local = layouts.candidate_of(k);
  if (!local || *local >= candidates.size()) return std::nullopt;
  return candidates[*local];
}

std::optional<size_t> PartProblem::alias(size_t k) const {
  const std::optional<size_t> local = layouts.candidate_of(k);
  if (!local || *local < candidates.size()) return std::nullopt;
  return aliases[*local - candidates.size()];
}

std::vector<PartProblem> build_part_problems(const Graph& graph, const CandidateSet& set,
                                             const std::vector<runtime::KernelGroup>& groups,
                                             const std::vector<KernelLayout>& layouts,
                                             const std::vector<Alternative>& alternatives, bool node_covers) {
  const PartFacts facts = part_facts(graph, set);
  const std::vector<bool> active = active_alternatives(alternatives, facts);
  std::vector<PartProblem> problems(set.parts.size());
  std::vector<std::map<ValueId, int>> tensor_ids(set.parts.size());
  auto tensor = [&](size_t p, ValueId id) {
    auto [it, added] = tensor_ids[p].emplace(id, int(tensor_ids[p].size()));
    const bool made_here = facts.producer_part[size_t(id)] == p;
    if (added && !made_here) problems[p].problem.available.push_back(it->second);
    if (added && made_here && facts.read_elsewhere[size_t(id)]) problems[p].problem.required.push_back(it->second);
    return it->second;
  };
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    for (ValueId id : graph.nodes()[n].outputs) {
      if (id != kNoValue) tensor(facts.part_of_node[n], id);
    }
  }
  for (size_t i = 0; i < set.candidates.size(); ++i) {
    const size_t p = set.candidates[i].part;
    BlpKernel kernel;
    for (ValueId id : groups[i].inputs) {
      if (!graph.value(id).is_constant()) kernel.inputs.push_back(tensor(p, id));
    }
    for (ValueId id : groups[i].outputs) kernel.outputs.push_back(tensor(p, id));
    problems[p].candidates.push_back(i);
    problems[p].problem.kernels.push_back(std::move(kernel));
  }
  for (size_t a = 0; a < alternatives.size(); ++a) {
    if (!active[a]) continue;
    const size_t p = facts.producer_part[size_t(alternatives[a].original)];
    problems[p].aliases.push_back(a);
    problems[p].problem.kernels.push_back({alternatives[a].choice_margin_seconds, {tensor(p, alternatives[a].derived)},
                                           {tensor(p, alternatives[a].original)}});
  }
  for (size_t p = 0; p < problems.size(); ++p) problems[p].problem.num_tensors = int(tensor_ids[p].size());
  if (node_covers) add_node_covers(graph, set, facts, alternatives, active, problems);
  const std::vector<bool> native_readers = read_natively_elsewhere(graph, set, groups, layouts, facts);
  for (size_t p = 0; p < problems.size(); ++p) add_layouts(graph, layouts, tensor_ids[p], native_readers, problems[p]);
  return problems;
}

}  // namespace orchid::orchestration
