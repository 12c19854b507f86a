// Untimed candidates that are exactly a merge of chosen, timed kernels are
// offered for timing, most pieces first; not a partial cover, not a merge of
// an estimated piece, not a linear candidate, not one already timed.
#include "orchestration/merges.h"

#include <gtest/gtest.h>

namespace orchid::orchestration {
namespace {

Candidate library(std::vector<size_t> nodes) { return {std::move(nodes), CandidateKind::Library}; }
Candidate generated(std::vector<size_t> nodes) { return {std::move(nodes), CandidateKind::Generated}; }

TEST(Merges, ExactMergesOfTimedChosenKernelsMostPiecesFirst) {
  // Nodes 0..5. Chosen: {0}, {1}, {2}, {3,4} (timed), {5} (estimated).
  const std::vector<Candidate> candidates = {
      library({0}), library({1}), library({2}), generated({3, 4}), library({5}),
      generated({0, 1}),           // 5: two pieces
      generated({0, 1, 2, 3, 4}),  // 6: four pieces
      generated({1, 2, 3}),        // 7: cuts {3,4}: not a merge
      generated({4, 5}),           // 8: cuts {3,4}
      generated({2, 3, 4, 5}),     // 9: {5} is estimated
      generated({2}),              // 10: one piece
      {{0, 1, 2}, CandidateKind::Linear},  // 11: linear
      generated({1, 2}),           // 12: already timed
  };
  std::vector<bool> timed(candidates.size(), false);
  for (size_t i : {0, 1, 2, 3, 12}) timed[i] = true;
  const std::vector<std::vector<size_t>> chosen = {{0, 1, 2}, {3, 4}};
  EXPECT_EQ(merges_of_chosen(candidates, chosen, timed, 6), (std::vector<size_t>{6, 5}));
  EXPECT_EQ(merges_of_chosen(candidates, chosen, timed, 6, 1), (std::vector<size_t>{6}));
}

}  // namespace
}  // namespace orchid::orchestration
