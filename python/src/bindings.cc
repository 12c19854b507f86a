// orchid._orchid: the C++ API (include/orchid/orchid.h) for Python. The
// bindings hold no logic: they convert numpy arrays to and from TensorView
// and Array (no copies), release the GIL while compiling and running (so
// Python threads run a model concurrently), and turn orchid::Error into
// orchid.Error. python/orchid/__init__.py builds the Python API on this.
#include <memory>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "orchid/orchid.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using AnyArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

nb::dlpack::dtype to_dlpack(orchid::DType dtype) {
  using Code = nb::dlpack::dtype_code;
  auto make = [](Code code, int bits) { return nb::dlpack::dtype{uint8_t(code), uint8_t(bits), 1}; };
  switch (dtype) {
    case orchid::DType::Float32: return make(Code::Float, 32);
    case orchid::DType::Float64: return make(Code::Float, 64);
    case orchid::DType::Float16: return make(Code::Float, 16);
    case orchid::DType::BFloat16: return make(Code::Bfloat, 16);
    case orchid::DType::Int8: return make(Code::Int, 8);
    case orchid::DType::Int16: return make(Code::Int, 16);
    case orchid::DType::Int32: return make(Code::Int, 32);
    case orchid::DType::Int64: return make(Code::Int, 64);
    case orchid::DType::UInt8: return make(Code::UInt, 8);
    case orchid::DType::UInt16: return make(Code::UInt, 16);
    case orchid::DType::UInt32: return make(Code::UInt, 32);
    case orchid::DType::UInt64: return make(Code::UInt, 64);
    case orchid::DType::Bool: return make(Code::Bool, 8);
  }
  throw orchid::InternalError("unknown DType");
}

orchid::DType from_dlpack(nb::dlpack::dtype dtype, const std::string& name) {
  for (int d = 0; d <= int(orchid::DType::Bool); ++d) {
    const nb::dlpack::dtype candidate = to_dlpack(orchid::DType(d));
    if (candidate.code == dtype.code && candidate.bits == dtype.bits && dtype.lanes == 1) return orchid::DType(d);
  }
  throw orchid::Error("input '" + name + "': element type (dlpack code " + std::to_string(dtype.code) + ", " +
                      std::to_string(dtype.bits) + " bits) is not one Orchid supports");
}

orchid::TensorView view_of(const AnyArray& array, const std::string& name) {
  orchid::TensorView view;
  view.dtype = from_dlpack(array.dtype(), name);
  for (size_t i = 0; i < array.ndim(); ++i) view.shape.push_back(int64_t(array.shape(i)));
  view.data = array.data();
  return view;
}

// A numpy array over the Array's memory, which it keeps alive.
nb::object to_numpy(const orchid::Array& array) {
  auto* kept = new orchid::Array(array);
  nb::capsule owner(kept, [](void* p) noexcept { delete static_cast<orchid::Array*>(p); });
  std::vector<size_t> shape(array.shape().begin(), array.shape().end());
  return nb::ndarray<nb::numpy>(kept->data(), shape.size(), shape.data(), owner, nullptr, to_dlpack(array.dtype()))
      .cast();
}

nb::dict describe(const orchid::TensorInfo& info) {
  nb::dict d;
  d["name"] = info.name;
  d["dtype"] = std::string(orchid::dtype_name(info.dtype));
  d["shape"] = nb::cast(info.shape);
  return d;
}

orchid::CompileOptions compile_options(int threads, bool fusion, bool profile, bool derive, double derive_budget,
                                       const std::string& cache_dir,
                                       const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                       nb::object progress, size_t max_instances) {
  orchid::CompileOptions options;
  options.threads = threads;
  options.fusion = fusion;
  options.profile = profile;
  options.derive = derive;
  options.derive_budget_seconds = derive_budget;
  options.cache_dir = cache_dir;
  options.input_shapes = input_shapes;
  options.max_instances = max_instances;
  if (!progress.is_none()) {
    // Copied while the GIL is released: share one reference, dropped under the GIL.
    std::shared_ptr<nb::object> callback(new nb::object(progress), [](nb::object* object) {
      nb::gil_scoped_acquire gil;
      delete object;
    });
    options.progress = [callback](const orchid::Progress& p) {
      nb::gil_scoped_acquire gil;
      (*callback)(p.stage, p.done, p.total, p.eta_seconds);
    };
  }
  return options;
}

}  // namespace

NB_MODULE(_orchid, m) {
  m.doc() = "Orchid's C++ API; use the orchid package, not this module.";
  nb::exception<orchid::Error>(m, "Error", PyExc_RuntimeError);
  nb::exception<orchid::InternalError>(m, "InternalError", PyExc_RuntimeError);

  nb::class_<orchid::Model>(m, "Model")
      .def_prop_ro("inputs",
                   [](const orchid::Model& model) {
                     nb::list list;
                     for (const auto& info : model.inputs()) list.append(describe(info));
                     return list;
                   })
      .def_prop_ro("outputs",
                   [](const orchid::Model& model) {
                     nb::list list;
                     for (const auto& info : model.outputs()) list.append(describe(info));
                     return list;
                   })
      .def_prop_rw("threads", &orchid::Model::threads, &orchid::Model::set_threads)
      .def_prop_ro("instances", &orchid::Model::instances)
      .def_prop_ro("summary",
                   [](const orchid::Model& model) {
                     const orchid::CompileSummary& s = model.summary();
                     nb::dict d;
                     d["notes"] = nb::cast(s.notes);
                     d["primitives"] = s.primitives;
                     d["kernels"] = s.kernels;
                     d["weight_bytes"] = s.weight_bytes;
                     d["seconds"] = s.seconds;
                     d["orchestration"] = s.orchestration_text;
                     d["derivation"] = s.derivation_text;
                     return d;
                   })
      .def("run",
           [](const orchid::Model& model, const std::map<std::string, AnyArray>& feeds) {
             std::map<std::string, orchid::TensorView> views;
             for (const auto& [name, array] : feeds) views[name] = view_of(array, name);
             std::vector<orchid::Array> outputs;
             {
               nb::gil_scoped_release released;
               outputs = model.run(views);
             }
             nb::list list;
             for (const orchid::Array& output : outputs) list.append(to_numpy(output));
             return list;
           },
           "feeds"_a)
      .def("save",
           [](const orchid::Model& model, const std::string& dir) {
             nb::gil_scoped_release released;
             model.save(dir);
           },
           "dir"_a)
      .def("report",
           [](const orchid::Model& model, const std::string& path, int runs, bool compare_no_fusion) {
             nb::gil_scoped_release released;
             model.report(path, orchid::ReportOptions{runs, compare_no_fusion});
           },
           "path"_a, "runs"_a = 20, "compare_no_fusion"_a = true);

  m.def("compile",
        [](const std::string& path, int threads, bool fusion, bool profile, bool derive, double derive_budget,
           const std::string& cache_dir, const std::map<std::string, std::vector<int64_t>>& input_shapes, nb::object progress, size_t max_instances) {
          const orchid::CompileOptions options =
              compile_options(threads, fusion, profile, derive, derive_budget, cache_dir, input_shapes, progress, max_instances);
          nb::gil_scoped_release released;
          return orchid::Model::compile(path, options);
        },
        "path"_a, "threads"_a, "fusion"_a, "profile"_a, "derive"_a, "derive_budget"_a, "cache_dir"_a, "input_shapes"_a, "progress"_a.none(),
        "max_instances"_a);
  m.def("compile_bytes",
        [](nb::bytes bytes, const std::string& name, int threads, bool fusion, bool profile, bool derive,
           double derive_budget, const std::string& cache_dir, const std::map<std::string, std::vector<int64_t>>& input_shapes,
           nb::object progress, size_t max_instances) {
          const orchid::CompileOptions options =
              compile_options(threads, fusion, profile, derive, derive_budget, cache_dir, input_shapes, progress, max_instances);
          std::string data(bytes.c_str(), bytes.size());
          nb::gil_scoped_release released;
          return orchid::Model::compile_bytes(data, options, name);
        },
        "bytes"_a, "name"_a, "threads"_a, "fusion"_a, "profile"_a, "derive"_a, "derive_budget"_a, "cache_dir"_a, "input_shapes"_a,
        "progress"_a.none(), "max_instances"_a);
  m.def("load",
        [](const std::string& dir, int threads, size_t max_instances) {
          nb::gil_scoped_release released;
          return orchid::Model::load(dir, orchid::LoadOptions{threads, max_instances});
        },
        "dir"_a, "threads"_a, "max_instances"_a);
}
