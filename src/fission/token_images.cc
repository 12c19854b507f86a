#include "fission/token_images.h"

#include <optional>
#include <string>
#include <vector>

#include "fission/graph_rewrite.h"
#include "ir/graph_utils.h"

namespace orchid::fission {

namespace {

bool is_token_transpose(const Node* node) {
  return is_plain(node, "Transpose") && node->attrs.get_ints("perm") == std::vector<int64_t>{0, 2, 1};
}

class Rewriter {
 public:
  Rewriter(Graph& out, const Node& root) : out_(out), root_(root) {}

  // root: Reshape(Transpose(t)) to an image; t [N, L, C].
  std::vector<Node> image(ValueId tokens) {
    const Shape image = out_.type(root_.outputs[0]).shape;
    const ValueId last = reshape(tokens, channels_last_shape(image), "/channels_last");
    return {std::move(nodes_[0]), transpose(last, channels_first_perm(int64_t(image.size())), root_.outputs[0])};
  }

  // root: Transpose(Reshape(x)) to tokens; x [N, C, spatial...].
  std::vector<Node> tokens(ValueId image) {
    const Shape shape = out_.type(image).shape;
    const ValueId last = out_.add_value(root_.name + "/channels_last", {out_.type(image).dtype, channels_last_shape(shape)});
    nodes_.push_back(transpose(image, channels_last_perm(int64_t(shape.size())), last));
    Node flat{root_.name + "/tokens", "Reshape", "",
              {last, out_.add_constant(root_.name + "/tokens_shape",
                                       Tensor::vector_i64(out_.type(root_.outputs[0]).shape))},
              {root_.outputs[0]}, {}};
    nodes_.push_back(std::move(flat));
    return std::move(nodes_);
  }

 private:
  ValueId reshape(ValueId input, const Shape& shape, const std::string& suffix) {
    const std::string name = root_.name + suffix;
    const ValueId out = out_.add_value(name, {out_.type(input).dtype, shape});
    nodes_.push_back(Node{name, "Reshape", "", {input, out_.add_constant(name + "/shape", Tensor::vector_i64(shape))},
                          {out}, {}});
    return out;
  }

  Node transpose(ValueId input, std::vector<int64_t> perm, ValueId output) const {
    Attributes attrs;
    attrs.set("perm", std::move(perm));
    return Node{root_.name + "/transpose", "Transpose", "", {input}, {output}, attrs};
  }

  Graph& out_;
  const Node& root_;
  std::vector<Node> nodes_;
};

// An image [N, C, spatial...] with at least one spatial axis and the token
// shape [N, L, C] it is laid out from: same N and C, L the spatial product.
bool image_of_tokens(const Shape& image, const Shape& tokens) {
  if (image.size() < 3 || tokens.size() != 3 || image[0] != tokens[0] || image[1] != tokens[2]) return false;
  int64_t spatial = 1;
  for (size_t a = 2; a < image.size(); ++a) spatial *= image[a];
  return spatial == tokens[1];
}

}  // namespace

Graph token_maps_as_images(const Graph& graph) {
  const std::vector<int> uses = use_counts(graph);
  const std::vector<size_t> producer = producer_nodes(graph);
  return rewrite_nodes(graph, [&](size_t n, Graph& out, std::vector<bool>& drop) -> std::optional<std::vector<Node>> {
    const Node& root = graph.nodes()[n];
    if (root.outputs.size() != 1 || root.inputs.empty()) return std::nullopt;
    const Node* inner = sole_producer(graph, root.inputs[0], producer, uses);
    if (!inner || inner->inputs.empty()) return std::nullopt;
    if (is_plain(&root, "Reshape") && is_token_transpose(inner)) {
      const ValueId tokens = inner->inputs[0];
      if (!image_of_tokens(graph.type(root.outputs[0]).shape, graph.type(tokens).shape)) return std::nullopt;
      drop[index_of(graph, inner)] = true;
      return Rewriter(out, root).image(tokens);
    }
    if (is_token_transpose(&root) && is_plain(inner, "Reshape")) {
      const ValueId image = inner->inputs[0];
      if (!image_of_tokens(graph.type(image).shape, graph.type(root.outputs[0]).shape)) return std::nullopt;
      drop[index_of(graph, inner)] = true;
      return Rewriter(out, root).tokens(image);
    }
    return std::nullopt;
  });
}

}  // namespace orchid::fission
