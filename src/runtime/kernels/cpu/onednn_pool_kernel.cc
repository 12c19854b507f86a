// Max and average pooling as one oneDNN pooling primitive. Fission turns
// MaxPool into a Pad with -inf and strided Slices folded with Max, and
// AveragePool into a Pad with 0, Slices summed with Add and a Div by a
// constant of window sizes (fission/pool_rules.cc). As generated code those
// chains recompute every window from its taps (a 13x13 SPP pool: 169 loads
// per output) and read row-major only. This file recognizes such chains in
// the primitive graph, whatever their order of taps, as a window of taps
// over one tensor, and runs that window as oneDNN's pooling, which computes
// in the layout its input arrives in (row-major, channels-last or blocked),
// so a pool between convolutions keeps their native layout.
//
// Recognition is by what the nodes compute, not by their names: every value
// of the chain is a set of taps, each a strided view of the padded tensor
// (slice_view); Max unites its inputs' taps, Add sums them (each tap once).
// The chain is a pool when the taps of its output are a box of per-axis
// offsets in arithmetic progression (kernel and dilation) with one step per
// axis (stride), the padding read is the Pad's -inf for a max (oneDNN's max
// excludes padding, which is the same) or 0 for a sum, and an average's
// divisors are exactly those of one of oneDNN's two averages (taps inside
// the input: count_include_pad 0; the whole window: 1 without ceil_mode's
// extension).
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "ir/graph_utils.h"
#include "reference/ops/op_utils.h"
#include "runtime/kernels/cpu/layout_strided_copy.h"
#include "runtime/kernels/cpu/onednn_common.h"
#include "runtime/kernels/cpu/registry.h"
#include "support/error.h"

namespace orchid::runtime::cpu {

namespace {

using dnnl::memory;

// A pool over group input `source` (before its padding), in oneDNN's terms.
struct PoolGeometry {
  size_t source = 0;  // group input slot
  dnnl::algorithm algorithm = dnnl::algorithm::pooling_max;
  // dilation: oneDNN's (taps' distance - 1)
  memory::dims src, dst, kernel, strides, dilation, pad_l, pad_r;
};

// A tap: the output as a strided view (element offset, per-axis strides) of the
// padded tensor; Taps: each with the number of times it is summed (1 for a max).
using Tap = std::pair<int64_t, std::vector<int64_t>>;
using Taps = std::map<Tap, int64_t>;

// The per-axis begin pads of a constant-mode Pad whose value is `fill` (-inf
// for a max, 0 for a sum), when all are constant and none crops.
std::optional<std::vector<int64_t>> begin_pads(const Graph& graph, const Node& pad, double fill) {
  const std::optional<ConstantPads> pads = constant_pads(graph, pad);
  if (!pads) return std::nullopt;
  if (pads->value && pads->value->numel() != 1) return std::nullopt;
  if ((pads->value ? pads->value->at_f64(0) : 0.0) != fill) return std::nullopt;
  for (size_t d = 0; d < pads->begin.size(); ++d) {
    if (pads->begin[d] < 0 || pads->end[d] < 0) return std::nullopt;
  }
  return pads->begin;
}

// The taps of every value of a group of Slices, at most one Pad, and Max (or
// Add) nodes combining taps, relative to one tensor: the Pad's output, or
// else the group's one runtime input.
class TapAnalysis {
 public:
  TapAnalysis(const Graph& graph, const KernelGroup& group, std::string combine)
      : graph_(graph), combine_(std::move(combine)) {
    for (size_t index : group.nodes) {
      for (ValueId id : graph.nodes()[index].outputs) producer_[id] = index;
    }
  }

  std::optional<Taps> taps(ValueId id) {
    if (auto it = memo_.find(id); it != memo_.end()) return it->second;
    std::optional<Taps> result = compute(id);
    memo_[id] = result;
    return result;
  }

  std::optional<ValueId> base() const { return base_; }
  const Node* pad() const { return pad_; }
  size_t visited() const { return visited_.size(); }

 private:
  std::optional<Taps> compute(ValueId id) {
    auto it = producer_.find(id);
    if (it == producer_.end()) return as_base(id, nullptr);
    const Node& node = graph_.nodes()[it->second];
    visited_.insert(it->second);
    if (!node.domain.empty() || node.outputs.size() != 1) return std::nullopt;
    if (node.op == "Pad") return as_base(id, &node);
    if (node.op == "Slice") {
      std::optional<Taps> in = taps(node.inputs[0]);
      if (!in) return std::nullopt;
      Taps out;
      for (const auto& [tap, times] : *in) {
        std::optional<StridedView> view = slice_view(graph_, node, StridedView{tap.second, tap.first});
        if (!view || std::any_of(view->strides.begin(), view->strides.end(), [](int64_t s) { return s <= 0; })) {
          return std::nullopt;
        }
        out[{view->base, view->strides}] += times;
      }
      return out;
    }
    if (node.op == combine_) {  // a max of taps is a set; a sum counts each
      Taps out;
      for (ValueId input : node.inputs) {
        if (input == kNoValue || graph_.type(input).shape != graph_.type(id).shape) return std::nullopt;
        std::optional<Taps> in = taps(input);
        if (!in) return std::nullopt;
        for (const auto& [tap, times] : *in) out[tap] = combine_ == "Max" ? 1 : out[tap] + times;
      }
      return out;
    }
    return std::nullopt;
  }

  // The tensor every tap is a view of: one only.
  std::optional<Taps> as_base(ValueId id, const Node* pad) {
    if (base_ && *base_ != id) return std::nullopt;
    if (!pad && graph_.value(id).is_constant()) return std::nullopt;
    base_ = id;
    pad_ = pad;
    return Taps{{{0, shape_strides(graph_.type(id).shape)}, 1}};
  }

  const Graph& graph_;
  std::string combine_;
  std::unordered_map<ValueId, size_t> producer_;
  std::unordered_map<ValueId, std::optional<Taps>> memo_;
  std::set<size_t> visited_;
  std::optional<ValueId> base_;
  const Node* pad_ = nullptr;
};

// Per spatial axis of a box of taps: the first offset, the number of taps
// and their distance; nullopt when the offsets are not an arithmetic
// progression.
struct AxisTaps {
  int64_t first = 0, count = 1, distance = 1, step = 1;
};

std::optional<std::vector<AxisTaps>> box_of(const Taps& taps, const Shape& base) {
  const std::vector<int64_t> strides = shape_strides(base);
  const size_t rank = base.size();
  std::vector<std::set<int64_t>> offsets(rank);
  std::vector<AxisTaps> axes(rank);
  bool first = true;
  for (const auto& [tap, times] : taps) {
    const auto& [offset, view] = tap;
    if (times != 1) return std::nullopt;  // a tap summed twice
    int64_t rest = offset;
    for (size_t a = 0; a < rank; ++a) {
      if (strides[a] == 0 || view[a] % strides[a] != 0) return std::nullopt;
      const int64_t step = view[a] / strides[a];
      if (first) axes[a].step = step;
      if (axes[a].step != step) return std::nullopt;
      offsets[a].insert(rest / strides[a]);
      rest %= strides[a];
    }
    first = false;
  }
  size_t box = 1;
  for (size_t a = 0; a < rank; ++a) {
    const std::vector<int64_t> o(offsets[a].begin(), offsets[a].end());
    axes[a].first = o[0];
    axes[a].count = int64_t(o.size());
    axes[a].distance = o.size() > 1 ? o[1] - o[0] : 1;
    for (size_t i = 1; i < o.size(); ++i) {
      if (o[i] - o[i - 1] != axes[a].distance) return std::nullopt;
    }
    box *= o.size();
  }
  if (box != taps.size()) return std::nullopt;
  return axes;
}

// The window of taps `taps` (of `base`, the Pad's output when `pad`) as a
// pool over the spatial axes (2 to 4: 1-D to 3-D pools) of group input
// `source`, the batch and channel axes untouched; `fill`: the Pad's value.
std::optional<PoolGeometry> window_of(const Graph& graph, const KernelGroup& group, const Taps& taps, ValueId base,
                                      const Node* pad, double fill, const Shape& out) {
  const ValueId source = pad ? pad->inputs[0] : base;
  if (std::find(group.inputs.begin(), group.inputs.end(), source) == group.inputs.end()) return std::nullopt;
  const Shape& in = graph.type(source).shape;
  std::optional<std::vector<AxisTaps>> box = box_of(taps, graph.type(base).shape);
  if (!box) return std::nullopt;
  const size_t rank = in.size();
  std::vector<int64_t> pad_begin(rank, 0);
  if (pad) {
    std::optional<std::vector<int64_t>> pads = begin_pads(graph, *pad, fill);
    if (!pads) return std::nullopt;
    pad_begin = *pads;
  }
  PoolGeometry g;
  g.source = input_slot(group, source);
  g.src.assign(in.begin(), in.end());
  g.dst.assign(out.begin(), out.end());
  bool pools = false;
  for (size_t a = 0; a < rank; ++a) {
    const AxisTaps& t = (*box)[a];
    if (a < 2) {  // batch and channels: every element once, unpadded
      if (t.count != 1 || t.step != 1 || t.first != 0 || pad_begin[a] != 0 || out[a] != in[a]) return std::nullopt;
      continue;
    }
    pools = pools || t.count > 1 || t.step > 1;
    const int64_t pad_l = pad_begin[a] - t.first;
    const int64_t extent = (t.count - 1) * t.distance + 1;
    int64_t pad_r = (out[a] - 1) * t.step + extent - in[a] - pad_l;
    if (pad_l < 0) return std::nullopt;  // the window starts inside the input: a crop
    // The last window ends before the input does: oneDNN's floor gives the same size.
    if (pad_r < 0) {
      if (pad_r + t.step - 1 < 0) return std::nullopt;
      pad_r = 0;
    }
    g.kernel.push_back(t.count);
    g.strides.push_back(t.step);
    g.dilation.push_back(t.count > 1 ? t.distance - 1 : 0);
    g.pad_l.push_back(pad_l);
    g.pad_r.push_back(pad_r);
  }
  if (!pools) return std::nullopt;
  return g;
}

// Per spatial axis and output position: the window's taps inside the input.
std::vector<std::vector<int64_t>> taps_inside(const PoolGeometry& g) {
  std::vector<std::vector<int64_t>> per_axis(g.kernel.size());
  for (size_t j = 0; j < g.kernel.size(); ++j) {
    for (int64_t pos = 0; pos < g.dst[j + 2]; ++pos) {
      int64_t inside = 0;
      for (int64_t k = 0; k < g.kernel[j]; ++k) {
        const int64_t x = pos * g.strides[j] - g.pad_l[j] + k * (g.dilation[j] + 1);
        inside += x >= 0 && x < g.src[j + 2];
      }
      per_axis[j].push_back(inside);
    }
  }
  return per_axis;
}

// The divisor oneDNN's average of `algorithm` uses at every output position
// (row-major over the spatial axes): the taps inside the input, or the whole
// window with the padding.
std::vector<double> average_divisors(const PoolGeometry& g, dnnl::algorithm algorithm) {
  const size_t n = g.kernel.size();
  std::vector<std::vector<int64_t>> per_axis = taps_inside(g);
  if (algorithm == dnnl::algorithm::pooling_avg_include_padding) {
    for (size_t j = 0; j < n; ++j) std::fill(per_axis[j].begin(), per_axis[j].end(), g.kernel[j]);
  }
  std::vector<double> divisors = {1.0};
  for (size_t j = 0; j < n; ++j) {
    std::vector<double> next;
    for (double d : divisors) {
      for (int64_t c : per_axis[j]) next.push_back(d * double(c));
    }
    divisors = std::move(next);
  }
  return divisors;
}

// The group as a float32 pool: a max of taps (fission's MaxPool), or a sum
// of taps divided by a constant that one of oneDNN's averages divides by
// (fission's AveragePool, count_include_pad 0 or 1).
std::optional<PoolGeometry> pool_geometry(const Graph& graph, const KernelGroup& group) {
  if (group.outputs.size() != 1 || group.nodes.empty()) return std::nullopt;
  const TensorType& out = graph.type(group.outputs[0]);
  if (out.dtype != DType::Float32 || out.rank() < 3 || out.rank() > 5) return std::nullopt;
  const Node* root = nullptr;
  for (size_t index : group.nodes) {
    const Node& node = graph.nodes()[index];
    if (node.outputs.size() == 1 && node.outputs[0] == group.outputs[0]) root = &node;
  }
  if (!root || !root->domain.empty()) return std::nullopt;
  const bool average = root->op == "Div";
  const Tensor* divisor = average ? constant_input(graph, *root, 1) : nullptr;
  if (average && (!divisor || divisor->dtype() != DType::Float32)) return std::nullopt;
  TapAnalysis analysis(graph, group, average ? "Add" : "Max");
  std::optional<Taps> taps = analysis.taps(average ? root->inputs[0] : group.outputs[0]);
  if (!taps || !analysis.base() || analysis.visited() + (average ? 1 : 0) != group.nodes.size()) return std::nullopt;
  const double fill = average ? 0.0 : -std::numeric_limits<double>::infinity();
  std::optional<PoolGeometry> g = window_of(graph, group, *taps, *analysis.base(), analysis.pad(), fill, out.shape);
  if (!g) return g;
  if (!average) {
    // A window of padding alone is -inf in the graph; oneDNN's max leaves
    // the lowest float there (and may take a slow path). Such windows come
    // from per-axis stages, whose other axes' padding is still in the tensor.
    for (const std::vector<int64_t>& inside : taps_inside(*g)) {
      if (std::find(inside.begin(), inside.end(), 0) != inside.end()) return std::nullopt;
    }
    return g;
  }
  // The divisor: one per output position, broadcast over batch and channels.
  const Shape& shape = divisor->shape();
  if (shape.size() != out.rank() || shape[0] != 1 || shape[1] != 1 ||
      !std::equal(shape.begin() + 2, shape.end(), out.shape.begin() + 2)) {
    return std::nullopt;
  }
  for (dnnl::algorithm algorithm :
       {dnnl::algorithm::pooling_avg_exclude_padding, dnnl::algorithm::pooling_avg_include_padding}) {
    const std::vector<double> want = average_divisors(*g, algorithm);
    bool same = true;
    for (size_t i = 0; i < want.size() && same; ++i) same = divisor->at_f64(int64_t(i)) == want[i];
    if (same) {
      g->algorithm = algorithm;
      return g;
    }
  }
  return std::nullopt;
}

// oneDNN's pooling of `geometry` reading `src`, writing `dst` (format any:
// the layout it picks).
std::optional<dnnl::pooling_v2_forward::primitive_desc> pool_pd(const PoolGeometry& g, const memory::desc& src,
                                                                const memory::desc& dst) {
  try {
    const dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, g.algorithm, src, dst, g.strides,
                                              g.kernel, g.dilation, g.pad_l, g.pad_r);
    return dnnl::pooling_v2_forward::primitive_desc(desc, onednn::cpu_engine());
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

memory::desc any_f32(const memory::dims& dims) {
  return memory::desc(dims, memory::data_type::f32, memory::format_tag::any);
}

class OneDnnPoolKernel : public Kernel {
 public:
  OneDnnPoolKernel(PoolGeometry geometry, dnnl::pooling_v2_forward::primitive_desc pd)
      : g_(std::move(geometry)), stream_(onednn::cpu_engine()) {
    use(std::move(pd));
  }

  void run(const KernelArgs& args) override {
    args_[DNNL_ARG_SRC].set_data_handle(const_cast<void*>(args.inputs[g_.source]));
    void* dst = convert_output_ ? scratch_.data() : args.outputs[0];
    args_[DNNL_ARG_DST].set_data_handle(dst);
    primitive_.execute(stream_, args_);
    stream_.wait();
    if (convert_output_) run_strided_copy(*convert_output_, sizeof(float), scratch_.data(), args.outputs[0]);
  }

  std::string implementation() const override {
    std::string layout = !native_input_ ? "" : convert_output_ ? ", from a native layout" : ", in a native layout";
    return std::string("onednn pool (") + pd_.impl_info_str() + layout + ")";
  }

  bool reads_input_at_run(size_t input) const override { return input == g_.source; }

  // Any oneDNN layout of the source whose pooled output oneDNN writes in a
  // layout the strided copies can turn row-major (for a row-major reader).
  bool can_read_input_as(size_t input, const NativeLayout& layout) const override {
    if (input != g_.source || layout.kind != onednn::kOneDnnLayout) return false;
    const memory::desc& md = onednn::layout_desc(layout);
    if (md.dims() != g_.src) return false;
    std::optional<dnnl::pooling_v2_forward::primitive_desc> pd = pool_pd(g_, md, any_f32(g_.dst));
    return pd && onednn::layout_copy(pd->dst_desc(), onednn::plain_f32(g_.dst)).has_value();
  }

  // The pool then writes the layout oneDNN picks for that source, converted
  // to row-major unless every reader takes it (use_native_output).
  void read_input_as(size_t input, const NativeLayout& layout) override {
    ORCHID_CHECK(can_read_input_as(input, layout)) << "input " << input << " cannot take the layout";
    use(*pool_pd(g_, onednn::layout_desc(layout), any_f32(g_.dst)));
    native_input_ = true;
    const memory::desc plain = onednn::plain_f32(g_.dst);
    if (pd_.dst_desc() != plain) {
      convert_output_ = onednn::layout_copy(pd_.dst_desc(), plain);
      scratch_.assign(pd_.dst_desc().get_size() / sizeof(float), 0.f);
    }
  }

  std::optional<NativeLayout> native_output_layout(size_t output) const override {
    if (output != 0 || !convert_output_) return std::nullopt;
    return onednn::native_layout(pd_.dst_desc());
  }

  void use_native_output(size_t output) override {
    ORCHID_CHECK(output == 0 && convert_output_) << "no native layout for output " << output;
    convert_output_.reset();
    scratch_.clear();
  }

 private:
  void use(dnnl::pooling_v2_forward::primitive_desc pd) {
    pd_ = std::move(pd);
    primitive_ = dnnl::pooling_v2_forward(pd_);
    args_.clear();
    args_[DNNL_ARG_SRC] = memory(pd_.src_desc(), onednn::cpu_engine(), DNNL_MEMORY_NONE);
    args_[DNNL_ARG_DST] = memory(pd_.dst_desc(), onednn::cpu_engine(), DNNL_MEMORY_NONE);
  }

  PoolGeometry g_;
  dnnl::stream stream_;
  dnnl::pooling_v2_forward::primitive_desc pd_;
  dnnl::primitive primitive_;
  std::unordered_map<int, memory> args_;
  bool native_input_ = false;
  std::optional<StridedCopy> convert_output_;  // native result -> row-major output
  std::vector<float> scratch_;
};

// The `combine` (Max or Add), Slice and Pad nodes a walk back from node
// `root` reaches, stopping at other nodes' values and, with `stops`, at the
// outputs of the nodes in it.
std::vector<size_t> pool_chain(const Graph& graph, const std::vector<size_t>& producers, size_t root,
                               const std::string& combine, const std::set<size_t>& stops) {
  std::vector<size_t> nodes;
  std::vector<size_t> frontier = {root};
  std::set<size_t> seen = {root};
  while (!frontier.empty()) {
    const size_t index = frontier.back();
    frontier.pop_back();
    nodes.push_back(index);
    const Node& node = graph.nodes()[index];
    if (node.op == "Pad") continue;  // the chain's start
    for (ValueId id : node.inputs) {
      const size_t p = id == kNoValue ? kNoNode : producers[size_t(id)];
      if (p == kNoNode || seen.count(p) || stops.count(p)) continue;
      const Node& producer = graph.nodes()[p];
      if (!producer.domain.empty() || (producer.op != combine && producer.op != "Slice" && producer.op != "Pad")) {
        continue;
      }
      seen.insert(p);
      frontier.push_back(p);
    }
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

}  // namespace

std::vector<std::vector<size_t>> find_pools(const Graph& graph, const std::vector<size_t>& producers) {
  // Roots: the last fold of a window (a Max no Max reads), Slices of one
  // that no Max or Slice reads (a window's strides taken last), and the Div
  // of a sum of taps (an average).
  const size_t count = graph.nodes().size();
  const auto is = [&](size_t n, const char* op) {
    const Node& node = graph.nodes()[n];
    return node.op == op && node.domain.empty() && node.outputs.size() == 1;
  };
  const auto producer = [&](ValueId id) { return id == kNoValue ? kNoNode : producers[size_t(id)]; };
  std::vector<bool> read_by_max(count, false), read_by_chain(count, false);
  for (size_t n = 0; n < count; ++n) {
    if (!is(n, "Max") && !is(n, "Slice")) continue;
    for (ValueId id : graph.nodes()[n].inputs) {
      if (const size_t p = producer(id); p != kNoNode) {
        read_by_chain[p] = true;
        read_by_max[p] = read_by_max[p] || is(n, "Max");
      }
    }
  }
  std::set<size_t> roots, folds;
  for (size_t n = 0; n < count; ++n) {
    if (is(n, "Max") && !read_by_max[n]) roots.insert(n), folds.insert(n);
    size_t p = is(n, "Slice") && !read_by_chain[n] ? producer(graph.nodes()[n].inputs[0]) : kNoNode;
    while (p != kNoNode && is(p, "Slice")) p = producer(graph.nodes()[p].inputs[0]);
    if (p != kNoNode && is(p, "Max")) roots.insert(n);
    const size_t sum = is(n, "Div") ? producer(graph.nodes()[n].inputs[0]) : kNoNode;
    if (sum != kNoNode && is(sum, "Add")) roots.insert(n);
  }
  // Per root, the whole window and, where the fold went one axis at a time
  // (an earlier root's output sliced again), the last axis's stage alone:
  // the plan may run the stages as separate pools, k + k taps instead of k * k.
  std::set<std::vector<size_t>> sets;
  for (size_t root : roots) {
    std::set<size_t> others = folds;
    others.erase(root);
    const std::string combine = is(root, "Div") ? "Add" : "Max";
    for (const std::vector<size_t>& nodes :
         {pool_chain(graph, producers, root, combine, {}), pool_chain(graph, producers, root, combine, others)}) {
      const KernelGroup group = make_group(graph, nodes);
      std::optional<PoolGeometry> g = pool_geometry(graph, group);
      if (g && pool_pd(*g, onednn::plain_f32(g->src), onednn::plain_f32(g->dst))) sets.insert(nodes);
    }
  }
  return {sets.begin(), sets.end()};
}

bool is_pool_group(const Graph& graph, const KernelGroup& group) {
  return group.symbol.empty() && pool_geometry(graph, group).has_value();
}

std::unique_ptr<Kernel> make_pool_kernel(const Graph& graph, const KernelGroup& group) {
  std::optional<PoolGeometry> g = pool_geometry(graph, group);
  if (!g) return nullptr;
  std::optional<dnnl::pooling_v2_forward::primitive_desc> pd =
      pool_pd(*g, onednn::plain_f32(g->src), onednn::plain_f32(g->dst));
  if (!pd) return nullptr;
  return std::make_unique<OneDnnPoolKernel>(std::move(*g), std::move(*pd));
}

}  // namespace orchid::runtime::cpu
