#include "fission/pointwise_conv.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fission/graph_rewrite.h"
#include "ir/graph_utils.h"
#include "ir/op_traits.h"
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

// A Resize that upsamples the spatial axes only, with weights that sum to 1,
// read only by the Concat.
bool is_movable_upsampling(const Graph& graph, const Node& resize, const std::vector<int>& uses) {
  if (!is_plain(&resize, "Resize") || resize.outputs.size() != 1) return false;
  if (uses[size_t(resize.outputs[0])] != 1 || !constant_inputs_from(graph, resize, 1)) return false;
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

// ---------------------------------------------- a linear map before the Conv
// The chain Reshape(Transpose(MatMul(X, A) [+ a])) feeding a pointwise Conv.
struct LinearChain {
  const Node* reshape = nullptr;
  const Node* transpose = nullptr;
  const Node* bias_add = nullptr;  // or none
  const Node* matmul = nullptr;
  const Tensor* weight = nullptr;  // A [K, C]
  const Tensor* bias = nullptr;    // a [C], or none
};

// A constant [C] bias, or one broadcast along the last axis only ([1, ..., C]).
const Tensor* last_axis_bias(const Graph& graph, const Node& add, ValueId product, int64_t channels) {
  if (add.inputs.size() != 2) return nullptr;
  const Tensor* bias = constant_input(graph, add, add.inputs[0] == product ? 1 : 0);
  if (!bias || !is_float(bias->dtype()) || bias->numel() != channels || bias->rank() == 0) return nullptr;
  return bias->shape().back() == channels ? bias : nullptr;
}

std::optional<LinearChain> linear_chain(const Graph& graph, const Node& conv, const std::vector<size_t>& producer,
                                        const std::vector<int>& uses) {
  LinearChain chain;
  chain.reshape = sole_producer(graph, conv.inputs[0], producer, uses);
  if (!is_plain(chain.reshape, "Reshape") || !constant_input(graph, *chain.reshape, 1)) return std::nullopt;
  const Shape& reshaped = graph.type(chain.reshape->outputs[0]).shape;
  const Shape& moved = graph.type(chain.reshape->inputs[0]).shape;
  if (moved.size() < 2 || moved[0] != reshaped[0] || moved[1] != reshaped[1]) return std::nullopt;
  chain.transpose = sole_producer(graph, chain.reshape->inputs[0], producer, uses);
  if (!is_plain(chain.transpose, "Transpose")) return std::nullopt;
  std::vector<int64_t> perm = chain.transpose->attrs.get_ints("perm");
  if (perm.size() != moved.size() || perm[1] != int64_t(moved.size()) - 1) return std::nullopt;
  const Node* next = sole_producer(graph, chain.transpose->inputs[0], producer, uses);
  int64_t channels = moved[1];
  if (is_plain(next, "Add")) {
    ValueId product = next->inputs[0];
    if (constant_input(graph, *next, 0)) product = next->inputs[1];
    chain.bias = last_axis_bias(graph, *next, product, channels);
    if (!chain.bias || graph.type(product).shape != graph.type(next->outputs[0]).shape) return std::nullopt;
    chain.bias_add = next;
    next = sole_producer(graph, product, producer, uses);
  }
  chain.matmul = next;
  if (!is_plain(chain.matmul, "MatMul")) return std::nullopt;
  chain.weight = constant_input(graph, *chain.matmul, 1);
  const Tensor* a = chain.weight;
  if (!a || !is_float(a->dtype()) || a->rank() != 2 || a->dim(1) != channels) return std::nullopt;
  return chain;
}

// The product of the two maps: A W^T [K, M], and its bias W a + b [M].
struct Composed {
  Tensor weight, bias;
};

Composed compose(const Tensor& a, const Tensor* a_bias, const Tensor& w, const Tensor* w_bias) {
  int64_t k_dim = a.dim(0), c_dim = a.dim(1), m_dim = w.dim(0);
  std::vector<double> av = a.to_f64_vector(), wv = w.to_f64_vector();
  Composed out{Tensor(a.dtype(), {k_dim, m_dim}), Tensor(w.dtype(), {m_dim})};
  std::vector<double> row(static_cast<size_t>(m_dim));
  for (int64_t k = 0; k < k_dim; ++k) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int64_t c = 0; c < c_dim; ++c) {
      double x = av[size_t(k * c_dim + c)];
      for (int64_t m = 0; m < m_dim; ++m) row[size_t(m)] += x * wv[size_t(m * c_dim + c)];
    }
    for (int64_t m = 0; m < m_dim; ++m) out.weight.set_f64(k * m_dim + m, row[size_t(m)]);
  }
  std::vector<double> ab = a_bias ? a_bias->to_f64_vector() : std::vector<double>(size_t(c_dim), 0.0);
  for (int64_t m = 0; m < m_dim; ++m) {
    double sum = w_bias ? w_bias->at_f64(m) : 0.0;
    for (int64_t c = 0; c < c_dim; ++c) sum += wv[size_t(m * c_dim + c)] * ab[size_t(c)];
    out.bias.set_f64(m, sum);
  }
  return out;
}

// Multiply-adds: K C per token and C M per pixel, against K M.
bool saves_work(const LinearChain& chain, int64_t out_channels) {
  double k = double(chain.weight->dim(0)), c = double(chain.weight->dim(1)), m = double(out_channels);
  return k * m < k * c + c * m;
}

// The nodes computing the Conv's output with one map: the chain's nodes
// with the composed weight and bias and M channels where they had C.
std::vector<Node> fold_chain(Graph& out, const Node& conv, const LinearChain& chain) {
  std::string name = conv.name + "/folded";
  Tensor w = *constant_input(out, conv, 1);
  const Tensor* w_bias = constant_input(out, conv, 2);
  Composed composed = compose(*chain.weight, chain.bias, w, w_bias);  // (chain's tensors: the input graph's)
  int64_t m_dim = w.dim(0);
  DType dtype = out.type(conv.outputs[0]).dtype;
  auto with_channels = [&](ValueId v, size_t axis) {
    Shape shape = out.type(v).shape;
    shape[axis] = m_dim;
    return out.add_value(name + "/" + out.value(v).name, {dtype, shape});
  };
  std::vector<Node> nodes;
  Node matmul = *chain.matmul;
  matmul.name = name + "/MatMul";
  matmul.inputs[1] = out.add_constant(name + "/W", std::move(composed.weight));
  matmul.outputs = {with_channels(chain.matmul->outputs[0], out.type(chain.matmul->outputs[0]).rank() - 1)};
  nodes.push_back(matmul);
  ValueId product = matmul.outputs[0];
  if (chain.bias_add || w_bias) {
    ValueId bias = out.add_constant(name + "/B", std::move(composed.bias));
    nodes.push_back(
        Node{name + "/Add", "Add", "", {product, bias}, {with_channels(product, out.type(product).rank() - 1)}, {}});
    product = nodes.back().outputs[0];
  }
  Node transpose = *chain.transpose;
  transpose.name = name + "/Transpose";
  transpose.inputs = {product};
  transpose.outputs = {with_channels(chain.transpose->outputs[0], 1)};
  nodes.push_back(transpose);
  Node reshape = *chain.reshape;
  reshape.name = name + "/Reshape";
  std::vector<int64_t> shape = constant_input(out, *chain.reshape, 1)->to_i64_vector();
  if (shape.size() > 1 && shape[1] > 0) shape[1] = m_dim;  // 0 copies the input's, -1 is inferred
  reshape.inputs[0] = transpose.outputs[0];
  reshape.inputs[1] = out.add_constant(name + "/shape", Tensor::vector_i64(shape));
  reshape.outputs = {conv.outputs[0]};
  nodes.push_back(reshape);
  return nodes;
}

// ------------------------------- a channels-last tensor made channels-first
// The Transpose to channels-first feeding a pointwise Conv, through unary
// elementwise operators (Relu), each value read once.
struct ChannelsFirstChain {
  const Node* transpose = nullptr;
  std::vector<const Node*> unary;  // in execution order
};

bool is_unary_elementwise(const Node& node) {
  const OpTraits* traits = op_traits(node.op);
  return node.domain.empty() && traits && traits->kind == PrimitiveKind::Elementwise && traits->arity == 1 &&
         traits->element == ElementClass::Arithmetic && node.inputs.size() == 1 && node.outputs.size() == 1;
}

// A Transpose from channels-last to channels-first (rank 3 or more).
bool is_to_channels_first(const Node& transpose) {
  const std::vector<int64_t> perm = transpose.attrs.get_ints("perm");
  return perm.size() >= 3 && perm == channels_first_perm(int64_t(perm.size()));
}

std::optional<ChannelsFirstChain> channels_first_chain(const Graph& graph, const Node& conv,
                                                       const std::vector<size_t>& producer,
                                                       const std::vector<int>& uses) {
  ChannelsFirstChain chain;
  const Node* node = sole_producer(graph, conv.inputs[0], producer, uses);
  while (node && is_unary_elementwise(*node)) {
    chain.unary.insert(chain.unary.begin(), node);
    node = sole_producer(graph, node->inputs[0], producer, uses);
  }
  if (!is_plain(node, "Transpose") || !is_to_channels_first(*node)) return std::nullopt;
  chain.transpose = node;
  return chain;
}

// The nodes computing the Conv's output channels-last: the unary chain on
// the Transpose's input, MatMul(., W^T) [+ b], the Transpose to
// channels-first.
std::vector<Node> matmul_channels_last(Graph& out, const Node& conv, const ChannelsFirstChain& chain) {
  const std::string name = conv.name + "/channels_last";
  const DType dtype = out.type(conv.outputs[0]).dtype;
  std::vector<Node> nodes;
  ValueId x = chain.transpose->inputs[0];
  const Shape shape = out.type(x).shape;  // [N, spatial..., C]
  for (const Node* unary : chain.unary) {
    Node node = *unary;
    node.name = name + "/" + unary->name;
    node.inputs = {x};
    node.outputs = {out.add_value(node.name, {dtype, shape})};
    nodes.push_back(node);
    x = node.outputs[0];
  }
  const Tensor w = *constant_input(out, conv, 1);  // [M, C, 1...]
  const int64_t m_dim = w.dim(0), c_dim = w.dim(1);
  Tensor w_t(w.dtype(), {c_dim, m_dim});
  for (int64_t m = 0; m < m_dim; ++m) {
    for (int64_t c = 0; c < c_dim; ++c) w_t.set_f64(c * m_dim + m, w.at_f64(m * c_dim + c));
  }
  Shape result = shape;
  result.back() = m_dim;
  ValueId y = out.add_value(name + "/MatMul", {dtype, result});
  nodes.push_back(Node{name + "/MatMul", "MatMul", "", {x, out.add_constant(name + "/W", std::move(w_t))}, {y}, {}});
  if (conv.inputs.size() > 2 && conv.inputs[2] != kNoValue) {
    ValueId biased = out.add_value(name + "/Add", {dtype, result});
    nodes.push_back(Node{name + "/Add", "Add", "", {y, conv.inputs[2]}, {biased}, {}});
    y = biased;
  }
  Node transpose = *chain.transpose;
  transpose.name = name + "/Transpose";
  transpose.inputs = {y};
  transpose.outputs = {conv.outputs[0]};
  nodes.push_back(transpose);
  return nodes;
}

}  // namespace

Graph pointwise_conv_channels_last(const Graph& graph) {
  const std::vector<int> uses = use_counts(graph);
  const std::vector<size_t> producer = producer_nodes(graph);
  // The channels-last chain takes the Conv's place: the Transpose's input is
  // written before the Transpose was.
  return rewrite_nodes(graph, [&](size_t n, Graph& out, std::vector<bool>& drop) -> std::optional<std::vector<Node>> {
    const Node& conv = graph.nodes()[n];
    if (!is_pointwise_conv(graph, conv)) return std::nullopt;
    std::optional<ChannelsFirstChain> chain = channels_first_chain(graph, conv, producer, uses);
    // (the output Transpose moves fewer channels than the input one did)
    if (!chain || graph.type(conv.outputs[0]).shape[1] > graph.type(conv.inputs[0]).shape[1]) return std::nullopt;
    drop[index_of(graph, chain->transpose)] = true;
    for (const Node* node : chain->unary) drop[index_of(graph, node)] = true;
    return matmul_channels_last(out, conv, *chain);
  });
}

Graph fold_linear_into_pointwise_conv(const Graph& graph) {
  const std::vector<int> uses = use_counts(graph);
  const std::vector<size_t> producer = producer_nodes(graph);
  // The folded chain takes the Conv's place: X is written before the MatMul was.
  return rewrite_nodes(graph, [&](size_t n, Graph& out, std::vector<bool>& drop) -> std::optional<std::vector<Node>> {
    const Node& conv = graph.nodes()[n];
    if (!is_pointwise_conv(graph, conv)) return std::nullopt;
    std::optional<LinearChain> chain = linear_chain(graph, conv, producer, uses);
    if (!chain || !saves_work(*chain, graph.type(conv.outputs[0]).shape[1])) return std::nullopt;
    for (const Node* node : {chain->reshape, chain->transpose, chain->bias_add, chain->matmul}) {
      if (node) drop[index_of(graph, node)] = true;
    }
    return fold_chain(out, conv, *chain);
  });
}

Graph conv_before_upsampling(const Graph& graph) {
  const std::vector<int> uses = use_counts(graph);
  const std::vector<size_t> producer = producer_nodes(graph);
  // The parts take the Conv's place: their inputs are all written before the
  // Concat, and its Resizes, were.
  return rewrite_nodes(graph, [&](size_t n, Graph& out, std::vector<bool>& drop) -> std::optional<std::vector<Node>> {
    const Node& conv = graph.nodes()[n];
    if (!is_pointwise_conv(graph, conv)) return std::nullopt;
    const size_t c = producer[size_t(conv.inputs[0])];
    if (c == kNoNode || uses[size_t(conv.inputs[0])] != 1) return std::nullopt;
    std::vector<Branch> branches = concat_branches(graph, graph.nodes()[c], producer, uses);
    if (branches.empty() || !profitable(graph, branches, graph.type(conv.outputs[0]).shape)) return std::nullopt;
    drop[c] = true;
    for (const Branch& b : branches) {
      if (b.resize) drop[index_of(graph, b.resize)] = true;
    }
    return Rewriter(out, conv).split(branches);
  });
}

}  // namespace orchid::fission
