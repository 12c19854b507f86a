#include "orchestration/candidates.h"

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "ir/graph_utils.h"
#include "orchestration/epilogue_chains.h"

namespace orchid::orchestration {

namespace {

// A set of clusters of one part, by local index.
struct Bitset {
  std::vector<uint64_t> words;
  explicit Bitset(size_t bits = 0) : words((bits + 63) / 64, 0) {}
  void set(size_t i) { words[i / 64] |= uint64_t(1) << (i % 64); }
  bool test(size_t i) const { return (words[i / 64] >> (i % 64)) & 1; }
  Bitset& operator|=(const Bitset& other) {
    for (size_t w = 0; w < words.size(); ++w) words[w] |= other.words[w];
    return *this;
  }
  // Whether (this & other) has a bit outside `allowed`.
  bool meets_outside(const Bitset& other, const Bitset& allowed) const {
    for (size_t w = 0; w < words.size(); ++w) {
      if (words[w] & other.words[w] & ~allowed.words[w]) return true;
    }
    return false;
  }
  bool operator==(const Bitset& other) const = default;
};

struct BitsetHash {
  size_t operator()(const Bitset& b) const {
    uint64_t h = 1469598103934665603ull;
    for (uint64_t w : b.words) h = (h ^ w) * 1099511628211ull;
    return size_t(h);
  }
};

// Strict descendants and ancestors of each cluster of a part, within it. A
// path that leaves the part never returns (parts are ranges of a
// topological order), so convexity inside the part is convexity.
struct Reach {
  std::vector<Bitset> descendants, ancestors;
};

Reach reachability(const ClusterGraph& clusters, size_t begin, size_t end) {
  const size_t n = end - begin;
  Reach reach{std::vector<Bitset>(n, Bitset(n)), std::vector<Bitset>(n, Bitset(n))};
  for (size_t i = n; i-- > 0;) {
    for (size_t s : clusters.successors[begin + i]) {
      if (s >= end) continue;
      reach.descendants[i].set(s - begin);
      reach.descendants[i] |= reach.descendants[s - begin];
    }
  }
  for (size_t i = 0; i < n; ++i) {
    for (size_t p : clusters.predecessors[begin + i]) {
      if (p < begin) continue;
      reach.ancestors[i].set(p - begin);
      reach.ancestors[i] |= reach.ancestors[p - begin];
    }
  }
  return reach;
}

struct Growing {
  Bitset members, descendants, ancestors;
  std::vector<size_t> list;  // local indices
  size_t nodes = 0;
};

// Every connected convex set of two or more fusable clusters of the part,
// within the size limits; nullopt when there are more than the limit.
std::optional<std::vector<std::vector<size_t>>> fusable_sets(const ClusterGraph& clusters, size_t begin, size_t end,
                                                             const CandidateOptions& options) {
  const size_t n = end - begin;
  const Reach reach = reachability(clusters, begin, end);
  std::unordered_set<Bitset, BitsetHash> seen;
  std::vector<std::vector<size_t>> sets;
  std::vector<Growing> stack;
  for (size_t i = 0; i < n; ++i) {
    if (!clusters.fusable[begin + i]) continue;
    Growing seed{Bitset(n), reach.descendants[i], reach.ancestors[i], {i}, clusters.members[begin + i].size()};
    seed.members.set(i);
    stack.push_back(std::move(seed));
  }
  while (!stack.empty()) {
    Growing current = std::move(stack.back());
    stack.pop_back();
    if (current.list.size() >= options.max_kernel_clusters) continue;
    for (size_t member : current.list) {
      for (const auto* adjacent : {&clusters.successors[begin + member], &clusters.predecessors[begin + member]}) {
        for (size_t global : *adjacent) {
          if (global < begin || global >= end || !clusters.fusable[global]) continue;
          const size_t x = global - begin;
          if (current.members.test(x)) continue;
          Growing next = current;
          next.members.set(x);
          next.descendants |= reach.descendants[x];
          next.ancestors |= reach.ancestors[x];
          next.nodes += clusters.members[global].size();
          if (next.nodes > options.max_kernel_nodes) continue;
          // Convex: no cluster outside the set lies on a path between two members.
          if (next.descendants.meets_outside(next.ancestors, next.members)) continue;
          if (!seen.insert(next.members).second) continue;
          next.list.push_back(x);
          std::vector<size_t> set;
          for (size_t local : next.list) set.push_back(begin + local);
          std::sort(set.begin(), set.end());
          sets.push_back(std::move(set));
          if (sets.size() > options.max_candidates_per_part) return std::nullopt;
          stack.push_back(std::move(next));
        }
      }
    }
  }
  return sets;
}

// Whether no legal kernel holds both ends of the edge from -> to: `to` is
// linear (a oneDNN kernel takes no producer with it) or cannot be fused, or
// `from` is neither fusable nor linear (it runs alone).
bool edge_is_lossless(const ClusterGraph& clusters, size_t from, size_t to) {
  return clusters.linear[to] || !clusters.fusable[to] || (!clusters.fusable[from] && !clusters.linear[from]);
}

// Per boundary b (between clusters b-1 and b): whether every edge across it is lossless.
std::vector<bool> lossless_boundaries(const ClusterGraph& clusters,
                                      const std::vector<std::pair<size_t, size_t>>& spans) {
  std::vector<int> lossy(clusters.size() + 1, 0);
  for (const auto& [lo, hi] : spans) {  // no boundary inside a multi-cluster library kernel
    lossy[lo + 1] += 1;
    lossy[hi + 1] -= 1;
  }
  for (size_t from = 0; from < clusters.size(); ++from) {
    for (size_t to : clusters.successors[from]) {
      if (edge_is_lossless(clusters, from, to)) continue;
      lossy[from + 1] += 1;
      lossy[to + 1] -= 1;
    }
  }
  std::vector<bool> lossless(clusters.size() + 1, true);
  int open = 0;
  for (size_t b = 0; b <= clusters.size(); ++b) {
    open += lossy[b];
    lossless[b] = open == 0;
  }
  return lossless;
}

// The clusters of each MatMul and the Transpose that can be its prologue
// (EpilogueChains::operand_transpose), which a candidate needs in one part.
std::vector<std::pair<size_t, size_t>> prologue_spans(const Graph& graph, const ClusterGraph& clusters) {
  std::vector<std::pair<size_t, size_t>> spans;
  const EpilogueChains chains(graph);
  for (size_t node = 0; node < graph.nodes().size(); ++node) {
    if (std::optional<size_t> transpose = chains.operand_transpose(node)) {
      const size_t a = clusters.cluster_of[*transpose], b = clusters.cluster_of[node];
      spans.emplace_back(std::min(a, b), std::max(a, b));
    }
  }
  return spans;
}

// The first and last cluster of each node set (a library kernel's
// candidate needs all of them in one part).
std::vector<std::pair<size_t, size_t>> node_set_spans(const std::vector<std::vector<size_t>>& node_sets,
                                                      const ClusterGraph& clusters) {
  std::vector<std::pair<size_t, size_t>> spans;
  for (const std::vector<size_t>& nodes : node_sets) {
    size_t lo = clusters.size(), hi = 0;
    for (size_t n : nodes) lo = std::min(lo, clusters.cluster_of[n]), hi = std::max(hi, clusters.cluster_of[n]);
    spans.emplace_back(lo, hi);
  }
  return spans;
}

// The first and last cluster of each alternative's two forms: the alias
// kernel that chooses between them needs both in its part.
std::vector<std::pair<size_t, size_t>> alternative_spans(const std::vector<Alternative>& alternatives,
                                                         const ClusterGraph& clusters) {
  std::vector<std::vector<size_t>> node_sets;
  for (const Alternative& a : alternatives) {
    node_sets.push_back(a.original_nodes);
    node_sets.back().insert(node_sets.back().end(), a.derived_nodes.begin(), a.derived_nodes.end());
  }
  return node_set_spans(node_sets, clusters);
}

// The boundary inside (begin, end) that the fewest clusters' values cross,
// nearest the middle among equals; boundaries inside a span only when every
// one is.
size_t narrowest_boundary(const ClusterGraph& clusters, size_t begin, size_t end,
                          const std::vector<std::pair<size_t, size_t>>& spans) {
  size_t best = begin + 1, best_width = size_t(-1), best_distance = size_t(-1);
  const size_t middle = (begin + end) / 2;
  for (size_t b = begin + 1; b < end; ++b) {
    size_t width = 0;
    for (size_t from = begin; from < b; ++from) {
      const auto& out = clusters.successors[from];
      width += std::any_of(out.begin(), out.end(), [&](size_t to) { return to >= b; });
    }
    const bool inside_span = std::any_of(spans.begin(), spans.end(), [&](auto span) {
      return span.first < b && b <= span.second;
    });
    if (inside_span) width += clusters.size() * clusters.size();
    const size_t distance = b > middle ? b - middle : middle - b;
    if (width < best_width || (width == best_width && distance < best_distance)) {
      best = b, best_width = width, best_distance = distance;
    }
  }
  return best;
}

class Enumerator {
 public:
  Enumerator(const Graph& graph, const CandidateRules& rules, const CandidateOptions& options,
             const std::vector<std::vector<size_t>>& library_sets, const std::vector<ValueId>& live,
             const std::vector<std::pair<size_t, size_t>>& spans, CandidateSet& out)
      : graph_(graph), rules_(rules), options_(options), library_sets_(library_sets), spans_(spans), out_(out),
        make_group_(graph, live), chains_(graph) {}

  // Enumerates [begin, end), cutting it at its narrowest point while the
  // candidate limit is exceeded.
  void enumerate(size_t begin, size_t end, const std::string& cut) {
    std::optional<std::vector<std::vector<size_t>>> sets;
    if (end - begin > 1) sets = fusable_sets(out_.clusters, begin, end, options_);
    if (end - begin > 1 && !sets) {
      const size_t b = narrowest_boundary(out_.clusters, begin, end, spans_);
      enumerate(begin, b, cut);
      enumerate(b, end, "narrowest");
      return;
    }
    const size_t part = out_.parts.size();
    const size_t first = out_.candidates.size();
    add_singletons(begin, end, part);
    add_linear_chains(begin, end, part);
    add_library_sets(begin, end, part);
    if (sets) {
      for (const std::vector<size_t>& set : *sets) add_generated(set, part);
    }
    for (size_t c = begin; c < end; ++c) {
      if (out_.clusters.members[c].size() > 1) add_generated({c}, part);
    }
    Part info{begin, end, 0, out_.candidates.size() - first, cut};
    for (size_t c = begin; c < end; ++c) info.nodes += out_.clusters.members[c].size();
    out_.parts.push_back(info);
  }

 private:
  void add_singletons(size_t begin, size_t end, size_t part) {
    for (size_t c = begin; c < end; ++c) {
      for (size_t node : out_.clusters.members[c]) {
        const bool linear = rules_.fusion.is_linear(graph_, graph_.nodes()[node]);
        if (linear) {
          add_linear({node}, part);
        } else {
          out_.candidates.push_back({{node}, CandidateKind::Library, part});
        }
      }
    }
  }

  // A linear primitive with each longer prefix of its epilogue chain that
  // oneDNN computes, within the part. Chains are found on nodes, not
  // clusters: an epilogue may sit in a cluster with nodes oneDNN cannot
  // take (a Relu before a pool's Pad); the rest of that cluster then runs
  // in a kernel of its own or recomputes the epilogue.
  void add_linear_chains(size_t begin, size_t end, size_t part) {
    const ClusterGraph& clusters = out_.clusters;
    for (size_t c = begin; c < end; ++c) {
      if (!clusters.linear[c]) continue;
      const auto accepts = [&](const std::vector<size_t>& nodes) {
        const bool inside = std::all_of(nodes.begin(), nodes.end(), [&](size_t n) {
          return clusters.cluster_of[n] >= begin && clusters.cluster_of[n] < end;
        });
        return inside && rules_.linear_supported(graph_, make_group_(nodes));
      };
      const size_t anchor = clusters.members[c][0];
      std::vector<std::vector<size_t>> chains = chains_.prefixes(anchor, accepts);
      // With the Transpose computing the anchor's operand (a prologue), the
      // anchor alone and each chain again.
      if (std::optional<size_t> transpose = chains_.operand_transpose(anchor)) {
        std::vector<std::vector<size_t>> bases = {std::vector<size_t>{anchor}};
        bases.insert(bases.end(), chains.begin(), chains.end());
        for (std::vector<size_t>& with : bases) {
          with.push_back(*transpose);
          std::sort(with.begin(), with.end());
          if (accepts(with)) chains.push_back(std::move(with));
        }
      }
      for (std::vector<size_t>& chain : chains) add_linear(chain, part);
    }
  }

  // Each attention (MatMul ... softmax ... MatMul), and each Concat with
  // the Slices of its inputs, inside the part as one library kernel, beside
  // the kernels its nodes have otherwise.
  void add_library_sets(size_t begin, size_t end, size_t part) {
    const auto inside = [&](size_t n) {
      return out_.clusters.cluster_of[n] >= begin && out_.clusters.cluster_of[n] < end;
    };
    for (const std::vector<size_t>& nodes : library_sets_) {
      if (std::all_of(nodes.begin(), nodes.end(), inside)) out_.candidates.push_back({nodes, CandidateKind::Library, part});
    }
  }

  // A linear group, once per implementation.
  void add_linear(const std::vector<size_t>& nodes, size_t part) {
    out_.candidates.push_back({nodes, CandidateKind::Linear, part});
    if (!rules_.linear_variants) return;
    for (std::string& variant : rules_.linear_variants(graph_, make_group_(nodes))) {
      out_.candidates.push_back({nodes, CandidateKind::Linear, part, std::move(variant)});
    }
  }

  void add_generated(const std::vector<size_t>& cluster_set, size_t part) {
    std::vector<size_t> nodes;
    for (size_t c : cluster_set) {
      nodes.insert(nodes.end(), out_.clusters.members[c].begin(), out_.clusters.members[c].end());
    }
    std::sort(nodes.begin(), nodes.end());
    if (nodes.size() < 2 || !rules_.can_generate(graph_, make_group_(nodes))) return;
    out_.candidates.push_back({std::move(nodes), CandidateKind::Generated, part});
  }

  const Graph& graph_;
  const CandidateRules& rules_;
  const CandidateOptions& options_;
  const std::vector<std::vector<size_t>>& library_sets_;  // rules.library_sets
  const std::vector<std::pair<size_t, size_t>>& spans_;  // cluster ranges a part must not split
  CandidateSet& out_;
  runtime::GroupMaker make_group_;
  EpilogueChains chains_;
};

}  // namespace

CandidateSet enumerate_candidates(const Graph& graph, const CandidateRules& rules, const CandidateOptions& options,
                                  const std::vector<Alternative>& alternatives) {
  CandidateSet out;
  out.clusters = build_clusters(graph, rules.fusion);
  const std::vector<std::vector<size_t>> library_sets =
      rules.library_sets ? rules.library_sets(graph) : std::vector<std::vector<size_t>>{};
  std::vector<std::pair<size_t, size_t>> spans = node_set_spans(library_sets, out.clusters);
  for (const auto& span : prologue_spans(graph, out.clusters)) spans.push_back(span);
  const std::vector<std::pair<size_t, size_t>> kept_whole = alternative_spans(alternatives, out.clusters);
  spans.insert(spans.end(), kept_whole.begin(), kept_whole.end());
  const std::vector<bool> lossless = lossless_boundaries(out.clusters, spans);
  std::vector<ValueId> live;
  for (const Alternative& a : alternatives) live.push_back(a.derived);
  Enumerator enumerator(graph, rules, options, library_sets, live, kept_whole, out);
  size_t begin = 0;
  for (size_t b = 1; b <= out.clusters.size(); ++b) {
    if (b < out.clusters.size() && !lossless[b]) continue;
    enumerator.enumerate(begin, b, begin == 0 ? "start" : "lossless");
    begin = b;
  }
  return out;
}

}  // namespace orchid::orchestration
