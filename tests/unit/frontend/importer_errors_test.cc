// Every user error the ONNX importer can meet gives one orchid::Error whose
// message names the file, the node and operator, and what was expected
// (DESIGN.md: "every user error has a test"). Models are built here as
// ModelProto messages, so each test states its defect in a few lines.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "frontend/onnx/importer.h"
#include "support/error.h"

namespace orchid::onnx_frontend {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- builders

void set_type(onnx::ValueInfoProto* info, const std::string& name, int elem_type,
              const std::vector<int64_t>& dims) {
  info->set_name(name);
  auto* tensor_type = info->mutable_type()->mutable_tensor_type();
  tensor_type->set_elem_type(elem_type);
  auto* shape = tensor_type->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

// A model with opset 17, no nodes yet, and the given float inputs/outputs.
onnx::ModelProto make_model(const std::vector<std::pair<std::string, std::vector<int64_t>>>& inputs,
                            const std::vector<std::string>& outputs) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  auto* graph = model.mutable_graph();
  graph->set_name("g");
  for (const auto& [name, dims] : inputs) set_type(graph->add_input(), name, onnx::TensorProto::FLOAT, dims);
  for (const auto& name : outputs) set_type(graph->add_output(), name, onnx::TensorProto::FLOAT, {});
  return model;
}

onnx::NodeProto* add_node(onnx::ModelProto& model, const std::string& op, const std::string& name,
                          const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                          const std::string& domain = "") {
  auto* node = model.mutable_graph()->add_node();
  node->set_op_type(op);
  node->set_name(name);
  node->set_domain(domain);
  for (const auto& in : inputs) node->add_input(in);
  for (const auto& out : outputs) node->add_output(out);
  return node;
}

onnx::TensorProto* add_float_initializer(onnx::ModelProto& model, const std::string& name,
                                         const std::vector<int64_t>& dims) {
  auto* init = model.mutable_graph()->add_initializer();
  init->set_name(name);
  init->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    init->add_dims(d);
    n *= d;
  }
  init->set_raw_data(std::string(size_t(n) * 4, '\0'));
  return init;
}

std::string serialize(const onnx::ModelProto& model) {
  std::string bytes;
  EXPECT_TRUE(model.SerializeToString(&bytes));
  return bytes;
}

// The message of the orchid::Error that importing `bytes` raises; fails the
// test when import succeeds or raises anything else.
std::string import_error(const std::string& bytes, const std::string& base_dir = "/nonexistent",
                         const ImportOptions& options = {}) {
  try {
    import_model_bytes(bytes, "bad.onnx", base_dir, options);
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not an orchid::Error: " << e.what();
    return "";
  }
  ADD_FAILURE() << "import succeeded";
  return "";
}

std::string import_error(const onnx::ModelProto& model, const std::string& base_dir = "/nonexistent",
                         const ImportOptions& options = {}) {
  return import_error(serialize(model), base_dir, options);
}

// Every fragment must appear in the message.
#define EXPECT_MESSAGE(message, ...)                                                 \
  for (const std::string& fragment : std::vector<std::string>{__VA_ARGS__}) {       \
    EXPECT_NE((message).find(fragment), std::string::npos)                          \
        << "missing '" << fragment << "' in: " << (message);                        \
  }

// A small valid model: y = Relu(x).
onnx::ModelProto relu_model() {
  auto model = make_model({{"x", {2, 3}}}, {"y"});
  add_node(model, "Relu", "relu", {"x"}, {"y"});
  return model;
}

// A scratch folder for external-data files, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("orchid_importer_errors_" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path_ / name, std::ios::binary) << bytes;
  }

 private:
  fs::path path_;
};

// ---------------------------------------------------------------- files and bytes

TEST(ImporterErrors, ValidModelImports) {
  auto result = import_model_bytes(serialize(relu_model()), "ok.onnx", "/nonexistent");
  EXPECT_EQ(result.graph.nodes().size(), 1u);
}

TEST(ImporterErrors, MissingFile) {
  try {
    import_model("/nonexistent/dir/missing.onnx");
    FAIL() << "import succeeded";
  } catch (const Error& e) {
    EXPECT_MESSAGE(std::string(e.what()), "/nonexistent/dir/missing.onnx", "no such file");
  }
}

TEST(ImporterErrors, EmptyFile) {
  std::string message = import_error(std::string());
  EXPECT_MESSAGE(message, "bad.onnx", "no graph");
}

TEST(ImporterErrors, TruncatedModel) {
  auto model = relu_model();
  add_float_initializer(model, "w", {16, 16});  // makes the graph field long
  std::string bytes = serialize(model);
  std::string message = import_error(bytes.substr(0, bytes.size() / 2));
  EXPECT_MESSAGE(message, "bad.onnx", "not a valid ONNX model", "corrupt or truncated");
}

TEST(ImporterErrors, RandomBytes) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 20; ++trial) {
    std::string bytes(64 + trial * 37, '\0');
    for (char& c : bytes) c = char(rng());
    std::string message = import_error(bytes);
    EXPECT_MESSAGE(message, "bad.onnx");
  }
}

// ---------------------------------------------------------------- operators

TEST(ImporterErrors, UnknownOperatorsAreListedTogether) {
  auto model = make_model({{"x", {2}}}, {"c"});
  add_node(model, "FrobnicateA", "first", {"x"}, {"a"});
  add_node(model, "Relu", "fine", {"a"}, {"b"});
  add_node(model, "FrobnicateB", "second", {"b"}, {"c1"});
  add_node(model, "FrobnicateA", "third", {"c1"}, {"c"});
  std::string message = import_error(model);
  EXPECT_MESSAGE(message, "bad.onnx", "unsupported operators", "FrobnicateA (nodes 'first', 'third')",
                 "FrobnicateB (node 'second')");
  EXPECT_EQ(message.find("Relu"), std::string::npos) << message;
}

TEST(ImporterErrors, UnknownDomain) {
  auto model = make_model({{"x", {2}}}, {"y"});
  add_node(model, "Foo", "foo", {"x"}, {"y"}, "com.example");
  std::string message = import_error(model);
  EXPECT_MESSAGE(message, "bad.onnx", "unsupported operator", "com.example.Foo", "'foo'");
}

TEST(ImporterErrors, ControlFlowIsUnsupported) {
  auto model = make_model({{"x", {2}}}, {"y"});
  auto* node = add_node(model, "If", "branch", {"x"}, {"y"});
  auto* attr = node->add_attribute();
  attr->set_name("then_branch");
  attr->set_type(onnx::AttributeProto::GRAPH);
  attr->mutable_g()->set_name("then");
  std::string message = import_error(model);
  EXPECT_MESSAGE(message, "bad.onnx", "unsupported operator", "If", "'branch'");
}

// ---------------------------------------------------------------- values

TEST(ImporterErrors, UndefinedValue) {
  auto model = make_model({{"x", {2}}}, {"y"});
  add_node(model, "Add", "adder", {"x", "ghost"}, {"y"});
  std::string message = import_error(model);
  EXPECT_MESSAGE(message, "bad.onnx", "node 'adder' (Add)", "'ghost'", "no earlier node");
}

TEST(ImporterErrors, DuplicateValueNames) {
  auto model = make_model({{"x", {2}}}, {"y"});
  add_node(model, "Relu", "r1", {"x"}, {"y"});
  add_node(model, "Neg", "r2", {"x"}, {"y"});
  std::string message = import_error(model);
  EXPECT_MESSAGE(message, "bad.onnx", "'y'", "defined twice", "node 'r2' (Neg)");
}

TEST(ImporterErrors, InputDefinedTwice) {
  auto model = make_model({{"x", {2}}, {"x", {3}}}, {"x"});
  std::string message = import_error(model);
  EXPECT_MESSAGE(message, "bad.onnx", "'x'", "defined twice");
}

TEST(ImporterErrors, OutputNobodyComputes) {
  auto model = relu_model();
  set_type(model.mutable_graph()->add_output(), "z", onnx::TensorProto::FLOAT, {});
  std::string message = import_error(model);
  EXPECT_MESSAGE(message, "bad.onnx", "graph output 'z'", "not computed");
}

TEST(ImporterErrors, InputWithoutShape) {
  auto model = make_model({}, {"y"});
  auto* input = model.mutable_graph()->add_input();
  input->set_name("x");
  input->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  add_node(model, "Relu", "relu", {"x"}, {"y"});
  std::string message = import_error(model);
  EXPECT_MESSAGE(message, "bad.onnx", "input 'x'", "no shape", "--shape");
}

TEST(ImporterErrors, InputWithUnsupportedType) {
  auto model = make_model({}, {"y"});
  set_type(model.mutable_graph()->add_input(), "x", onnx::TensorProto::STRING, {2});
  add_node(model, "Identity", "id", {"x"}, {"y"});
  std::string message = import_error(model);
  EXPECT_MESSAGE(message, "bad.onnx", "input 'x'", "unsupported element type");
}

TEST(ImporterErrors, ShapeOptionOfWrongRank) {
  ImportOptions options;
  options.input_shapes["x"] = {1, 2, 3};
  std::string message = import_error(relu_model(), "/nonexistent", options);
  EXPECT_MESSAGE(message, "bad.onnx", "--shape", "'x'", "rank 3", "rank 2");
}

// ---------------------------------------------------------------- initializers

TEST(ImporterErrors, RawDataSizeMismatch) {
  auto model = make_model({{"x", {2, 3}}}, {"y"});
  add_float_initializer(model, "w", {2, 3})->set_raw_data(std::string(20, '\0'));
  add_node(model, "Add", "add", {"x", "w"}, {"y"});
  std::string message = import_error(model);
  EXPECT_MESSAGE(message, "bad.onnx", "initializer 'w'", "20 bytes", "need 24");
}

TEST(ImporterErrors, TypedDataCountMismatch) {
  auto model = make_model({{"x", {2, 3}}}, {"y"});
  auto* init = add_float_initializer(model, "w", {2, 3});
  init->clear_raw_data();
  init->add_float_data(1.0f);
  add_node(model, "Add", "add", {"x", "w"}, {"y"});
  std::string message = import_error(model);
  EXPECT_MESSAGE(message, "bad.onnx", "initializer 'w'", "has 1 values", "needs 6");
}

TEST(ImporterErrors, NegativeAndHugeInitializerDims) {
  auto model = make_model({{"x", {2}}}, {"y"});
  add_float_initializer(model, "w", {2})->set_dims(0, -3);
  add_node(model, "Add", "add", {"x", "w"}, {"y"});
  EXPECT_MESSAGE(import_error(model), "bad.onnx", "initializer 'w'", "negative dimension -3");

  auto huge = make_model({{"x", {2}}}, {"y"});
  auto* init = add_float_initializer(huge, "w", {2});
  init->set_dims(0, int64_t(1) << 40);
  init->add_dims(int64_t(1) << 40);
  add_node(huge, "Add", "add", {"x", "w"}, {"y"});
  EXPECT_MESSAGE(import_error(huge), "bad.onnx", "initializer 'w'", "too large");

  auto empty = make_model({{"x", {2}}}, {"y"});
  init = add_float_initializer(empty, "w", {0});
  init->add_dims(int64_t(1) << 62);  // no data, yet a loop over it would not end
  add_node(empty, "Add", "add", {"x", "w"}, {"y"});
  EXPECT_MESSAGE(import_error(empty), "bad.onnx", "initializer 'w'", "too large");
}

// A big declared shape with little data is rejected before anything of the
// declared size is allocated.
TEST(ImporterErrors, LargeShapeWithoutData) {
  auto model = make_model({{"x", {2}}}, {"y"});
  auto* init = add_float_initializer(model, "w", {2});
  init->set_dims(0, int64_t(1) << 38);
  init->clear_raw_data();
  add_node(model, "Add", "add", {"x", "w"}, {"y"});
  EXPECT_MESSAGE(import_error(model), "bad.onnx", "initializer 'w'", "has 0 values", "needs 274877906944");
  init->set_raw_data(std::string(8, '\0'));
  EXPECT_MESSAGE(import_error(model), "bad.onnx", "initializer 'w'", "raw data has 8 bytes");
}

TEST(ImporterErrors, HugeInputShape) {
  auto model = make_model({{"x", {int64_t(1) << 30, int64_t(1) << 30}}}, {"y"});
  add_node(model, "Relu", "relu", {"x"}, {"y"});
  EXPECT_MESSAGE(import_error(model), "bad.onnx", "input 'x'", "more than 2^40 elements");
  ImportOptions options;
  options.input_shapes["x"] = {0, int64_t(1) << 62};
  EXPECT_MESSAGE(import_error(relu_model(), "/nonexistent", options), "bad.onnx", "input 'x'",
                 "more than 2^40 elements");
}

// Folding would materialize 2^38 elements: the importer leaves such nodes to
// run time instead of allocating them.
TEST(ImporterErrors, HugeConstantIsNotFolded) {
  auto model = make_model({{"x", {int64_t(1) << 19, int64_t(1) << 19}}}, {"y", "s"});
  auto* shape = model.mutable_graph()->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(2);
  shape->add_int64_data(int64_t(1) << 19);
  shape->add_int64_data(int64_t(1) << 19);
  add_node(model, "ConstantOfShape", "fill", {"shape"}, {"y"});
  add_node(model, "Shape", "shape_of_x", {"x"}, {"s"});
  auto result = import_model_bytes(serialize(model), "big.onnx", "/nonexistent");
  EXPECT_EQ(result.graph.nodes().size(), 2u);
}

// An initializer whose data lives in `location` (offset 0, the tensor's size).
onnx::ModelProto external_model(const std::string& location) {
  auto model = make_model({{"x", {2, 3}}}, {"y"});
  auto* init = add_float_initializer(model, "w", {2, 3});
  init->clear_raw_data();
  init->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = init->add_external_data();
  entry->set_key("location");
  entry->set_value(location);
  add_node(model, "Add", "add", {"x", "w"}, {"y"});
  return model;
}

TEST(ImporterErrors, ExternalDataWorks) {
  ScratchDir dir;
  dir.write("weights.bin", std::string(24, '\0'));
  auto result = import_model_bytes(serialize(external_model("weights.bin")), "ok.onnx", dir.path().string());
  EXPECT_EQ(result.graph.nodes().size(), 1u);
}

TEST(ImporterErrors, ExternalDataMissing) {
  ScratchDir dir;
  std::string message = import_error(external_model("weights.bin"), dir.path().string());
  EXPECT_MESSAGE(message, "bad.onnx", "initializer 'w'", "cannot open external data file", "weights.bin");
}

TEST(ImporterErrors, ExternalDataTooShort) {
  ScratchDir dir;
  dir.write("weights.bin", std::string(10, '\0'));
  std::string message = import_error(external_model("weights.bin"), dir.path().string());
  EXPECT_MESSAGE(message, "bad.onnx", "initializer 'w'", "weights.bin", "too short", "24 bytes");
}

TEST(ImporterErrors, ExternalDataOutsideTheModelFolder) {
  ScratchDir dir;
  for (std::string location : {"../weights.bin", "sub/../../weights.bin", "/etc/passwd"}) {
    std::string message = import_error(external_model(location), dir.path().string());
    EXPECT_MESSAGE(message, "bad.onnx", "initializer 'w'", "'" + location + "'", "inside the model's folder");
  }
}

TEST(ImporterErrors, ExternalDataBadOffset) {
  ScratchDir dir;
  dir.write("weights.bin", std::string(24, '\0'));
  auto model = external_model("weights.bin");
  auto* entry = model.mutable_graph()->mutable_initializer(0)->add_external_data();
  entry->set_key("offset");
  entry->set_value("lots");
  EXPECT_MESSAGE(import_error(model, dir.path().string()), "bad.onnx", "initializer 'w'", "offset 'lots'",
                 "not a number");
  entry->set_value("-8");
  EXPECT_MESSAGE(import_error(model, dir.path().string()), "bad.onnx", "initializer 'w'", "offset -8",
                 "negative");
  entry->set_value("8");
  EXPECT_MESSAGE(import_error(model, dir.path().string()), "bad.onnx", "initializer 'w'", "too short",
                 "at offset 8");
}

TEST(ImporterErrors, ExternalDataOfHugeTensor) {
  ScratchDir dir;
  dir.write("weights.bin", std::string(24, '\0'));
  auto model = external_model("weights.bin");
  model.mutable_graph()->mutable_initializer(0)->set_dims(0, int64_t(1) << 36);
  EXPECT_MESSAGE(import_error(model, dir.path().string()), "bad.onnx", "initializer 'w'", "too short");
}

// ---------------------------------------------------------------- shape inference

TEST(ImporterErrors, ReshapeShapeMustBeKnownAtLoadTime) {
  auto model = make_model({{"x", {2, 3}}}, {"y"});
  set_type(model.mutable_graph()->add_input(), "shape", onnx::TensorProto::INT64, {2});
  add_node(model, "Reshape", "reshape", {"x", "shape"}, {"y"});
  std::string message = import_error(model);
  EXPECT_MESSAGE(message, "bad.onnx", "node 'reshape' (Reshape)", "shape", "must be known when the model is loaded");
}

TEST(ImporterErrors, ConvWeightOfWrongRank) {
  auto model = make_model({{"x", {1, 3, 8, 8}}}, {"y"});
  add_float_initializer(model, "w", {4, 3, 3});
  add_node(model, "Conv", "conv1", {"x", "w"}, {"y"});
  std::string message = import_error(model);
  EXPECT_MESSAGE(message, "bad.onnx", "node 'conv1' (Conv)", "1x3x8x8", "4x3x3");
}

TEST(ImporterErrors, AddOfIncompatibleShapes) {
  auto model = make_model({{"a", {2, 3}}, {"b", {4}}}, {"y"});
  add_node(model, "Add", "adder", {"a", "b"}, {"y"});
  std::string message = import_error(model);
  EXPECT_MESSAGE(message, "bad.onnx", "node 'adder' (Add)");
}

// Canonicalization (opset-10 Resize to opset 18) must not read a data input
// that is not there.
TEST(ImporterErrors, MissingDataInput) {
  auto model = make_model({{"x", {2}}}, {"y"});
  model.mutable_opset_import(0)->set_version(10);
  add_node(model, "Resize", "resize", {}, {"y"});
  EXPECT_MESSAGE(import_error(model), "bad.onnx", "node 'resize' (Resize)", "input 0 is required but missing");
  add_node(model, "Upsample", "up", {"", "x"}, {"z"});
  model.mutable_graph()->mutable_node()->DeleteSubrange(0, 1);
  EXPECT_MESSAGE(import_error(model), "bad.onnx", "node 'up' (Upsample)", "input 0 is required but missing");
}

TEST(ImporterErrors, TooManyOutputs) {
  auto model = make_model({{"x", {2}}}, {"y"});
  add_node(model, "Relu", "relu", {"x"}, {"y", "extra"});
  std::string message = import_error(model);
  EXPECT_MESSAGE(message, "bad.onnx", "node 'relu' (Relu)", "2 outputs");
}

TEST(ImporterErrors, WrongAttributeType) {
  auto model = make_model({{"x", {2, 3}}}, {"y"});
  auto* node = add_node(model, "Transpose", "tr", {"x"}, {"y"});
  auto* attr = node->add_attribute();
  attr->set_name("perm");
  attr->set_type(onnx::AttributeProto::STRING);
  attr->set_s("1,0");
  std::string message = import_error(model);
  EXPECT_MESSAGE(message, "bad.onnx", "node 'tr' (Transpose)", "perm");
}

TEST(ImporterErrors, SpecializedValueOfWrongType) {
  auto model = make_model({{"x", {2, 3}}}, {"y"});
  set_type(model.mutable_graph()->add_input(), "shape", onnx::TensorProto::INT64, {2});
  add_node(model, "Reshape", "reshape", {"x", "shape"}, {"y"});
  ImportOptions options;
  options.specializable_inputs["shape"] = Tensor::vector_i64({3, 2, 1});
  std::string message = import_error(model, "/nonexistent", options);
  EXPECT_MESSAGE(message, "bad.onnx", "input 'shape'", "int64[3]", "expected int64[2]");
}

// ---------------------------------------------------------------- model validation

TEST(ImporterErrors, OpsetNewerThanImplementedIsRefused) {
  for (int opset : {19, 21, 99}) {
    auto model = make_model({{"x", {2}}}, {"y"});
    model.mutable_opset_import(0)->set_version(opset);
    add_node(model, "Relu", "relu", {"x"}, {"y"});
    EXPECT_MESSAGE(import_error(model), "bad.onnx", "opset " + std::to_string(opset), "opsets 1 to 18",
                   "convert_version");
  }
  // The newest implemented opset imports.
  auto model = make_model({{"x", {2}}}, {"y"});
  model.mutable_opset_import(0)->set_version(18);
  add_node(model, "Relu", "relu", {"x"}, {"y"});
  EXPECT_NO_THROW(import_model_bytes(model.SerializeAsString(), "ok.onnx", "."));
}

TEST(ImporterErrors, NegativeInputDimensionIsAnError) {
  auto model = make_model({{"x", {2, -4}}}, {"y"});
  add_node(model, "Relu", "relu", {"x"}, {"y"});
  EXPECT_MESSAGE(import_error(model), "bad.onnx", "input 'x'", "dimension 1 as -4");
}

}  // namespace
}  // namespace orchid::onnx_frontend
