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
    const Shape image = out_.type(root_.outputs[0]).shape;  // (a copy: adding values moves the types)
    const ValueId last = channels_last_value(tokens, image);
    return {reshape(tokens, last, "/channels_last"),
            transpose(last, channels_first_perm(int64_t(image.size())), root_.outputs[0])};
  }

  // root: Transpose(Reshape(x)) to tokens; x [N, C, spatial...].
  std::vector<Node> tokens(ValueId image) {
    const int64_t rank = int64_t(out_.type(image).rank());
    const ValueId last = channels_last_value(image, out_.type(image).shape);
    return {transpose(image, channels_last_perm(rank), last),
            reshape(last, root_.outputs[0], "/tokens")};
  }

 private:
  // A new value: the image of `shape` channels-last, of `like`'s dtype.
  ValueId channels_last_value(ValueId like, const Shape& shape) {
    const TensorType type{out_.type(like).dtype, channels_last_shape(shape)};  // before add_value moves the types
    return out_.add_value(root_.name + "/channels_last", type);
  }

  Node reshape(ValueId input, ValueId output, const std::string& suffix) {
    const std::string name = root_.name + suffix;
    const ValueId shape = out_.add_constant(name + "/shape", Tensor::vector_i64(out_.type(output).shape));
    return Node{name, "Reshape", "", {input, shape}, {output}, {}};
  }

  Node transpose(ValueId input, std::vector<int64_t> perm, ValueId output) const {
    Attributes attrs;
    attrs.set("perm", std::move(perm));
    return Node{root_.name + "/transpose", "Transpose", "", {input}, {output}, attrs};
  }

  Graph& out_;
  const Node& root_;
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
