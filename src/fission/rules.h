// Fission rules: for one operator, emit primitives computing its outputs.
// A rule receives the node (inputs already mapped into the new graph) and
// returns one value per node output (kNoValue for an unused optional one).
// Rules may emit non-primitive operators; fission rewrites those in turn.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fission/builder.h"

namespace orchid::fission {

using FissionRule = std::function<std::vector<ValueId>(const Node& node, FissionBuilder& b)>;

class FissionRuleTable {
 public:
  void add(const std::string& op, FissionRule rule);
  const FissionRule* find(const std::string& op) const;

 private:
  std::map<std::string, FissionRule> rules_;
};

// The table with every family registered.
const FissionRuleTable& fission_rules();

// One function per family file.
void add_shape_rules(FissionRuleTable& table);          // Identity, Dropout, Squeeze, Unsqueeze, Flatten, Split, Tile, DepthToSpace, SpaceToDepth, Pad modes
void add_elementwise_rules(FissionRuleTable& table);    // Clip, activations (HardSwish, Gelu, Mish, ...), PRelu, Sum/Mean, ...
void add_reduce_rules(FissionRuleTable& table);         // ReduceMean, ReduceL1/L2, LogSum(Exp), SumSquare
void add_normalization_rules(FissionRuleTable& table);  // Softmax family, LayerNorm, BatchNorm, InstanceNorm, GroupNorm, LRN, ...
void add_linear_rules(FissionRuleTable& table);         // Gemm, Einsum
void add_pool_rules(FissionRuleTable& table);           // MaxPool, AveragePool, GlobalX, LpPool
void add_resize_rules(FissionRuleTable& table);         // Resize as index maps
void add_sequence_rules(FissionRuleTable& table);       // RNN, GRU, LSTM unrolled
void add_loss_rules(FissionRuleTable& table);           // NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
void add_signal_rules(FissionRuleTable& table);         // DFT, STFT, EyeLike, MelWeightMatrix

}  // namespace orchid::fission
