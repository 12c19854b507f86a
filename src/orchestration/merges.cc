#include "orchestration/merges.h"

#include <algorithm>
#include <set>
#include <utility>

#include "ir/graph_utils.h"

namespace orchid::orchestration {

namespace {

// The chosen candidates whose nodes `merge` is the union of, or nothing when
// a node is not covered by a timed chosen candidate lying within `merge`.
std::set<size_t> pieces_of(const Candidate& merge, const std::vector<Candidate>& candidates,
                           const std::vector<size_t>& chosen_of, const std::vector<bool>& timed) {
  std::set<size_t> pieces;
  for (size_t n : merge.nodes) {
    const size_t c = chosen_of[n];
    if (c == kNoNode || !timed[c]) return {};
    const std::vector<size_t>& inside = candidates[c].nodes;
    if (!std::includes(merge.nodes.begin(), merge.nodes.end(), inside.begin(), inside.end())) return {};
    pieces.insert(c);
  }
  return pieces;
}

}  // namespace

std::vector<size_t> merges_of_chosen(const std::vector<Candidate>& candidates,
                                     const std::vector<std::vector<size_t>>& chosen, const std::vector<bool>& timed,
                                     size_t nodes, size_t max) {
  std::vector<size_t> chosen_of(nodes, kNoNode);
  for (const std::vector<size_t>& part : chosen) {
    for (size_t i : part) {
      for (size_t n : candidates[i].nodes) chosen_of[n] = i;
    }
  }
  std::vector<std::pair<size_t, size_t>> merges;  // (pieces, candidate)
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].kind == CandidateKind::Linear || timed[i]) continue;
    const size_t pieces = pieces_of(candidates[i], candidates, chosen_of, timed).size();
    if (pieces >= 2) merges.emplace_back(pieces, i);
  }
  std::stable_sort(merges.begin(), merges.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (merges.size() > max) merges.resize(max);
  std::vector<size_t> result;
  for (const auto& merge : merges) result.push_back(merge.second);
  return result;
}

}  // namespace orchid::orchestration
