#include "orchestration/layout_model.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>

namespace orchid::orchestration {

namespace {

// Every cut that names `original` also holds with `copy` in its place.
void extend_cuts(std::vector<BlpCut>& cuts, size_t original, size_t copy) {
  const size_t n = cuts.size();
  for (size_t c = 0; c < n; ++c) {
    BlpCut& cut = cuts[c];
    if (std::find(cut.one_of.begin(), cut.one_of.end(), original) != cut.one_of.end()) cut.one_of.push_back(copy);
    auto it = std::find(cut.all_of.begin(), cut.all_of.end(), original);
    if (it == cut.all_of.end()) continue;
    BlpCut with_copy = cut;
    with_copy.all_of[size_t(it - cut.all_of.begin())] = copy;
    cuts.push_back(std::move(with_copy));
  }
}

}  // namespace

std::optional<size_t> LayoutExtension::candidate_of(size_t k) const {
  if (k < real_kernels) return k;
  if (!is_native_copy(k)) return std::nullopt;
  return native_copy_of[k - real_kernels - reorder_tensors.size()];
}

bool LayoutExtension::is_relabeling(size_t k) const {
  if (!is_native_copy(k)) return false;
  const KernelLayout layout = native_copy_layout[k - real_kernels - reorder_tensors.size()];
  return layout == KernelLayout::RelabelToNative || layout == KernelLayout::RelabelFromNative;
}

bool LayoutExtension::writes_native_form(size_t k) const {
  return is_native_copy(k) &&
         native_copy_layout[k - real_kernels - reorder_tensors.size()] != KernelLayout::RelabelFromNative;
}

std::optional<int> LayoutExtension::row_major_form_made_by(size_t k, const BlpProblem& problem) const {
  if (k < real_kernels || is_native_copy(k)) return std::nullopt;
  const int row = reorder_tensors[k - real_kernels];
  const std::vector<int>& outputs = problem.kernels[k].outputs;
  return outputs.size() == 1 && outputs[0] == row ? std::optional<int>(row) : std::nullopt;
}

void start_available_in(BlpProblem& problem, const LayoutExtension& extension, size_t r, bool native) {
  BlpKernel& reorder = problem.kernels[extension.real_kernels + r];
  const int row = extension.reorder_tensors[r];
  const int nat = reorder.inputs[0] == row ? reorder.outputs[0] : reorder.inputs[0];
  const int from = native ? nat : row, to = native ? row : nat;
  reorder.inputs = {from};
  reorder.outputs = {to};
  std::replace(problem.available.begin(), problem.available.end(), to, from);
}

LayoutExtension add_native_layouts(BlpProblem& problem, const std::vector<KernelLayout>& layouts,
                                   const std::function<double(int)>& reorder_cost,
                                   const std::vector<bool>& must_be_row_major) {
  LayoutExtension extension{problem.kernels.size()};
  // The tensors a native (or either) kernel touches get a native twin; a
  // relabeling kernel's native side only.
  const auto native_sides = [&](size_t k) -> std::array<bool, 2> {  // {inputs, outputs}
    switch (layouts[k]) {
      case KernelLayout::RowMajor: return {false, false};
      case KernelLayout::RelabelToNative: return {false, true};
      case KernelLayout::RelabelFromNative: return {true, false};
      default: return {true, true};
    }
  };
  std::map<int, int> twin;
  for (size_t k = 0; k < problem.kernels.size(); ++k) {
    const std::array<bool, 2> sides = native_sides(k);
    const std::vector<int>* lists[] = {&problem.kernels[k].inputs, &problem.kernels[k].outputs};
    for (size_t side = 0; side < 2; ++side) {
      for (int t : sides[side] ? *lists[side] : std::vector<int>{}) {
        if (!twin.count(t)) twin[t] = problem.num_tensors++;
      }
    }
  }
  const auto native_form = [&](BlpKernel kernel, std::array<bool, 2> sides = {true, true}) {
    std::vector<int>* lists[] = {&kernel.inputs, &kernel.outputs};
    for (size_t side = 0; side < 2; ++side) {
      if (!sides[side]) continue;
      for (int& t : *lists[side]) t = twin.at(t);
    }
    return kernel;
  };
  for (size_t k = 0; k < extension.real_kernels; ++k) {
    if (layouts[k] == KernelLayout::Native) problem.kernels[k] = native_form(problem.kernels[k]);
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
  for (size_t k = 0; k < extension.real_kernels; ++k) {
    const bool relabel = layouts[k] == KernelLayout::RelabelToNative || layouts[k] == KernelLayout::RelabelFromNative;
    if (layouts[k] != KernelLayout::Either && !relabel) continue;
    problem.kernels.push_back(native_form(problem.kernels[k], native_sides(k)));
    if (relabel) problem.kernels.back().cost = kRelabelSeconds;
    extension.native_copy_of.push_back(k);
    extension.native_copy_layout.push_back(layouts[k]);
    extend_cuts(problem.cuts, k, problem.kernels.size() - 1);
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
