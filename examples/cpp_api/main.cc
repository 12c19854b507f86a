// orchid_api_example MODEL.onnx [ARTIFACT_DIR]: compiles an ONNX model with
// Orchid's C++ API, runs it on random inputs, saves and reloads it, runs it
// from four threads at once, and checks that every run gave the same outputs.
//
//   build/examples/orchid_api_example examples/tiny_cnn/model.onnx /tmp/tiny_cnn.orchid
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "orchid/orchid.h"

namespace {

// Random input data for every graph input, as raw bytes (float inputs in
// [-1, 1]; other types zero).
std::vector<std::vector<std::byte>> random_inputs(const orchid::Model& model) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<std::vector<std::byte>> data;
  for (const orchid::TensorInfo& input : model.inputs()) {
    data.emplace_back(input.nbytes());
    if (input.dtype != orchid::DType::Float32) continue;
    auto* values = reinterpret_cast<float*>(data.back().data());
    for (int64_t i = 0; i < input.numel(); ++i) values[i] = uniform(rng);
  }
  return data;
}

std::map<std::string, orchid::TensorView> feeds(const orchid::Model& model,
                                                std::vector<std::vector<std::byte>>& data) {
  std::map<std::string, orchid::TensorView> views;
  for (size_t i = 0; i < model.inputs().size(); ++i) {
    const orchid::TensorInfo& input = model.inputs()[i];
    views[input.name] = orchid::TensorView{input.dtype, input.shape, data[i].data()};
  }
  return views;
}

bool same(const std::vector<orchid::Array>& a, const std::vector<orchid::Array>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].nbytes() != b[i].nbytes() || std::memcmp(a[i].data(), b[i].data(), a[i].nbytes()) != 0) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: orchid_api_example MODEL.onnx [ARTIFACT_DIR]\n";
    return 2;
  }
  try {
    orchid::CompileOptions options;
    options.threads = 1;  // each run on one thread; the four callers below run side by side
    const orchid::Model model = orchid::Model::compile(argv[1], options);
    std::cout << "compiled " << argv[1] << ": " << model.summary().kernels << " kernels in "
              << model.summary().seconds << " s\n";
    std::vector<std::vector<std::byte>> data = random_inputs(model);
    const std::vector<orchid::Array> outputs = model.run(feeds(model, data));
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::cout << "output '" << model.outputs()[i].name << "' " << orchid::dtype_name(outputs[i].dtype()) << " ["
                << outputs[i].numel() << " elements]\n";
    }
    if (argc > 2) {
      model.save(argv[2]);
      const orchid::Model loaded = orchid::Model::load(argv[2], orchid::LoadOptions{1});
      if (!same(loaded.run(feeds(loaded, data)), outputs)) {
        std::cerr << "the reloaded model gave other outputs\n";
        return 1;
      }
      std::cout << "saved to and reloaded from " << argv[2] << ": same outputs\n";
    }
    int mismatches = 0;
    std::vector<std::thread> threads;
    std::mutex mutex;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        std::vector<std::vector<std::byte>> mine = data;
        for (int r = 0; r < 25; ++r) {
          const bool ok = same(model.run(feeds(model, mine)), outputs);
          const std::lock_guard lock(mutex);
          mismatches += !ok;
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    std::cout << "4 threads x 25 runs on " << model.instances() << " instances: " << mismatches << " mismatches\n";
    return mismatches == 0 ? 0 : 1;
  } catch (const orchid::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 3;
  }
}
