#include "fission/channels_last_sum.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fission/graph_rewrite.h"
#include "ir/graph_utils.h"

namespace orchid::fission {

namespace {

// A token map t [N, L, C] made channels-first, Reshape(Transpose(t)), maybe
// resized.
struct TokenMap {
  const Node* transpose = nullptr;
  const Node* reshape = nullptr;
  const Node* resize = nullptr;  // or none
};

// Channels-first axis a of a rank-r tensor in channels-last order.
int64_t channels_last_axis(int64_t a, int64_t rank) { return a == 0 ? 0 : a == 1 ? rank - 1 : a - 1; }

// A Resize of the spatial axes whose scales or sizes, over all axes, can be
// permuted: constant, no roi, no `axes`.
bool is_permutable_resize(const Graph& graph, const Node& resize) {
  if (resize.outputs.size() != 1 || resize.attrs.has("axes")) return false;
  if (resize.attrs.get_string("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize") return false;
  if (!constant_inputs_from(graph, resize, 1)) return false;
  const Shape& in = graph.type(resize.inputs[0]).shape;
  const Shape& out = graph.type(resize.outputs[0]).shape;
  if (in.size() != out.size() || in.size() < 3 || in[0] != out[0] || in[1] != out[1]) return false;
  for (size_t i = 2; i <= 3; ++i) {
    const Tensor* t = present_constant(graph, resize, i);
    if (t && t->numel() != int64_t(in.size())) return false;
  }
  return true;
}

std::optional<TokenMap> token_map(const Graph& graph, ValueId value, const std::vector<size_t>& producer,
                                  const std::vector<int>& uses) {
  TokenMap map;
  const Node* node = sole_producer(graph, value, producer, uses);
  if (is_plain(node, "Resize")) {
    if (!is_permutable_resize(graph, *node)) return std::nullopt;
    map.resize = node;
    node = sole_producer(graph, node->inputs[0], producer, uses);
  }
  map.reshape = node;
  if (!is_plain(map.reshape, "Reshape")) return std::nullopt;
  map.transpose = sole_producer(graph, map.reshape->inputs[0], producer, uses);
  if (!is_plain(map.transpose, "Transpose") || map.transpose->attrs.get_ints("perm") != std::vector<int64_t>{0, 2, 1}) {
    return std::nullopt;
  }
  const Shape& tokens = graph.type(map.transpose->inputs[0]).shape;  // [N, L, C]
  const Shape& image = graph.type(map.reshape->outputs[0]).shape;    // [N, C, spatial...]
  if (image.size() < 3 || image[0] != tokens[0] || image[1] != tokens[2]) return std::nullopt;
  return map;
}

// The Add tree computing `value`: its leaves (token maps, in order) and its
// Adds; false when some leaf is not a token map.
struct SumTree {
  std::vector<TokenMap> leaves;
  std::vector<const Node*> adds;
};

bool collect(const Graph& graph, ValueId value, const Shape& shape, const std::vector<size_t>& producer,
             const std::vector<int>& uses, SumTree& tree) {
  const Node* node = sole_producer(graph, value, producer, uses);
  if (is_plain(node, "Add") && graph.type(node->outputs[0]).shape == shape) {
    tree.adds.push_back(node);
    return collect(graph, node->inputs[0], shape, producer, uses, tree) &&
           collect(graph, node->inputs[1], shape, producer, uses, tree);
  }
  std::optional<TokenMap> map = token_map(graph, value, producer, uses);
  if (!map) return false;
  tree.leaves.push_back(*map);
  return true;
}

std::optional<SumTree> sum_tree(const Graph& graph, const Node& root, const std::vector<size_t>& producer,
                                const std::vector<int>& uses) {
  if (!is_plain(&root, "Add") || root.inputs.size() != 2 || root.outputs.size() != 1) return std::nullopt;
  const TensorType& type = graph.type(root.outputs[0]);
  if (!is_float(type.dtype) || type.rank() < 3) return std::nullopt;
  SumTree tree;
  tree.adds.push_back(&root);
  for (ValueId input : root.inputs) {
    if (graph.type(input).shape != type.shape || !collect(graph, input, type.shape, producer, uses, tree)) {
      return std::nullopt;
    }
  }
  return tree;
}

class Rewriter {
 public:
  Rewriter(Graph& out, const Node& root) : out_(out), root_(root) {}

  std::vector<Node> rewrite(const SumTree& tree) {
    ValueId sum = kNoValue;
    for (size_t k = 0; k < tree.leaves.size(); ++k) {
      ValueId leaf = channels_last_leaf(tree.leaves[k], root_.name + "/channels_last" + std::to_string(k));
      if (sum == kNoValue) {
        sum = leaf;
      } else {
        std::string name = root_.name + "/channels_last_sum" + std::to_string(k);
        nodes_.push_back(Node{name, "Add", "", {sum, leaf}, {value(name, out_.type(leaf).shape)}, {}});
        sum = nodes_.back().outputs[0];
      }
    }
    Attributes attrs;
    attrs.set("perm", channels_first_perm(int64_t(out_.type(sum).rank())));
    nodes_.push_back(Node{root_.name + "/channels_first", "Transpose", "", {sum}, {root_.outputs[0]}, attrs});
    return std::move(nodes_);
  }

 private:
  ValueId value(const std::string& name, const Shape& shape) {
    return out_.add_value(name, {out_.type(root_.outputs[0]).dtype, shape});
  }

  ValueId channels_last_leaf(const TokenMap& map, const std::string& name) {
    Shape image = channels_last_shape(out_.type(map.reshape->outputs[0]).shape);
    Node reshape = *map.reshape;
    reshape.name = name + "/Reshape";
    reshape.inputs = {map.transpose->inputs[0], out_.add_constant(name + "/shape", Tensor::vector_i64(image))};
    reshape.outputs = {value(reshape.name, image)};
    nodes_.push_back(reshape);
    if (!map.resize) return reshape.outputs[0];
    Node resize = *map.resize;
    resize.name = name + "/Resize";
    resize.inputs[0] = reshape.outputs[0];
    for (size_t i = 2; i <= 3 && i < resize.inputs.size(); ++i) {
      const Tensor* t = present_constant(out_, *map.resize, i);
      if (t) resize.inputs[i] = out_.add_constant(name + (i == 2 ? "/scales" : "/sizes"), permuted(*t));
    }
    resize.outputs = {value(resize.name, channels_last_shape(out_.type(map.resize->outputs[0]).shape))};
    nodes_.push_back(resize);
    return resize.outputs[0];
  }

  // Per-axis scales or sizes in channels-last order.
  static Tensor permuted(const Tensor& t) {
    Tensor out(t.dtype(), t.shape());
    int64_t rank = t.numel();
    for (int64_t a = 0; a < rank; ++a) out.set_f64(channels_last_axis(a, rank), t.at_f64(a));
    return out;
  }

  Graph& out_;
  const Node& root_;
  std::vector<Node> nodes_;
};

}  // namespace

Graph sum_token_maps_channels_last(const Graph& graph) {
  const std::vector<int> uses = use_counts(graph);
  const std::vector<size_t> producer = producer_nodes(graph);
  // Last to first: a tree's root comes before its subtrees, which it takes.
  // The channels-last sum takes the root's place: the token maps are written
  // before the Transposes that read them were.
  return rewrite_nodes(
      graph,
      [&](size_t n, Graph& out, std::vector<bool>& drop) -> std::optional<std::vector<Node>> {
        const Node& root = graph.nodes()[n];
        std::optional<SumTree> tree = sum_tree(graph, root, producer, uses);
        if (!tree) return std::nullopt;
        for (const Node* add : tree->adds) drop[index_of(graph, add)] = true;
        for (const TokenMap& map : tree->leaves) {
          for (const Node* node : {map.transpose, map.reshape, map.resize}) {
            if (node) drop[index_of(graph, node)] = true;
          }
        }
        return Rewriter(out, root).rewrite(*tree);
      },
      /*last_first=*/true);
}

}  // namespace orchid::fission
