#include "orchestration/layout_model.h"

#include <algorithm>
#include <map>
#include <set>

namespace orchid::orchestration {

LayoutExtension add_native_layouts(BlpProblem& problem, const std::vector<bool>& native,
                                   const std::function<double(int)>& reorder_cost,
                                   const std::vector<bool>& must_be_row_major) {
  LayoutExtension extension{problem.kernels.size()};
  // The tensors a native kernel touches get a native twin.
  std::map<int, int> twin;
  for (size_t k = 0; k < problem.kernels.size(); ++k) {
    if (!native[k]) continue;
    for (const auto* list : {&problem.kernels[k].inputs, &problem.kernels[k].outputs}) {
      for (int t : *list) {
        if (!twin.count(t)) twin[t] = problem.num_tensors++;
      }
    }
  }
  for (size_t k = 0; k < problem.kernels.size(); ++k) {
    if (!native[k]) continue;
    for (auto* list : {&problem.kernels[k].inputs, &problem.kernels[k].outputs}) {
      for (int& t : *list) t = twin.at(t);
    }
  }
  const std::set<int> available(problem.available.begin(), problem.available.end());
  for (const auto& [row, nat] : twin) {
    const double cost = reorder_cost(row);
    if (available.count(row)) {
      problem.kernels.push_back({cost, {row}, {nat}});
      extension.reorder_tensors.push_back(row);
      extension.of_available.push_back(true);
      continue;
    }
    problem.kernels.push_back({cost, {nat}, {row}});
    problem.kernels.push_back({cost, {row}, {nat}});
    extension.reorder_tensors.insert(extension.reorder_tensors.end(), {row, row});
    extension.of_available.insert(extension.of_available.end(), {false, false});
  }
  // A tensor a later part reads: either form will do.
  std::vector<std::vector<size_t>> writers(size_t(problem.num_tensors));
  for (size_t k = 0; k < problem.kernels.size(); ++k) {
    for (int t : problem.kernels[k].outputs) writers[size_t(t)].push_back(k);
  }
  std::vector<int> required;
  for (int t : problem.required) {
    auto it = twin.find(t);
    if (it == twin.end() || (size_t(t) < must_be_row_major.size() && must_be_row_major[size_t(t)])) {
      required.push_back(t);
      continue;
    }
    std::vector<size_t> either = writers[size_t(t)];
    either.insert(either.end(), writers[size_t(it->second)].begin(), writers[size_t(it->second)].end());
    problem.cuts.push_back({{}, either});
  }
  problem.required = std::move(required);
  return extension;
}

}  // namespace orchid::orchestration
