#include "frontend/onnx/importer.h"

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>

#include "frontend/onnx/attributes.h"
#include "frontend/onnx/canonicalize.h"
#include "frontend/onnx/tensor_proto.h"
#include "reference/op_registry.h"
#include "support/error.h"

namespace orchid::onnx_frontend {

namespace fs = std::filesystem;

namespace {

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// The newest opset of the default domain whose every operator change the
// importer and the reference operators implement. Opset 19 already gives
// AveragePool dilations, Pad 'wrap' and Resize 'half_pixel_symmetric';
// running such a model with opset-18 semantics could answer wrongly.
constexpr int kNewestOpset = 18;

int default_opset(const onnx::ModelProto& model) {
  for (const auto& entry : model.opset_import()) {
    if (is_default_domain(entry.domain())) return int(entry.version());
  }
  return 1;
}

void check_opset_supported(const onnx::ModelProto& model, const std::string& file) {
  const int opset = default_opset(model);
  if (opset > kNewestOpset) {
    ORCHID_FAIL() << file << ": the model uses opset " << opset << " of the default ONNX domain; Orchid implements "
                  << "opsets 1 to " << kNewestOpset << ". Export it with opset_version=" << kNewestOpset
                  << " or lower, or convert it (onnx.version_converter.convert_version(model, " << kNewestOpset
                  << "))";
  }
}

// Operators that canonicalization renames; their support is that of the new name.
std::string canonical_op_name(const std::string& op) { return op == "Upsample" ? "Resize" : op; }

// All unsupported operators at once, with node names, so the user sees the
// whole list in one run.
void check_operators_supported(const onnx::GraphProto& graph, const std::string& file) {
  std::map<std::string, std::vector<std::string>> missing;  // op -> node names
  const auto& registry = reference::OpRegistry::global();
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    std::string domain = is_default_domain(node.domain()) ? "" : node.domain();
    bool has_subgraph = false;
    for (const auto& attr : node.attribute()) {
      has_subgraph |= attr.type() == onnx::AttributeProto::GRAPH || attr.type() == onnx::AttributeProto::GRAPHS;
    }
    if (has_subgraph || !registry.find(domain, canonical_op_name(node.op_type()))) {
      std::string op = domain.empty() ? node.op_type() : domain + "." + node.op_type();
      std::string name = node.name().empty() ? "#" + std::to_string(i) : "'" + node.name() + "'";
      missing[op].push_back(name);
    }
  }
  if (missing.empty()) return;
  std::ostringstream message;
  message << file << ": unsupported operator" << (missing.size() > 1 ? "s" : "") << ":";
  for (const auto& [op, nodes] : missing) {
    message << "\n  " << op << " (node" << (nodes.size() > 1 ? "s " : " ");
    for (size_t i = 0; i < nodes.size() && i < 8; ++i) message << (i ? ", " : "") << nodes[i];
    if (nodes.size() > 8) message << ", ... " << nodes.size() - 8 << " more";
    message << ")";
  }
  throw Error(message.str());
}

// Thrown when an operator needs the value of a run-time value that derives
// from offered graph inputs: the import restarts with those inputs constant.
struct SpecializationNeeded {
  std::set<std::string> inputs;
  std::string reason;  // the node that needed it
};

// Offered values of small derived tensors are propagated (for shape
// arithmetic such as Cast/Sub before Range); big activations are not.
constexpr int64_t kMaxPropagatedElements = 1 << 16;

class GraphBuilder {
 public:
  GraphBuilder(const std::string& file, const std::string& base_dir, const ImportOptions& options,
               const std::set<std::string>& specialized, ImportResult& result)
      : file_(file), base_dir_(base_dir), options_(options), specialized_(specialized), result_(result) {}

  void build(const onnx::GraphProto& proto) {
    graph().name = proto.name();
    add_initializers(proto);
    add_inputs(proto);
    for (int i = 0; i < proto.node_size(); ++i) add_node(proto.node(i), i);
    add_outputs(proto);
  }

 private:
  Graph& graph() { return result_.graph; }

  void define(const std::string& name, ValueId id, const std::string& what) {
    if (name.empty()) ORCHID_FAIL() << file_ << ": " << what << " has an empty name";
    if (!names_.emplace(name, id).second) {
      ORCHID_FAIL() << file_ << ": value '" << name << "' is defined twice (" << what << ")";
    }
  }

  void add_initializers(const onnx::GraphProto& proto) {
    if (proto.sparse_initializer_size() > 0) {
      ORCHID_FAIL() << file_ << ": sparse initializers are not supported";
    }
    for (const auto& init : proto.initializer()) {
      std::string context = file_ + ": initializer '" + init.name() + "'";
      define(init.name(), graph().add_constant(init.name(), tensor_from_proto(init, base_dir_, context)),
             "initializer");
    }
  }

  // A graph input's shape, from --shape or the model, bound to at most 2^40
  // elements so that later shape arithmetic cannot overflow.
  Shape input_shape(const onnx::ValueInfoProto& input) {
    Shape shape = declared_input_shape(input);
    // Zero dimensions count as 1: [0, 2^62] holds no data, yet loops over it
    // would not end.
    long double size = 1;
    for (int64_t d : shape) size *= (long double)std::max<int64_t>(d, 1);
    if (size > (long double)(int64_t(1) << 40)) {
      ORCHID_FAIL() << file_ << ": input '" << input.name() << "' has shape " << shape_to_string(shape)
                    << ", more than 2^40 elements";
    }
    return shape;
  }

  Shape declared_input_shape(const onnx::ValueInfoProto& input) {
    const auto& type = input.type().tensor_type();
    auto given = options_.input_shapes.find(input.name());
    if (given != options_.input_shapes.end()) {
      if (type.has_shape() && type.shape().dim_size() != int(given->second.size())) {
        ORCHID_FAIL() << file_ << ": --shape for input '" << input.name() << "' has rank "
                      << given->second.size() << " but the model declares rank " << type.shape().dim_size();
      }
      return given->second;
    }
    if (!type.has_shape()) ORCHID_FAIL() << file_ << ": input '" << input.name() << "' has no shape; give one with --shape";
    Shape shape;
    for (int i = 0; i < type.shape().dim_size(); ++i) {
      const auto& dim = type.shape().dim(i);
      if (dim.has_dim_value() && dim.dim_value() < 0) {
        ORCHID_FAIL() << file_ << ": input '" << input.name() << "' declares dimension " << i << " as "
                      << dim.dim_value() << "; a dimension is a size (>= 0) or a symbolic name";
      }
      if (dim.has_dim_value()) {
        shape.push_back(dim.dim_value());
        continue;
      }
      std::string symbol = dim.has_dim_param() ? "'" + dim.dim_param() + "'" : "(unnamed)";
      result_.notes.push_back("input '" + input.name() + "': symbolic dimension " + symbol +
                              " bound to 1 (use --shape to choose)");
      shape.push_back(1);
    }
    return shape;
  }

  void add_inputs(const onnx::GraphProto& proto) {
    for (const auto& input : proto.input()) {
      // IR < 4 lists initializers among the inputs too.
      auto known = names_.find(input.name());
      if (known != names_.end() && graph().value(known->second).is_constant()) continue;
      if (!input.type().has_tensor_type()) {
        ORCHID_FAIL() << file_ << ": input '" << input.name()
                      << "' is not a tensor (sequence, map and optional inputs are not supported)";
      }
      int code = input.type().tensor_type().elem_type();
      DType dtype;
      if (!dtype_from_onnx(code, &dtype)) {
        ORCHID_FAIL() << file_ << ": input '" << input.name() << "' has unsupported element type "
                      << onnx_dtype_name(code);
      }
      TensorType type{dtype, input_shape(input)};
      result_.declared_inputs.push_back(input.name());
      auto offered = options_.specializable_inputs.find(input.name());
      if (offered != options_.specializable_inputs.end() && offered->second.type() != type) {
        ORCHID_FAIL() << file_ << ": value given for input '" << input.name() << "' has type "
                      << offered->second.type().to_string() << ", expected " << type.to_string();
      }
      if (offered != options_.specializable_inputs.end() && specialized_.count(input.name())) {
        define(input.name(), graph().add_constant(input.name(), offered->second), "graph input");
        continue;
      }
      ValueId id = graph().add_value(input.name(), type);
      define(input.name(), id, "graph input");
      graph().inputs().push_back(id);
      if (offered != options_.specializable_inputs.end()) {
        offered_[id] = offered->second;
        offered_from_[id] = {input.name()};
      }
    }
  }

  ValueId make_constant(const std::string& hint, Tensor value) {
    std::string name = hint;
    for (int k = 1; names_.count(name); ++k) name = hint + "_" + std::to_string(k);
    ValueId id = graph().add_constant(name, std::move(value));
    names_.emplace(name, id);
    return id;
  }

  Node convert_node(const onnx::NodeProto& proto, int index) {
    Node node;
    node.op = proto.op_type();
    node.domain = is_default_domain(proto.domain()) ? "" : proto.domain();
    node.name = proto.name().empty() ? proto.op_type() + "_" + std::to_string(index) : proto.name();
    for (const auto& attr : proto.attribute()) {
      node.attrs.set(attr.name(), convert_attribute(attr, base_dir_, file_ + ": " + node.describe()));
    }
    for (const auto& input : proto.input()) {
      if (input.empty()) {
        node.inputs.push_back(kNoValue);
        continue;
      }
      auto it = names_.find(input);
      if (it == names_.end()) {
        ORCHID_FAIL() << file_ << ": " << node.describe() << " reads '" << input
                      << "', which no earlier node, graph input or initializer defines";
      }
      node.inputs.push_back(it->second);
    }
    while (!node.inputs.empty() && node.inputs.back() == kNoValue) node.inputs.pop_back();
    // Output slots exist before inference: some operators (Split without
    // sizes) produce as many outputs as the node declares.
    node.outputs.assign(size_t(proto.output_size()), kNoValue);
    return node;
  }

  // Canonicalization rules read a node's first (data) input freely, so its
  // absence is reported before they run.
  void require_first_input(const Node& node) {
    const auto* schema = reference::OpRegistry::global().find(node.domain, canonical_op_name(node.op));
    if (schema && schema->min_inputs > 0 && (node.inputs.empty() || node.inputs[0] == kNoValue)) {
      ORCHID_FAIL() << file_ << ": " << node.describe() << ": input 0 is required but missing";
    }
  }

  void add_node(const onnx::NodeProto& proto, int index) {
    Node node = convert_node(proto, index);
    require_first_input(node);
    ConstantMaker maker = [this](const std::string& hint, Tensor value) {
      return make_constant(hint, std::move(value));
    };
    canonicalize_node(node, CanonicalizeContext{result_.opset, maker, graph()});
    std::vector<Tensor> folded;
    std::vector<TensorType> types = infer_or_fold(node, &folded);
    if (types.size() < size_t(proto.output_size())) {
      ORCHID_FAIL() << file_ << ": " << node.describe() << " has " << proto.output_size()
                    << " outputs, but the operator produces " << types.size();
    }
    for (int i = 0; i < proto.output_size(); ++i) {
      const std::string& name = proto.output(i);
      if (name.empty()) continue;
      ValueId id = folded.empty() ? graph().add_value(name, types[size_t(i)])
                                  : graph().add_constant(name, folded[size_t(i)]);
      define(name, id, "output of " + node.describe());
      node.outputs[size_t(i)] = id;
    }
    if (folded.empty()) {
      if (!offered_.empty()) propagate_offered_values(node);
      graph().add_node(std::move(node));
    }
  }

  // Whether a tensor of this type is small enough to be materialized while
  // importing (2^28 elements: 1 GiB of float32).
  static bool foldable_size(const TensorType& type) {
    long double size = 1;
    for (int64_t d : type.shape) size *= (long double)std::max<int64_t>(d, 1);
    return size <= (long double)(int64_t(1) << 28);
  }

  // Folds the node when every input is a constant; otherwise infers its
  // output types, specializing on offered input values where an operator
  // needs them.
  std::vector<TensorType> infer_or_fold(Node& node, std::vector<Tensor>* folded) {
    std::vector<const TensorType*> types;
    std::vector<const Tensor*> values;
    reference::Specialization specialization;
    bool all_constant = true;
    for (ValueId id : node.inputs) {
      const Value* value = id == kNoValue ? nullptr : &graph().value(id);
      types.push_back(value ? &value->type : nullptr);
      values.push_back(value && value->constant ? &*value->constant : nullptr);
      all_constant &= !value || value->is_constant();
      auto offered = offered_.find(id);
      specialization.offered.push_back(offered != offered_.end() ? &offered->second : nullptr);
    }
    // Shape and Size read only their input's static type, so they fold even
    // when the input is computed at run time.
    std::vector<Tensor> placeholders;
    if (!all_constant && node.domain.empty() && (node.op == "Shape" || node.op == "Size") &&
        !node.inputs.empty() && node.inputs[0] != kNoValue && !values[0] && foldable_size(*types[0])) {
      placeholders.emplace_back(*types[0]);
      values[0] = &placeholders[0];
      all_constant = true;
    }
    try {
      // Folding materializes the outputs: a huge one (ConstantOfShape of a
      // corrupt shape) stays a run-time node rather than being allocated here.
      if (all_constant) {
        for (const TensorType& type : reference::infer_node(node, types, values)) {
          all_constant &= foldable_size(type);
        }
      }
      if (all_constant) {
        *folded = reference::evaluate_node(node, values);
        std::vector<TensorType> out;
        for (const Tensor& t : *folded) out.push_back(t.type());
        return out;
      }
      auto out = reference::infer_node(node, types, values, &specialization);
      if (!specialization.used.empty()) {
        SpecializationNeeded needed{{}, node.describe()};
        for (size_t i : specialization.used) {
          const auto& from = offered_from_.at(node.inputs[i]);
          needed.inputs.insert(from.begin(), from.end());
        }
        throw needed;
      }
      return out;
    } catch (const Error& error) {
      throw Error(file_ + ": " + error.what());
    }
  }

  // When every run-time input of a node has an offered value and they are
  // small, computes the node's outputs on them, so that an operator further
  // down that needs such a value can specialize on the graph inputs behind it.
  void propagate_offered_values(const Node& node) {
    std::vector<const Tensor*> inputs;
    std::set<std::string> from;
    for (ValueId id : node.inputs) {
      if (id == kNoValue) {
        inputs.push_back(nullptr);
        continue;
      }
      const Value& value = graph().value(id);
      if (value.is_constant()) {
        inputs.push_back(&*value.constant);
        continue;
      }
      auto offered = offered_.find(id);
      if (offered == offered_.end() || offered->second.numel() > kMaxPropagatedElements) return;
      inputs.push_back(&offered->second);
      const auto& deps = offered_from_.at(id);
      from.insert(deps.begin(), deps.end());
    }
    std::vector<Tensor> outputs;
    try {
      outputs = reference::evaluate_node(node, inputs);
    } catch (const Error&) {
      return;  // the run-time values may be invalid for the node; not our concern here
    }
    for (size_t i = 0; i < node.outputs.size() && i < outputs.size(); ++i) {
      if (node.outputs[i] == kNoValue) continue;
      offered_[node.outputs[i]] = outputs[i];
      offered_from_[node.outputs[i]] = from;
    }
  }

  void add_outputs(const onnx::GraphProto& proto) {
    for (const auto& output : proto.output()) {
      auto it = names_.find(output.name());
      if (it == names_.end()) {
        ORCHID_FAIL() << file_ << ": graph output '" << output.name() << "' is not computed by any node";
      }
      graph().outputs().push_back(it->second);
    }
  }

  std::string file_;
  std::string base_dir_;
  const ImportOptions& options_;
  const std::set<std::string>& specialized_;  // graph inputs imported as constants
  ImportResult& result_;
  std::unordered_map<std::string, ValueId> names_;
  std::map<ValueId, Tensor> offered_;                     // offered or derived run-time values
  std::map<ValueId, std::set<std::string>> offered_from_;  // the graph inputs each derives from
};

}  // namespace

std::string read_model_file(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) ORCHID_FAIL() << path << ": is a folder, not a model file";
  if (!fs::is_regular_file(path, ec)) ORCHID_FAIL() << path << ": no such file";
  std::ifstream file(path, std::ios::binary);
  if (!file) ORCHID_FAIL() << path << ": cannot open the file";
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

namespace {

onnx::ModelProto parse_model(const std::string& bytes, const std::string& display_name) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    ORCHID_FAIL() << display_name << ": not a valid ONNX model (the protobuf is corrupt or truncated)";
  }
  if (!model.has_graph()) ORCHID_FAIL() << display_name << ": the model has no graph";
  return model;
}

}  // namespace

ImportResult import_model_bytes(const std::string& bytes, const std::string& display_name,
                                const std::string& base_dir, const ImportOptions& options) {
  onnx::ModelProto model = parse_model(bytes, display_name);
  check_opset_supported(model, display_name);
  check_operators_supported(model.graph(), display_name);
  // Each restart makes at least one more offered input constant, so this
  // ends after at most one pass per offered input.
  std::set<std::string> specialized;
  std::vector<std::string> notes;
  while (true) {
    ImportResult result;
    result.opset = default_opset(model);
    try {
      GraphBuilder(display_name, base_dir, options, specialized, result).build(model.graph());
    } catch (const SpecializationNeeded& needed) {
      size_t before = specialized.size();
      for (const std::string& name : needed.inputs) {
        if (specialized.insert(name).second) {
          notes.push_back("specialized on the value of input '" + name + "': " + needed.reason +
                          " needs it to know its output shape");
        }
      }
      ORCHID_CHECK(specialized.size() > before) << "specialization made no progress at " << needed.reason;
      continue;
    }
    result.notes.insert(result.notes.end(), notes.begin(), notes.end());
    result.specialized_inputs.assign(specialized.begin(), specialized.end());
    return result;
  }
}

ImportResult import_model(const std::string& path, const ImportOptions& options) {
  return import_model_bytes(read_model_file(path), path, fs::path(path).parent_path().string(), options);
}

std::vector<std::string> declared_model_inputs(const std::string& path) {
  onnx::ModelProto model = parse_model(read_model_file(path), path);
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  std::vector<std::string> names;
  for (const auto& input : model.graph().input()) {
    if (!initializers.count(input.name())) names.push_back(input.name());
  }
  return names;
}

}  // namespace orchid::onnx_frontend
