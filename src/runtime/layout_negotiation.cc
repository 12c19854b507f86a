#include "runtime/layout_negotiation.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace orchid::runtime {

namespace {

struct Use {
  size_t kernel;
  size_t slot;  // its input or output
};

class Negotiation {
 public:
  Negotiation(const Program& program, const std::vector<std::unique_ptr<Kernel>>& kernels)
      : graph_(program.graph),
        program_(program),
        kernels_(kernels),
        readers_(graph_.num_values()),
        producer_(graph_.num_values()),
        graph_output_(graph_.num_values(), false),
        native_(graph_.num_values(), false),
        decided_(graph_.num_values(), false) {
    for (size_t k = 0; k < program.kernels.size(); ++k) {
      const KernelGroup& group = program.kernels[k];
      for (size_t i = 0; i < group.inputs.size(); ++i) readers_[size_t(group.inputs[i])].push_back({k, i});
      for (size_t o = 0; o < group.outputs.size(); ++o) producer_[size_t(group.outputs[o])] = Use{k, o};
    }
    for (ValueId id : graph_.outputs()) graph_output_[size_t(id)] = true;
  }

  NegotiatedLayouts run() {
    NegotiatedLayouts result{std::vector<size_t>(graph_.num_values(), 0)};
    for (size_t k = 0; k < program_.kernels.size(); ++k) {
      const auto& outputs = program_.kernels[k].outputs;
      for (size_t o = 0; o < outputs.size(); ++o) {
        const ValueId id = outputs[o];
        if (std::optional<NativeLayout> layout = negotiate(k, o)) {
          native_[size_t(id)] = true;
          result.bytes[size_t(id)] = layout->bytes;
          ++result.native;
        }
        decided_[size_t(id)] = true;
      }
    }
    return result;
  }

 private:
  // Output o of kernel k: the layout it now lives in, if not row-major.
  std::optional<NativeLayout> negotiate(size_t k, size_t o) {
    const ValueId id = program_.kernels[k].outputs[o];
    if (graph_output_[size_t(id)] || readers_[size_t(id)].empty()) return std::nullopt;
    std::optional<NativeLayout> layout = kernels_[k]->native_output_layout(o);
    if (layout && all_take(id, *layout)) {
      kernels_[k]->use_native_output(o);
    } else if ((layout = layout_a_reader_computes_in(id)) && kernels_[k]->can_write_output_as(o, *layout) &&
               all_take(id, *layout)) {
      kernels_[k]->write_output_as(o, *layout);
    } else {
      return std::nullopt;
    }
    for (const Use& r : readers_[size_t(id)]) kernels_[r.kernel]->read_input_as(r.slot, *layout);
    return layout;
  }

  bool all_take(ValueId id, const NativeLayout& layout) const {
    return std::all_of(readers_[size_t(id)].begin(), readers_[size_t(id)].end(), [&](const Use& r) {
      return kernels_[r.kernel]->can_read_input_as(r.slot, layout) &&
             (!kernels_[r.kernel]->adapts_to_neighbours() || worth_adapting(r.kernel, layout));
    });
  }

  // The first layout a reader of `id` computes it in.
  std::optional<NativeLayout> layout_a_reader_computes_in(ValueId id) const {
    for (const Use& r : readers_[size_t(id)]) {
      if (std::optional<NativeLayout> layout = kernels_[r.kernel]->native_input_layout(r.slot)) return layout;
    }
    return std::nullopt;
  }

  // Whether kernel k, computing in `layout`, would find more of its
  // operands (constants and single elements aside) native at their other
  // end than row-major. An input not negotiated yet counts as native when
  // its producer could offer a layout, or adapts too.
  bool worth_adapting(size_t k, const NativeLayout& layout) const {
    int native = 0, row_major = 0;
    for (ValueId id : program_.kernels[k].inputs) {
      const Value& value = graph_.value(id);
      if (value.is_constant() || graph_.type(id).numel() == 1) continue;
      const std::optional<Use> p = producer_[size_t(id)];
      const bool offered = native_[size_t(id)] || (!decided_[size_t(id)] && p && (kernels_[p->kernel]->adapts_to_neighbours() ||
                                 kernels_[p->kernel]->native_output_layout(p->slot) ||
                                 kernels_[p->kernel]->can_write_output_as(p->slot, layout)));
      (offered ? native : row_major) += 1;
    }
    for (ValueId id : program_.kernels[k].outputs) {
      const bool taken = !graph_output_[size_t(id)] && !readers_[size_t(id)].empty() &&
                         std::all_of(readers_[size_t(id)].begin(), readers_[size_t(id)].end(), [&](const Use& r) {
                           return kernels_[r.kernel]->can_read_input_as(r.slot, layout);
                         });
      (taken ? native : row_major) += 1;
    }
    return native > row_major;
  }

  const Graph& graph_;
  const Program& program_;
  const std::vector<std::unique_ptr<Kernel>>& kernels_;
  std::vector<std::vector<Use>> readers_;      // per value
  std::vector<std::optional<Use>> producer_;   // per value: the kernel output that writes it
  std::vector<bool> graph_output_;             // per value
  std::vector<bool> native_;                   // per value: negotiated into a native layout
  std::vector<bool> decided_;                  // per value: negotiated, either way
};

}  // namespace

NegotiatedLayouts negotiate_layouts(const Program& program, const std::vector<std::unique_ptr<Kernel>>& kernels) {
  return Negotiation(program, kernels).run();
}

}  // namespace orchid::runtime
