// Derivation search: explorative BFS with fingerprint deduplication plus
// guided descents (search.h).
#include "derivation/search.h"

#include <chrono>
#include <deque>
#include <sstream>
#include <unordered_set>

#include "derivation/check.h"
#include "derivation/instantiate.h"
#include "derivation/iterator_table.h"
#include "ir/expr_fingerprint.h"
#include "ir/expr_utils.h"
#include "support/error.h"

namespace orchid::derivation {

namespace {

std::vector<const Rule*> rules_except(std::initializer_list<std::string_view> excluded) {
  std::vector<const Rule*> out;
  for (const Rule* rule : all_rules()) {
    bool skip = false;
    for (std::string_view name : excluded) skip = skip || rule->name() == name;
    if (!skip) out.push_back(rule);
  }
  return out;
}

std::vector<const Rule*> rules_named(std::initializer_list<std::string_view> names) {
  std::vector<const Rule*> out;
  for (std::string_view name : names) {
    if (const Rule* rule = find_rule(name)) out.push_back(rule);
  }
  return out;
}

// Steps guided descent takes even when the mismatch score stays: they never
// make a program worse (tightening drops zero work, inlining an index map
// drops a copy, a sum along an index's diagonal is shorter) and each shrinks
// the state, so descent terminates.
bool is_normalizing(const Step& step) {
  return step.rule == "tighten_loop" || step.rule == "tighten_sum" || step.rule == "inline_scope" ||
         step.rule == "sum_substitute";
}

struct Node {
  Expr state;
  std::vector<Step> steps;
  int depth = 0;
};

class Searcher {
 public:
  Searcher(Expr start, const Goal& goal, const SearchOptions& options)
      : start_(start), goal_(goal), options_(options), clock_start_(std::chrono::steady_clock::now()) {
    rules_ = options.rules.empty() ? explorative_rules() : options.rules;
  }

  SearchResult run() {
    add({start_, {}, 0});
    while (!queue_.empty() && result_.found.size() < options_.max_found) {
      if (out_of_budget()) {
        result_.stats.limit_reached = true;
        break;
      }
      Node node = std::move(queue_.front());
      queue_.pop_front();
      expand(node);
    }
    result_.stats.seconds = elapsed();
    return std::move(result_);
  }

 private:
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - clock_start_).count();
  }

  bool out_of_budget() const {
    return result_.stats.states >= options_.max_states || elapsed() > options_.time_limit_seconds;
  }

  void expand(const Node& node) {
    ++result_.stats.states;
    result_.stats.depth = std::max(result_.stats.depth, node.depth);
    if (options_.guided) descend(node);
    if (node.depth >= options_.max_depth) return;
    for (Successor& s : successors(node.state, rules_)) {
      check_step(node.state, s);
      Node child{s.state, node.steps, node.depth + 1};
      child.steps.push_back(std::move(s.step));
      add(std::move(child));
      if (elapsed() > options_.time_limit_seconds) return;
    }
  }

  // Guided derivation: greedily lower the mismatch score (else normalize:
  // tighten, inline), adding every state on the way at the same depth.
  void descend(const Node& from) {
    Node node = from;
    int score = mismatch_score(node.state);
    if (score == 0 && compute_scopes(node.state).empty()) return;
    for (int step = 0; step < options_.max_guided_steps; ++step) {
      std::optional<Successor> best;
      int best_score = score;
      for (Successor& s : successors(node.state, guided_rules())) {
        int sc = mismatch_score(s.state);
        bool better = sc < best_score || (!best && sc == score && is_normalizing(s.step));
        if (better) {
          best_score = sc;
          best = std::move(s);
        }
      }
      if (!best) return;
      check_step(node.state, *best);
      ++result_.stats.guided_steps;
      node.state = best->state;
      node.steps.push_back(best->step);
      score = best_score;
      if (!add(node)) return;  // already known: its own descent covers the rest
    }
  }

  void check_step(Expr before, const Successor& s) const {
    if (!options_.check_steps) return;
    std::string diff = check_equivalent(before, s.state);
    ORCHID_CHECK(diff.empty()) << "derivation step " << s.step.rule << " (" << s.step.detail
                               << ") is not exact: " << diff;
  }

  // A goal state with its boundaries tightened and index maps inlined as far
  // as the goal still holds: the form instantiation should see.
  Node normalized(Node node) const {
    static const std::vector<const Rule*> rules = rules_named({"tighten_loop", "tighten_sum", "inline_scope"});
    for (int step = 0; step < 32; ++step) {
      bool moved = false;
      for (Successor& s : successors(node.state, rules)) {
        if (!goal_(s.state)) continue;
        check_step(node.state, s);
        node.state = s.state;
        node.steps.push_back(std::move(s.step));
        moved = true;
        break;
      }
      if (!moved) break;
    }
    return node;
  }

  // Returns false when the state was already seen.
  bool add(Node node) {
    ++result_.stats.generated;
    uint64_t fp = expr::fingerprint(node.state);
    if (options_.fingerprint_dedup && !seen_.insert(fp).second) {
      ++result_.stats.dedup_hits;
      return false;
    }
    if (node.state != start_ && goal_(node.state) && found_.insert(fp).second) {
      Node final = normalized(node);
      Derivation d{final.state, final.steps, node.depth, result_.stats.states, elapsed()};
      result_.found.push_back(std::move(d));
    }
    queue_.push_back(std::move(node));
    return true;
  }

  Expr start_;
  const Goal& goal_;
  const SearchOptions& options_;
  std::vector<const Rule*> rules_;
  std::chrono::steady_clock::time_point clock_start_;
  std::deque<Node> queue_;
  std::unordered_set<uint64_t> seen_, found_;
  SearchResult result_;
};

}  // namespace

const std::vector<const Rule*>& explorative_rules() {
  static const std::vector<const Rule*> rules = rules_except({"reorder_loops", "merge_loops", "relax_sum"});
  return rules;
}

const std::vector<const Rule*>& guided_rules() {
  static const std::vector<const Rule*> rules =
      rules_named({"loop_substitute", "tighten_loop", "tighten_sum", "inline_scope", "relayout_input", "sum_substitute"});
  return rules;
}

int mismatch_score(Expr state) {
  int score = 0;
  for (const expr::ScopeNode* scope : compute_scopes(state)) {
    PatternMatch match = match_operator(*scope);
    if (match.op) continue;
    score += match.pattern_rows == 0 ? 8 : int(match.pattern_rows);
  }
  return score;
}

std::string SearchStats::to_string() const {
  std::ostringstream out;
  out << states << " states expanded, " << generated << " generated, " << dedup_hits << " deduplicated, "
      << guided_steps << " guided steps, depth " << depth << ", " << seconds << " s"
      << (limit_reached ? " (limit reached)" : "");
  return out.str();
}

std::string Derivation::to_string() const {
  std::ostringstream out;
  for (size_t i = 0; i < steps.size(); ++i) {
    out << (i ? " -> " : "") << steps[i].rule;
    if (!steps[i].detail.empty()) out << " (" << steps[i].detail << ")";
  }
  return out.str();
}

SearchResult search(Expr start, const Goal& goal, const SearchOptions& options) {
  return Searcher(start, goal, options).run();
}

}  // namespace orchid::derivation
