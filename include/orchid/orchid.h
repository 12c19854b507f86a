// Orchid as a library: compile an ONNX model into a program of kernels, save
// and load it, run it.
//
//   orchid::CompileOptions options;
//   options.threads = 2;
//   orchid::Model model = orchid::Model::compile("model.onnx", options);
//   std::vector<orchid::Array> outputs = model.run({{"input", orchid::TensorView::of(pixels, {1, 3, 224, 224})}});
//   model.save("model.orchid");              // later: orchid::Model::load("model.orchid")
//
// Errors are exceptions: orchid::Error for bad input (a malformed model, an
// unsupported operator, a wrong feed), with the same messages as the CLI;
// orchid::InternalError for a bug in Orchid.
//
// Concurrency: any number of threads may call run() on one Model at once.
// Each concurrent call runs on an instance of the program of its own (its
// kernels with their packed weights, and its arena of intermediates); idle
// instances are kept in a pool and reused, so a model costs one instance's
// memory per call that has run concurrently with others (at most
// max_instances, when set: further calls wait). The unpacked weights are held
// once, by the model. Outputs do not depend on how many calls run at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "orchid/dtype.h"
#include "orchid/error.h"

namespace orchid {

// A graph input or output: name, element type, shape.
struct TensorInfo {
  std::string name;
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  int64_t numel() const;
  size_t nbytes() const;
};

// Dense row-major memory the caller owns, for inputs and caller-provided
// outputs. Any alignment of `data` is accepted.
struct TensorView {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  void* data = nullptr;

  template <typename T>
  static TensorView of(T* data, std::vector<int64_t> shape);
  size_t nbytes() const;
};

// A tensor the library allocated (run()'s outputs): dense row-major, 64-byte
// aligned; copies share the memory.
class Array {
 public:
  Array() = default;
  Array(DType dtype, std::vector<int64_t> shape);  // zeroed
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t numel() const;
  size_t nbytes() const;
  void* data() { return data_; }
  const void* data() const { return data_; }
  template <typename T>
  T* data_as() { return static_cast<T*>(data_); }
  template <typename T>
  const T* data_as() const { return static_cast<const T*>(data_); }
  TensorView view() { return {dtype_, shape_, data_}; }

  // An array over memory that `owner` keeps alive (for the library's outputs).
  Array(DType dtype, std::vector<int64_t> shape, void* data, std::shared_ptr<void> owner);

 private:
  DType dtype_ = DType::Float32;
  std::vector<int64_t> shape_;
  void* data_ = nullptr;
  std::shared_ptr<void> owner_;
};

// Where a long compile is: "candidates", "profiling 12/40", "solving", "codegen".
struct Progress {
  std::string stage;
  size_t done = 0;
  size_t total = 0;          // 0: no count for this stage
  double eta_seconds = -1;   // < 0: unknown
};

struct CompileOptions {
  // Threads the kernels are timed with while compiling and run with
  // afterwards (per model, not per process); 0: all cores.
  int threads = 0;
  bool fusion = true;    // false: the baseline plan, one kernel per primitive (`--no-fusion`)
  bool profile = true;   // false: analytical costs and the cache only (`--no-profile`)
  // OLLIE's derivation of Conv, ConvTranspose and MatMul forms, chosen by the
  // plan jointly with fusion (`--no-derive` turns it off); with fusion only.
  bool derive = true;
  // Seconds of derivation search and measurement per compile (`--derive-budget`):
  // the heaviest primitive kinds first; decisions from earlier compiles are free.
  double derive_budget_seconds = 20;
  // false: faster derived forms replace their originals before fusion is
  // planned (`--derive-replace`, the earlier design, for comparison).
  bool derive_jointly = true;
  std::string cache_dir; // measured costs and built kernels; empty: $ORCHID_CACHE_DIR, else ~/.cache/orchid
  // Shapes for inputs with symbolic dimensions (unbound ones become 1).
  std::map<std::string, std::vector<int64_t>> input_shapes;
  std::function<void(const Progress&)> progress;  // called from the compiling thread
  size_t max_instances = 0;  // concurrent run() calls served at once; 0: no limit
};

struct LoadOptions {
  int threads = 0;           // 0: all cores
  size_t max_instances = 0;  // as in CompileOptions
};

// What compiling found and chose, for people (the CLI prints it).
struct CompileSummary {
  std::vector<std::string> notes;  // import notes: bound symbolic dimensions, specializations
  size_t primitives = 0;
  size_t kernels = 0;
  size_t weight_bytes = 0;
  double seconds = 0;      // the whole compile
  std::string orchestration_text;  // how the BLP chose the plan (empty with fusion off)
  std::string derivation_text;     // what derivation replaced (empty with derivation off)
};

struct ReportOptions {
  int runs = 20;                  // timed runs for the per-kernel times
  bool compare_no_fusion = true;  // also build and time the one-kernel-per-primitive plan
};

class Model {
 public:
  // Compiles an ONNX model file, or a serialized ModelProto (`name` stands for
  // the file in messages; external data is looked up in `base_dir`).
  static Model compile(const std::string& onnx_path, const CompileOptions& options = {});
  static Model compile_bytes(const std::string& onnx_bytes, const CompileOptions& options = {},
                             const std::string& name = "<model bytes>", const std::string& base_dir = ".");
  // Loads a folder written by save() or `orchid compile`.
  static Model load(const std::string& dir, const LoadOptions& options = {});

  // Writes the artifact folder (plan.json, weights.bin, kernels.so).
  void save(const std::string& dir) const;
  // Times the program and writes a self-contained HTML page of its plan.
  void report(const std::string& html_path, const ReportOptions& options = {}) const;

  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  const CompileSummary& summary() const;  // empty for a loaded model, but for primitives and kernels

  // Runs on inputs by name (every graph input; dtype and shape must match)
  // and returns the outputs in order. Inputs are read in place, not copied.
  std::vector<Array> run(const std::map<std::string, TensorView>& feeds) const;
  // Runs on inputs in the order of inputs() into caller-owned outputs in the
  // order of outputs() (each of its output's dtype and shape).
  void run(const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs) const;

  int threads() const;           // what run() uses
  void set_threads(int threads);  // 0: all cores; for calls that start afterwards
  size_t instances() const;      // program instances made so far (the pool's size)

  struct Impl;
  explicit Model(std::shared_ptr<Impl> impl);
  Impl& impl() const { return *impl_; }

 private:
  std::shared_ptr<Impl> impl_;
};

template <typename T>
TensorView TensorView::of(T* data, std::vector<int64_t> shape) {
  DType dtype = DType::Float32;
  if constexpr (std::is_same_v<std::remove_const_t<T>, double>) dtype = DType::Float64;
  else if constexpr (std::is_same_v<std::remove_const_t<T>, int64_t>) dtype = DType::Int64;
  else if constexpr (std::is_same_v<std::remove_const_t<T>, int32_t>) dtype = DType::Int32;
  else if constexpr (std::is_same_v<std::remove_const_t<T>, int8_t>) dtype = DType::Int8;
  else if constexpr (std::is_same_v<std::remove_const_t<T>, uint8_t>) dtype = DType::UInt8;
  else if constexpr (std::is_same_v<std::remove_const_t<T>, bool>) dtype = DType::Bool;
  else static_assert(std::is_same_v<std::remove_const_t<T>, float>, "TensorView::of: use the struct for other types");
  return {dtype, std::move(shape), const_cast<void*>(static_cast<const void*>(data))};
}

}  // namespace orchid
