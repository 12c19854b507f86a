// The public C++ API (include/orchid/orchid.h): compile, save, load and run,
// errors as exceptions, caller-owned outputs, and concurrent runs.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include <gtest/gtest.h>
#include <unistd.h>

#include "frontend/onnx/importer.h"
#include "orchid/orchid.h"
#include "reference/interpreter.h"
#include "support/parallel.h"
#include "../test_temp_dir.h"

namespace orchid {
namespace {

namespace fs = std::filesystem;

const std::string kTinyCnn = std::string(ORCHID_SOURCE_DIR) + "/examples/tiny_cnn/model.onnx";

fs::path scratch_dir(const std::string& name) {
  const fs::path dir = orchid::testing::process_temp_dir("orchid-api-test") / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

CompileOptions test_options() {
  CompileOptions options;
  options.threads = 2;
  static const std::string cache = scratch_dir("cache").string();  // one per process: later compiles hit it
  options.cache_dir = cache;
  return options;
}

std::vector<float> random_floats(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> values(n);
  for (float& v : values) v = uniform(rng);
  return values;
}

// The tiny CNN's input as a TensorView over `pixels`.
std::map<std::string, TensorView> feeds_of(const Model& model, std::vector<float>& pixels) {
  const TensorInfo& input = model.inputs().at(0);
  return {{input.name, TensorView{input.dtype, input.shape, pixels.data()}}};
}

bool same_bytes(const Array& a, const Array& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

TEST(ModelApi, CompiledModelMatchesTheReferenceInterpreter) {
  const Model model = Model::compile(kTinyCnn, test_options());
  ASSERT_EQ(model.inputs().size(), 1u);
  ASSERT_EQ(model.outputs().size(), 1u);
  EXPECT_EQ(model.outputs()[0].shape, (std::vector<int64_t>{1, 10}));
  EXPECT_GT(model.summary().kernels, 0u);
  EXPECT_FALSE(model.summary().orchestration_text.empty());
  std::vector<float> pixels = random_floats(size_t(model.inputs()[0].numel()), 1);
  const std::vector<Array> outputs = model.run(feeds_of(model, pixels));

  const Graph graph = onnx_frontend::import_model(kTinyCnn).graph;
  Tensor input(graph.type(graph.inputs()[0]));
  std::memcpy(input.raw(), pixels.data(), input.nbytes());
  const std::vector<Tensor> expected = reference::run_graph(graph, {{model.inputs()[0].name, input}});
  ASSERT_EQ(outputs.size(), 1u);
  ASSERT_EQ(outputs[0].numel(), expected[0].numel());
  for (int64_t i = 0; i < expected[0].numel(); ++i) {
    EXPECT_NEAR(outputs[0].data_as<float>()[i], expected[0].data<float>()[i], 1e-4) << i;
  }
}

TEST(ModelApi, SavedAndLoadedModelGivesTheSameOutputs) {
  const Model model = Model::compile(kTinyCnn, test_options());
  const fs::path dir = scratch_dir("artifact");
  model.save(dir.string());
  const Model loaded = Model::load(dir.string(), LoadOptions{2});
  EXPECT_EQ(loaded.summary().kernels, model.summary().kernels);
  std::vector<float> pixels = random_floats(size_t(model.inputs()[0].numel()), 2);
  EXPECT_TRUE(same_bytes(model.run(feeds_of(model, pixels))[0], loaded.run(feeds_of(loaded, pixels))[0]));
}

TEST(ModelApi, CompilesFromBytes) {
  const std::string bytes = onnx_frontend::read_model_file(kTinyCnn);
  const Model from_bytes = Model::compile_bytes(bytes, test_options(), "tiny_cnn");
  const Model from_file = Model::compile(kTinyCnn, test_options());
  std::vector<float> pixels = random_floats(size_t(from_file.inputs()[0].numel()), 3);
  EXPECT_TRUE(same_bytes(from_bytes.run(feeds_of(from_bytes, pixels))[0], from_file.run(feeds_of(from_file, pixels))[0]));
}

// Instances made after the kernel cache was cleared run the kernels the
// model loaded when it was compiled.
TEST(ModelApi, KeepsRunningWhenTheKernelCacheIsCleared) {
  CompileOptions options = test_options();
  options.cache_dir = scratch_dir("cleared-cache").string();
  const Model model = Model::compile(kTinyCnn, options);
  fs::remove_all(options.cache_dir);
  std::vector<float> pixels = random_floats(size_t(model.inputs()[0].numel()), 6);
  EXPECT_EQ(model.run(feeds_of(model, pixels)).size(), 1u);
}

// Inputs and outputs at addresses no kernel would choose (4 bytes past a
// 64-byte boundary): read and written in place.
TEST(ModelApi, RunsIntoCallerOwnedUnalignedBuffers) {
  const Model model = Model::compile(kTinyCnn, test_options());
  const TensorInfo& in = model.inputs()[0];
  const TensorInfo& out = model.outputs()[0];
  std::vector<float> pixels = random_floats(size_t(in.numel()), 4);
  const std::vector<Array> expected = model.run(feeds_of(model, pixels));

  std::vector<float> input_storage(size_t(in.numel()) + 32), output_storage(size_t(out.numel()) + 32, -7.0f);
  float* input = input_storage.data() + 1;
  float* output = output_storage.data() + 1;
  std::memcpy(input, pixels.data(), in.nbytes());
  model.run({TensorView{in.dtype, in.shape, input}}, {TensorView{out.dtype, out.shape, output}});
  EXPECT_EQ(std::memcmp(output, expected[0].data(), out.nbytes()), 0);
  EXPECT_EQ(output_storage[0], -7.0f);  // nothing written outside the buffer
  EXPECT_EQ(output_storage[size_t(out.numel()) + 1], -7.0f);
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no orchid::Error";
}

TEST(ModelApi, BadInputIsAnOrchidErrorNamingIt) {
  EXPECT_NE(error_of([] { Model::compile("/no/such/model.onnx"); }).find("/no/such/model.onnx"), std::string::npos);
  EXPECT_NE(error_of([] { Model::load("/no/such/artifact"); }).find("/no/such/artifact"), std::string::npos);
  EXPECT_NE(error_of([] { Model::compile_bytes("not a model", {}, "junk.onnx"); }).find("junk.onnx"),
            std::string::npos);
  const Model model = Model::compile(kTinyCnn, test_options());
  const TensorInfo& in = model.inputs()[0];
  std::vector<float> pixels(size_t(in.numel()));
  EXPECT_NE(error_of([&] { model.run({{"nope", TensorView{in.dtype, in.shape, pixels.data()}}}); }).find("'nope'"),
            std::string::npos);
  const std::string wrong_shape = error_of([&] { model.run({{in.name, TensorView{in.dtype, {1, 3}, pixels.data()}}}); });
  EXPECT_NE(wrong_shape.find(in.name), std::string::npos) << wrong_shape;
  EXPECT_NE(error_of([&] { model.run({}); }).find(in.name), std::string::npos);
  std::vector<float> out(10);
  const std::string wrong_output = error_of([&] {
    model.run({TensorView{in.dtype, in.shape, pixels.data()}}, {TensorView{DType::Float32, {10}, out.data()}});
  });
  EXPECT_NE(wrong_output.find(model.outputs()[0].name), std::string::npos) << wrong_output;
  // The failed calls left the model usable.
  EXPECT_EQ(model.run(feeds_of(model, pixels)).size(), 1u);
}

// 8 threads x 100 runs on one model, each on its own inputs: every output is
// bitwise the output of a run alone.
TEST(ModelApi, ConcurrentRunsMatchRunsAlone) {
  const Model model = Model::compile(kTinyCnn, test_options());
  constexpr int kThreads = 8, kRuns = 100;
  std::vector<std::vector<float>> inputs;
  std::vector<Array> alone;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(random_floats(size_t(model.inputs()[0].numel()), 100 + uint64_t(t)));
    alone.push_back(model.run(feeds_of(model, inputs.back()))[0]);
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<float> pixels = inputs[size_t(t)];
      for (int r = 0; r < kRuns; ++r) mismatches[size_t(t)] += !same_bytes(model.run(feeds_of(model, pixels))[0], alone[size_t(t)]);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[size_t(t)], 0) << "thread " << t;
  EXPECT_GE(model.instances(), 1u);
  EXPECT_LE(model.instances(), size_t(kThreads));
}

TEST(ModelApi, MaxInstancesBoundsThePool) {
  CompileOptions options = test_options();
  options.max_instances = 1;
  const Model model = Model::compile(kTinyCnn, options);
  std::vector<float> pixels = random_floats(size_t(model.inputs()[0].numel()), 5);
  const Array expected = model.run(feeds_of(model, pixels))[0];
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      std::vector<float> mine = pixels;
      for (int r = 0; r < 20; ++r) mismatches += !same_bytes(model.run(feeds_of(model, mine))[0], expected);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(model.instances(), 1u);
}

TEST(ThreadCountScope, AppliesToTheCallingThreadOnly) {
  set_num_threads(2);
  {
    const ThreadCountScope one(1);
    EXPECT_EQ(num_threads(), 1);
    int other = 0;
    std::thread([&] { other = num_threads(); }).join();
    EXPECT_EQ(other, 2);
    {
      const ThreadCountScope three(3);
      EXPECT_EQ(num_threads(), 3);
    }
    EXPECT_EQ(num_threads(), 1);
  }
  EXPECT_EQ(num_threads(), 2);
  set_num_threads(0);
}

}  // namespace
}  // namespace orchid
