#include "fission/conv_before_resize.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph_utils.h"
#include "reference/ops/resize_plan.h"

namespace orchid::fission {

namespace {

// One input of the Concat: its channels [offset, offset + channels), and the
// upsampling Resize that writes it when the Conv part moves before it.
struct Branch {
  ValueId input = kNoValue;
  int64_t offset = 0, channels = 0;
  const Node* resize = nullptr;
};

int64_t spatial_size(const Shape& shape) {
  int64_t n = 1;
  for (size_t d = 2; d < shape.size(); ++d) n *= shape[d];
  return n;
}

bool all_equal(const std::vector<int64_t>& values, int64_t expected) {
  for (int64_t v : values) {
    if (v != expected) return false;
  }
  return true;
}

bool is_pointwise_conv(const Graph& graph, const Node& conv) {
  if (conv.op != "Conv" || !conv.domain.empty() || conv.inputs.size() < 2 || conv.outputs.size() != 1) return false;
  const Tensor* w = constant_input(graph, conv, 1);
  if (!w || !is_float(w->dtype()) || w->rank() < 3) return false;
  for (size_t d = 2; d < w->rank(); ++d) {
    if (w->dim(d) != 1) return false;
  }
  if (conv.attrs.get_int("group", 1) != 1 || !all_equal(conv.attrs.get_ints("strides"), 1) ||
      !all_equal(conv.attrs.get_ints("pads"), 0)) {
    return false;
  }
  bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != kNoValue;
  return !has_bias || constant_input(graph, conv, 2);
}

// Whether the Resize's roi, scales and sizes are constants (or omitted): the
// rewrite reads them, and gives the moved Resize new sizes.
bool constant_resize_inputs(const Graph& graph, const Node& resize) {
  for (size_t i = 1; i < resize.inputs.size(); ++i) {
    if (resize.inputs[i] != kNoValue && !constant_input(graph, resize, i)) return false;
  }
  return true;
}

const Tensor* present_constant(const Graph& graph, const Node& node, size_t i) {
  const Tensor* t = constant_input(graph, node, i);
  return t && t->numel() > 0 ? t : nullptr;
}

// A Resize that upsamples the spatial axes only, with weights that sum to 1,
// read only by the Concat.
bool is_movable_upsampling(const Graph& graph, const Node& resize, const std::vector<int>& uses) {
  if (resize.op != "Resize" || !resize.domain.empty() || resize.outputs.size() != 1) return false;
  if (uses[size_t(resize.outputs[0])] != 1 || !constant_resize_inputs(graph, resize)) return false;
  const Attributes& a = resize.attrs;
  std::string mode = a.get_string("mode", "nearest");
  if ((mode != "nearest" && mode != "linear") || a.get_int("antialias", 0) != 0 ||
      a.get_string("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize" ||
      a.get_string("keep_aspect_ratio_policy", "stretch") != "stretch") {
    return false;
  }
  const Shape& in = graph.type(resize.inputs[0]).shape;
  const Shape& out = graph.type(resize.outputs[0]).shape;
  if (in.size() != out.size() || in.size() < 3) return false;
  reference::ResizePlan plan =
      reference::resize_plan(a, in, nullptr, present_constant(graph, resize, 2), present_constant(graph, resize, 3));
  if (plan.scales[0] != 1.0 || plan.scales[1] != 1.0 || plan.out != out) return false;
  return spatial_size(in) < spatial_size(out);
}

// Multiply-adds of the Resize: taps per output.
double resize_taps(const Node& resize, size_t rank) {
  return resize.attrs.get_string("mode", "nearest") == "linear" ? double(int64_t(1) << (rank - 2)) : 1.0;
}

// Multiply-adds before and after the rewrite; apply when they fall to 3/4.
bool profitable(const Graph& graph, const std::vector<Branch>& branches, const Shape& out_shape) {
  double out_channels = double(out_shape[1]), pixels = double(spatial_size(out_shape));
  double before = 0, after = double(branches.size() - 1) * out_channels * pixels;  // the sums
  for (const Branch& b : branches) {
    before += out_channels * double(b.channels) * pixels;
    if (!b.resize) {
      after += out_channels * double(b.channels) * pixels;
      continue;
    }
    double taps = resize_taps(*b.resize, out_shape.size());
    double in_pixels = double(spatial_size(graph.type(b.resize->inputs[0]).shape));
    before += double(b.channels) * pixels * taps;
    after += out_channels * double(b.channels) * in_pixels + out_channels * pixels * taps;
  }
  return after <= 0.75 * before;
}

// The Concat's inputs as branches; empty when the rewrite does not apply.
std::vector<Branch> concat_branches(const Graph& graph, const Node& concat, const std::vector<size_t>& producer,
                                    const std::vector<int>& uses) {
  std::vector<Branch> branches;
  if (concat.op != "Concat" || !concat.domain.empty() || concat.inputs.size() < 2) return branches;
  int64_t rank = int64_t(graph.type(concat.outputs[0]).rank());
  int64_t axis = concat.attrs.get_int("axis", 0);
  if ((axis < 0 ? axis + rank : axis) != 1) return branches;
  int64_t offset = 0;
  for (ValueId input : concat.inputs) {
    Branch b{input, offset, graph.type(input).shape[1], nullptr};
    size_t p = producer[size_t(input)];
    if (p != kNoNode && is_movable_upsampling(graph, graph.nodes()[p], uses)) b.resize = &graph.nodes()[p];
    offset += b.channels;
    branches.push_back(b);
  }
  return branches;
}

// W's input channels [offset, offset + channels): [M, channels, 1, ...].
Tensor weight_part(const Tensor& w, int64_t offset, int64_t channels) {
  Shape shape = w.shape();
  int64_t in_channels = shape[1];
  shape[1] = channels;
  Tensor part(w.dtype(), shape);
  for (int64_t m = 0; m < shape[0]; ++m) {
    for (int64_t c = 0; c < channels; ++c) part.set_f64(m * channels + c, w.at_f64(m * in_channels + offset + c));
  }
  return part;
}

// The Resize's sizes with the channel entry set to `channels` (sizes lists
// the resized axes: all of them, or the `axes` attribute's).
Tensor sizes_with_channels(const Node& resize, const Tensor& sizes, int64_t rank, int64_t channels) {
  std::vector<int64_t> axes = reference::resize_axes(resize.attrs, rank);
  std::vector<int64_t> values = sizes.to_i64_vector();
  for (size_t k = 0; k < axes.size() && k < values.size(); ++k) {
    if (axes[k] == 1) values[k] = channels;
  }
  return Tensor::vector_i64(values);
}

class Rewriter {
 public:
  Rewriter(Graph& out, const Node& conv) : out_(out), conv_(conv) {}

  // The nodes computing the Conv's output as the sum of its parts.
  std::vector<Node> split(const std::vector<Branch>& branches) {
    Tensor w = *constant_input(out_, conv_, 1);  // a copy: adding constants moves out_'s values
    ValueId bias = conv_.inputs.size() > 2 ? conv_.inputs[2] : kNoValue;
    size_t bias_branch = 0;  // a branch without a Resize takes the bias when there is one
    for (size_t i = 0; i < branches.size(); ++i) {
      if (!branches[i].resize) {
        bias_branch = i;
        break;
      }
    }
    ValueId sum = kNoValue;
    for (size_t i = 0; i < branches.size(); ++i) {
      const Branch& b = branches[i];
      std::string part = conv_.name + "/part" + std::to_string(i);
      ValueId weight = out_.add_constant(part + "/W", weight_part(w, b.offset, b.channels));
      ValueId in = b.resize ? b.resize->inputs[0] : b.input;
      ValueId y = conv(part, in, weight, i == bias_branch ? bias : kNoValue);
      if (b.resize) y = resize(part, *b.resize, y);
      if (sum == kNoValue) {
        sum = y;
        continue;
      }
      bool last = i + 1 == branches.size();
      sum = add(part + "/sum", sum, y, last ? conv_.outputs[0] : kNoValue);
    }
    return std::move(nodes_);
  }

 private:
  ValueId value(const std::string& name, const Shape& shape) {
    return out_.add_value(name, {out_.type(conv_.outputs[0]).dtype, shape});
  }

  ValueId conv(const std::string& name, ValueId in, ValueId weight, ValueId bias) {
    Shape shape = out_.type(in).shape;
    shape[1] = out_.type(conv_.outputs[0]).shape[1];
    Node node{name, "Conv", "", {in, weight}, {value(name, shape)}, conv_.attrs};
    if (bias != kNoValue) node.inputs.push_back(bias);
    nodes_.push_back(node);
    return node.outputs[0];
  }

  ValueId resize(const std::string& part, const Node& original, ValueId in) {
    Node node = original;
    node.name = part + "/" + original.name;
    int64_t channels = out_.type(in).shape[1];
    const Tensor* sizes = present_constant(out_, original, 3);
    if (sizes) {
      Tensor new_sizes = sizes_with_channels(original, *sizes, int64_t(out_.type(in).rank()), channels);
      node.inputs[3] = out_.add_constant(node.name + "/sizes", std::move(new_sizes));
    }
    node.inputs[0] = in;
    Shape shape = out_.type(original.outputs[0]).shape;
    shape[1] = channels;
    node.outputs = {value(node.name, shape)};
    nodes_.push_back(node);
    return node.outputs[0];
  }

  ValueId add(const std::string& name, ValueId a, ValueId b, ValueId result) {
    if (result == kNoValue) result = value(name, out_.type(conv_.outputs[0]).shape);
    nodes_.push_back(Node{name, "Add", "", {a, b}, {result}, {}});
    return result;
  }

  Graph& out_;
  const Node& conv_;
  std::vector<Node> nodes_;
};

}  // namespace

Graph conv_before_upsampling(const Graph& graph) {
  std::vector<int> uses = use_counts(graph);
  std::vector<size_t> producer = producer_nodes(graph);
  Graph out = graph;
  std::vector<bool> drop(graph.nodes().size(), false);
  std::map<size_t, std::vector<Node>> replaced;  // a Conv's index -> the nodes that replace it
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& conv = graph.nodes()[n];
    if (!is_pointwise_conv(graph, conv)) continue;
    size_t c = producer[size_t(conv.inputs[0])];
    if (c == kNoNode || uses[size_t(conv.inputs[0])] != 1) continue;
    std::vector<Branch> branches = concat_branches(graph, graph.nodes()[c], producer, uses);
    if (branches.empty() || !profitable(graph, branches, graph.type(conv.outputs[0]).shape)) continue;
    replaced[n] = Rewriter(out, conv).split(branches);
    drop[c] = true;
    for (const Branch& b : branches) {
      if (b.resize) drop[size_t(b.resize - graph.nodes().data())] = true;
    }
  }
  if (replaced.empty()) return graph;
  // The parts take the Conv's place: their inputs are all written before the
  // Concat, and its Resizes, were.
  std::vector<Node> nodes;
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    auto it = replaced.find(n);
    if (it != replaced.end()) {
      for (Node& node : it->second) nodes.push_back(std::move(node));
    } else if (!drop[n]) {
      nodes.push_back(std::move(out.nodes()[n]));
    }
  }
  out.nodes() = std::move(nodes);
  return remove_unused_values(out);
}

}  // namespace orchid::fission
