#include "fission/fission.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "fission/activations_before_layout.h"
#include "fission/channels_last_sum.h"
#include "fission/fold_batchnorm.h"
#include "fission/pointwise_conv.h"
#include "fission/primitive.h"
#include "fission/rules.h"
#include "fission/token_images.h"
#include "ir/graph_utils.h"
#include "support/error.h"

namespace orchid::fission {

void FissionRuleTable::add(const std::string& op, FissionRule rule) {
  ORCHID_CHECK(!rules_.count(op)) << "two fission rules for " << op;
  rules_[op] = std::move(rule);
}

const FissionRule* FissionRuleTable::find(const std::string& op) const {
  auto it = rules_.find(op);
  return it == rules_.end() ? nullptr : &it->second;
}

const FissionRuleTable& fission_rules() {
  static const FissionRuleTable table = [] {
    FissionRuleTable t;
    add_shape_rules(t);
    add_elementwise_rules(t);
    add_reduce_rules(t);
    add_normalization_rules(t);
    add_linear_rules(t);
    add_pool_rules(t);
    add_resize_rules(t);
    add_sequence_rules(t);
    add_loss_rules(t);
    add_signal_rules(t);
    return t;
  }();
  return table;
}

namespace {

// Every operator that is neither a primitive nor has a rule, at once.
void check_rules_exist(const Graph& graph) {
  std::map<std::string, std::vector<std::string>> missing;
  for (const Node& node : graph.nodes()) {
    if (primitive_kind(node, graph) || fission_rules().find(node.op)) continue;
    missing[node.op].push_back(node.name);
  }
  if (missing.empty()) return;
  std::ostringstream message;
  message << "no fission rule for";
  for (const auto& [op, nodes] : missing) message << " " << op << " (node '" << nodes[0] << "'" << (nodes.size() > 1 ? ", ..." : "") << ")";
  throw Error(message.str());
}

// One pass: primitives are copied, every other node is rewritten by its rule.
// Returns whether anything was rewritten.
bool rewrite_once(const Graph& graph, Graph& out) {
  out = graph;
  out.nodes().clear();
  std::vector<ValueId> remap(graph.num_values());
  for (size_t i = 0; i < remap.size(); ++i) remap[i] = ValueId(i);
  auto mapped = [&](ValueId id) { return id == kNoValue ? kNoValue : remap[size_t(id)]; };
  bool changed = false;
  for (const Node& original : graph.nodes()) {
    Node node = original;
    for (ValueId& id : node.inputs) id = mapped(id);
    if (primitive_kind(node, out)) {
      out.add_node(std::move(node));
      continue;
    }
    const FissionRule* rule = fission_rules().find(node.op);
    ORCHID_CHECK(rule) << node.describe() << " has no fission rule";
    FissionBuilder builder(out, node);
    std::vector<ValueId> results = (*rule)(node, builder);
    ORCHID_CHECK(results.size() >= node.outputs.size()) << node.describe() << ": fission rule returned "
                                                        << results.size() << " outputs";
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] == kNoValue) continue;
      ORCHID_CHECK(results[i] != kNoValue) << node.describe() << ": fission rule dropped used output " << i;
      ORCHID_CHECK(out.type(results[i]) == graph.type(node.outputs[i]))
          << node.describe() << ": fission rule changed output " << i << " from "
          << graph.type(node.outputs[i]).to_string() << " to " << out.type(results[i]).to_string();
      remap[size_t(node.outputs[i])] = results[i];
    }
    changed = true;
  }
  for (ValueId& id : out.outputs()) id = mapped(id);
  keep_output_names(graph, out);
  return changed;
}

}  // namespace

Graph fission(const Graph& graph) {
  check_rules_exist(graph);
  // BatchNorm after Conv becomes the Conv's weights and bias before anything
  // else sees it; what remains of BatchNorm is fissioned like any operator.
  // A pointwise Conv over a Concat of upsampled maps then runs before the
  // upsampling, and takes in a linear map that feeds it (pointwise_conv.h);
  // sums of token maps made images run channels-last (channels_last_sum.h),
  // and a pointwise Conv reading such a sum takes it channels-last. Other
  // token maps made images, and images made token maps, transpose between
  // channels-last and channels-first images (token_images.h), and a conv's
  // activation laid out after it moves to the conv (activations_before_layout.h).
  Graph current = fold_batchnorm_into_conv(graph);
  current = fold_linear_into_pointwise_conv(conv_before_upsampling(current));
  current = pointwise_conv_channels_last(sum_token_maps_channels_last(current));
  current = activations_before_layout(token_maps_as_images(current));
  // Rules may emit operators that other rules rewrite (Mean -> ReduceMean ->
  // ReduceSum); a few passes reach primitives.
  for (int pass = 0; pass < 8; ++pass) {
    Graph next;
    if (!rewrite_once(current, next)) return remove_unused_values(current);
    current = std::move(next);
  }
  ORCHID_CHECK(false) << "fission did not reach primitives after 8 passes";
  return current;
}

}  // namespace orchid::fission
