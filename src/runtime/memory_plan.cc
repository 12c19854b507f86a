#include "runtime/memory_plan.h"

#include <algorithm>
#include <map>
#include <set>

namespace orchid::runtime {

namespace {

struct Interval {
  ValueId value;
  size_t bytes;
  size_t first;  // producing kernel
  size_t last;   // last kernel that reads it
};

size_t aligned(size_t bytes) { return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

std::vector<Interval> intermediate_lifetimes(const Program& program, const std::vector<size_t>& bytes,
                                            const std::map<ValueId, ValueId>& source_of) {
  const Graph& graph = program.graph;
  std::set<ValueId> graph_outputs(graph.outputs().begin(), graph.outputs().end());
  std::vector<Interval> intervals;
  std::vector<int64_t> index_of(graph.num_values(), -1);
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    for (ValueId id : program.kernels[k].outputs) {
      if (graph_outputs.count(id)) continue;
      if (auto alias = source_of.find(id); alias != source_of.end()) {
        index_of[size_t(id)] = index_of[size_t(alias->second)];  // the source's interval, read further on
        continue;
      }
      index_of[size_t(id)] = int64_t(intervals.size());
      const TensorType& type = graph.type(id);
      const size_t dense = type.nbytes();
      const size_t size = size_t(id) < bytes.size() && bytes[size_t(id)] ? bytes[size_t(id)] : dense;
      intervals.push_back({id, size, k, k});
    }
    for (ValueId id : program.kernels[k].inputs) {
      if (index_of[size_t(id)] >= 0) intervals[size_t(index_of[size_t(id)])].last = k;
    }
  }
  return intervals;
}

}  // namespace

// Greedy by size, largest first: each tensor takes the lowest offset where it
// overlaps no already placed tensor whose lifetime intersects its own. Simple,
// and within a few percent of optimal on CNN-like graphs.
MemoryPlan plan_memory(const Program& program, const std::vector<size_t>& bytes,
                       const std::vector<std::pair<ValueId, ValueId>>& same_bytes) {
  MemoryPlan plan;
  plan.offset.assign(program.graph.num_values(), -1);
  std::map<ValueId, ValueId> source_of;
  for (const auto& [alias, source] : same_bytes) {
    auto chained = source_of.find(source);  // a Reshape of a Reshape: the first source
    source_of[alias] = chained == source_of.end() ? source : chained->second;
  }
  std::vector<Interval> intervals = intermediate_lifetimes(program, bytes, source_of);
  std::vector<size_t> order(intervals.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return intervals[a].bytes > intervals[b].bytes; });
  struct Placed {
    size_t offset, bytes, first, last;
  };
  std::vector<Placed> placed;
  for (size_t i : order) {
    const Interval& t = intervals[i];
    const size_t bytes = aligned(std::max<size_t>(t.bytes, 1));
    std::vector<std::pair<size_t, size_t>> busy;  // [offset, end) of lifetime-overlapping tensors
    for (const Placed& p : placed) {
      if (p.first <= t.last && t.first <= p.last) busy.push_back({p.offset, p.offset + p.bytes});
    }
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + bytes <= begin) break;
      offset = std::max(offset, end);
    }
    placed.push_back({offset, bytes, t.first, t.last});
    plan.offset[size_t(t.value)] = int64_t(offset);
    plan.arena_bytes = std::max(plan.arena_bytes, offset + bytes);
    plan.intermediate_bytes += t.bytes;
  }
  for (const auto& [alias, source] : source_of) plan.offset[size_t(alias)] = plan.offset[size_t(source)];
  plan.num_intermediates = intervals.size();
  return plan;
}

}  // namespace orchid::runtime
