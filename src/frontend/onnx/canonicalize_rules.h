// The rule families of canonicalize.cc, one file each.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "frontend/onnx/canonicalize.h"

namespace orchid::onnx_frontend {

class RuleTable {
 public:
  void add(const std::string& op, CanonicalizeRule rule);
  const std::map<std::string, std::vector<CanonicalizeRule>>& rules() const { return rules_; }

 private:
  std::map<std::string, std::vector<CanonicalizeRule>> rules_;
};

void add_layout_rules(RuleTable& table);  // Reshape, Concat, Squeeze, Unsqueeze, Split, Slice, Pad
void add_reduce_rules(RuleTable& table);  // ReduceX axes, TopK k
void add_math_rules(RuleTable& table);    // Clip, Softmax family, Dropout, GroupNormalization, PRelu, DFT, legacy attributes
void add_resize_rules(RuleTable& table);  // Upsample, Resize (opset 10)

}  // namespace orchid::onnx_frontend
