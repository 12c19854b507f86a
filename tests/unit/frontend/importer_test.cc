// Importer behaviour on well-formed models: external data, symbolic
// dimensions, opset canonicalization, constant folding and specialization.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "frontend/onnx/importer.h"
#include "frontend/onnx/tensor_proto.h"
#include "reference/interpreter.h"
#include "support/error.h"

namespace orchid::onnx_frontend {
namespace {

namespace fs = std::filesystem;

void add_input(onnx::GraphProto* graph, const std::string& name, int elem_type,
               const std::vector<std::string>& dims) {
  auto* input = graph->add_input();
  input->set_name(name);
  auto* type = input->mutable_type()->mutable_tensor_type();
  type->set_elem_type(elem_type);
  for (const auto& d : dims) {
    auto* dim = type->mutable_shape()->add_dim();
    if (std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
    else dim->set_dim_param(d);
  }
}

onnx::NodeProto* add_node(onnx::GraphProto* graph, const std::string& op, std::vector<std::string> inputs,
                          std::vector<std::string> outputs) {
  auto* node = graph->add_node();
  node->set_op_type(op);
  for (auto& i : inputs) node->add_input(i);
  for (auto& o : outputs) node->add_output(o);
  return node;
}

onnx::ModelProto model_with_opset(int opset) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* entry = model.add_opset_import();
  entry->set_domain("");
  entry->set_version(opset);
  return model;
}

TEST(Importer, ReadsExternalDataRelativeToTheModel) {
  fs::path dir = fs::temp_directory_path() / "orchid_external_data_test";
  fs::create_directories(dir);
  std::vector<float> weights = {1.5f, -2.0f, 3.25f};
  {
    std::ofstream data(dir / "weights.bin", std::ios::binary);
    data.write("padding!", 8);  // the tensor starts at offset 8
    data.write(reinterpret_cast<const char*>(weights.data()), sizeof(float) * weights.size());
  }
  onnx::ModelProto model = model_with_opset(17);
  auto* graph = model.mutable_graph();
  add_input(graph, "x", onnx::TensorProto::FLOAT, {"3"});
  auto* w = graph->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add_entry = [&](const std::string& k, const std::string& v) {
    auto* e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add_entry("location", "weights.bin");
  add_entry("offset", "8");
  add_entry("length", "12");
  add_node(graph, "Add", {"x", "w"}, {"y"});
  graph->add_output()->set_name("y");
  std::string path = (dir / "model.onnx").string();
  {
    std::ofstream file(path, std::ios::binary);
    model.SerializeToOstream(&file);
  }
  ImportResult result = import_model(path);
  auto out = reference::run_graph(result.graph, {{"x", Tensor::from_vector(DType::Float32, {3}, std::vector<float>{1, 1, 1})}});
  EXPECT_EQ(out[0].to_f64_vector(), (std::vector<double>{2.5, -1.0, 4.25}));
  fs::remove_all(dir);
}

TEST(Importer, BindsSymbolicDimensionsToOneOrToGivenShape) {
  onnx::ModelProto model = model_with_opset(17);
  auto* graph = model.mutable_graph();
  add_input(graph, "x", onnx::TensorProto::FLOAT, {"batch", "4"});
  add_node(graph, "Relu", {"x"}, {"y"});
  graph->add_output()->set_name("y");
  std::string bytes = model.SerializeAsString();
  ImportResult defaulted = import_model_bytes(bytes, "m.onnx", ".");
  EXPECT_EQ(defaulted.graph.type(defaulted.graph.outputs()[0]).shape, (Shape{1, 4}));
  ASSERT_EQ(defaulted.notes.size(), 1u);
  EXPECT_NE(defaulted.notes[0].find("'batch'"), std::string::npos);
  ImportOptions options;
  options.input_shapes["x"] = {8, 4};
  ImportResult bound = import_model_bytes(bytes, "m.onnx", ".", options);
  EXPECT_EQ(bound.graph.type(bound.graph.outputs()[0]).shape, (Shape{8, 4}));
  options.input_shapes["x"] = {8, 4, 1};
  EXPECT_THROW(import_model_bytes(bytes, "m.onnx", ".", options), Error);
}

// PyTorch exports compute Reshape's target shape from Shape/Gather/Concat;
// with static shapes that subgraph folds to a constant.
TEST(Importer, FoldsShapeSubgraphs) {
  onnx::ModelProto model = model_with_opset(13);
  auto* graph = model.mutable_graph();
  add_input(graph, "x", onnx::TensorProto::FLOAT, {"2", "3", "4"});
  add_node(graph, "Shape", {"x"}, {"s"});
  auto* idx = graph->add_initializer();
  idx->set_name("zero");
  idx->set_data_type(onnx::TensorProto::INT64);
  idx->add_int64_data(0);
  auto* gather = add_node(graph, "Gather", {"s", "zero"}, {"n"});
  gather->add_attribute()->set_name("axis");
  gather->mutable_attribute(0)->set_type(onnx::AttributeProto::INT);
  gather->mutable_attribute(0)->set_i(0);
  auto* minus_one = graph->add_initializer();
  minus_one->set_name("minus_one");
  minus_one->set_data_type(onnx::TensorProto::INT64);
  minus_one->add_dims(1);
  minus_one->add_int64_data(-1);
  add_node(graph, "Unsqueeze", {"n", "axes0"}, {"n1"});
  auto* axes = graph->add_initializer();
  axes->set_name("axes0");
  axes->set_data_type(onnx::TensorProto::INT64);
  axes->add_dims(1);
  axes->add_int64_data(0);
  add_node(graph, "Concat", {"n1", "minus_one"}, {"shape"})->add_attribute()->set_name("axis");
  graph->mutable_node(3)->mutable_attribute(0)->set_type(onnx::AttributeProto::INT);
  graph->mutable_node(3)->mutable_attribute(0)->set_i(0);
  add_node(graph, "Reshape", {"x", "shape"}, {"y"});
  graph->add_output()->set_name("y");
  ImportResult result = import_model_bytes(model.SerializeAsString(), "m.onnx", ".");
  ASSERT_EQ(result.graph.nodes().size(), 1u) << "only the Reshape should remain";
  EXPECT_EQ(result.graph.nodes()[0].op, "Reshape");
  EXPECT_EQ(result.graph.type(result.graph.outputs()[0]).shape, (Shape{2, 12}));
}

TEST(Importer, CanonicalizesOpset11SqueezeAxesIntoAnInput) {
  onnx::ModelProto model = model_with_opset(11);
  auto* graph = model.mutable_graph();
  add_input(graph, "x", onnx::TensorProto::FLOAT, {"1", "3", "1"});
  auto* node = add_node(graph, "Squeeze", {"x"}, {"y"});
  auto* attr = node->add_attribute();
  attr->set_name("axes");
  attr->set_type(onnx::AttributeProto::INTS);
  attr->add_ints(0);
  graph->add_output()->set_name("y");
  ImportResult result = import_model_bytes(model.SerializeAsString(), "m.onnx", ".");
  const Node& squeeze = result.graph.nodes().at(0);
  EXPECT_FALSE(squeeze.attrs.has("axes"));
  ASSERT_EQ(squeeze.inputs.size(), 2u);
  EXPECT_EQ(result.graph.value(squeeze.inputs[1]).constant->to_i64_vector(), (std::vector<int64_t>{0}));
  EXPECT_EQ(result.graph.type(result.graph.outputs()[0]).shape, (Shape{3, 1}));
}

TEST(Importer, SpecializesOnOfferedInputValuesAndSaysSo) {
  onnx::ModelProto model = model_with_opset(17);
  auto* graph = model.mutable_graph();
  add_input(graph, "x", onnx::TensorProto::FLOAT, {"2", "6"});
  add_input(graph, "shape", onnx::TensorProto::INT64, {"2"});
  add_node(graph, "Reshape", {"x", "shape"}, {"y"});
  graph->add_output()->set_name("y");
  std::string bytes = model.SerializeAsString();
  EXPECT_THROW(import_model_bytes(bytes, "m.onnx", "."), Error);
  ImportOptions options;
  options.specializable_inputs["shape"] = Tensor::vector_i64({3, 4});
  ImportResult result = import_model_bytes(bytes, "m.onnx", ".", options);
  EXPECT_EQ(result.graph.type(result.graph.outputs()[0]).shape, (Shape{3, 4}));
  EXPECT_EQ(result.graph.inputs().size(), 1u);
  ASSERT_EQ(result.notes.size(), 1u);
  EXPECT_NE(result.notes[0].find("specialized"), std::string::npos);
}

TEST(TensorProto, RoundTripsThroughFiles) {
  fs::path path = fs::temp_directory_path() / "orchid_tensor_roundtrip.pb";
  Tensor t = Tensor::from_vector(DType::Int32, {2, 2}, std::vector<int>{1, -2, 3, 4});
  write_tensor_file(path.string(), t, "t");
  NamedTensor back = read_tensor_file(path.string());
  EXPECT_EQ(back.name, "t");
  EXPECT_EQ(back.tensor.type(), t.type());
  EXPECT_EQ(back.tensor.to_i64_vector(), t.to_i64_vector());
  fs::remove(path);
}

}  // namespace
}  // namespace orchid::onnx_frontend
