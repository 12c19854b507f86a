#include "runtime/artifact.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ir/graph_json.h"
#include "runtime/memory_plan.h"
#include "support/error.h"
#include "support/sha256.h"
#include "support/version.h"

namespace orchid::runtime {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kPlanFile = "plan.json";
constexpr const char* kWeightsFile = "weights.bin";
// Present only when the program has generated kernels (codegen/cpu): their
// C++ source, for reading, and the built library the kernels run from.
constexpr const char* kKernelSourceFile = "kernels.cc";
constexpr const char* kKernelLibraryFile = "kernels.so";

bool has_generated_kernels(const Program& program) {
  for (const KernelGroup& group : program.kernels) {
    if (!group.symbol.empty()) return true;
  }
  return false;
}

json kernels_to_json(const Program& program) {
  json kernels = json::array();
  for (const KernelGroup& group : program.kernels) {
    json ops = json::array();
    for (size_t index : group.nodes) ops.push_back(program.graph.nodes()[index].op);
    json kernel = {{"name", group.name}, {"ops", ops}, {"nodes", group.nodes}, {"inputs", group.inputs},
                   {"outputs", group.outputs}};
    if (!group.symbol.empty()) kernel["symbol"] = group.symbol;
    if (!group.variant.empty()) kernel["variant"] = group.variant;
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

std::vector<KernelGroup> kernels_from_json(const json& j, const Graph& graph) {
  std::vector<KernelGroup> kernels;
  for (const json& k : j) {
    KernelGroup group;
    group.name = k.at("name").get<std::string>();
    group.nodes = k.at("nodes").get<std::vector<size_t>>();
    group.inputs = k.at("inputs").get<std::vector<ValueId>>();
    group.outputs = k.at("outputs").get<std::vector<ValueId>>();
    group.symbol = k.value("symbol", std::string());
    group.variant = k.value("variant", std::string());
    for (size_t index : group.nodes) {
      if (index >= graph.nodes().size()) ORCHID_FAIL() << "kernel '" << group.name << "' names node " << index;
    }
    for (const auto* ids : {&group.inputs, &group.outputs}) {
      for (ValueId id : *ids) {
        if (id < 0 || size_t(id) >= graph.num_values()) ORCHID_FAIL() << "kernel '" << group.name << "' names value " << id;
      }
    }
    kernels.push_back(std::move(group));
  }
  return kernels;
}

std::string read_file(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) ORCHID_FAIL() << path.string() << ": cannot open the file";
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

// weights.bin read tensor by tensor (pread) into each constant's storage.
TensorBlob open_weights(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) ORCHID_FAIL() << path.string() << ": cannot open the file";
  auto file = std::shared_ptr<int>(new int(fd), [](int* f) {
    ::close(*f);
    delete f;
  });
  struct stat info {};
  if (::fstat(fd, &info) != 0) ORCHID_FAIL() << path.string() << ": cannot read the file's size";
  TensorBlob blob;
  blob.size = size_t(info.st_size);
  blob.read = [file, path](size_t offset, size_t bytes, void* destination) {
    auto* out = static_cast<char*>(destination);
    while (bytes > 0) {
      const ssize_t got = ::pread(*file, out, bytes, off_t(offset));
      if (got <= 0) ORCHID_FAIL() << path.string() << ": cannot read " << bytes << " bytes at offset " << offset;
      out += got;
      offset += size_t(got);
      bytes -= size_t(got);
    }
  };
  return blob;
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), std::streamsize(bytes.size()));
  file.close();
  if (!file) ORCHID_FAIL() << path.string() << ": cannot write the file (" << std::strerror(errno) << ")";
}

}  // namespace

bool is_artifact(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::is_regular_file(fs::path(path) / kPlanFile, ec);
}

namespace {

// The artifact's files, written into `dir` (a new, empty folder).
MemoryPlan write_artifact(const Program& program, const ArtifactInfo& info, const std::string& dir) {
  std::error_code ec;
  std::string weights;
  const MemoryPlan memory = plan_memory(program);
  json plan = {
      {"format", "orchid-program"},
      {"format_version", kArtifactFormat},
      {"orchid_version", kVersion},
      {"source_model", info.source_model},
      {"memory", {{"arena_bytes", memory.arena_bytes},
                  {"intermediate_bytes", memory.intermediate_bytes},
                  {"intermediates", memory.num_intermediates}}},
      {"kernels", kernels_to_json(program)},
      {"graph", graph_to_json(program.graph, weights)},
  };
  if (!info.orchestration_json.empty()) plan["orchestration"] = json::parse(info.orchestration_json);
  if (!info.derivation_json.empty()) plan["derivation"] = json::parse(info.derivation_json);
  if (has_generated_kernels(program)) {
    if (program.library_path.empty() || !fs::is_regular_file(program.library_path, ec)) {
      ORCHID_FAIL() << "cannot save the artifact: the generated kernel library '" << program.library_path
                    << "' is missing";
    }
    write_file(fs::path(dir) / kKernelSourceFile, program.generated_source);
    const fs::path library = fs::path(dir) / kKernelLibraryFile;
    if (fs::absolute(program.library_path, ec) != fs::absolute(library, ec)) {
      fs::copy_file(program.library_path, library, fs::copy_options::overwrite_existing, ec);
      if (ec) ORCHID_FAIL() << library.string() << ": cannot copy the kernel library (" << ec.message() << ")";
    }
    // The artifact vouches for the library it ships: the copy must be the
    // library as built, and loading checks it against this record.
    ORCHID_CHECK(!program.library_sha256.empty()) << "a generated kernel library without its SHA-256";
    if (sha256_of_file(library.string()) != program.library_sha256) {
      ORCHID_FAIL() << program.library_path << ": the kernel library changed since it was built; compile again";
    }
    plan["kernel_library_sha256"] = program.library_sha256;
  }
  write_file(fs::path(dir) / kWeightsFile, weights);
  write_file(fs::path(dir) / kPlanFile, plan.dump(1) + "\n");
  return memory;
}

// `dir` may be replaced: it does not exist, is empty, or holds an artifact.
void check_output_folder(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  if (!fs::is_directory(dir, ec)) ORCHID_FAIL() << dir << ": exists and is not a folder";
  if (!is_artifact(dir) && !fs::is_empty(dir, ec)) {
    ORCHID_FAIL() << dir << ": exists and is not an Orchid artifact; choose another output folder";
  }
}

// Puts `staging` where `dir` is, replacing an older artifact there.
void replace_folder(const fs::path& staging, const fs::path& dir) {
  std::error_code ec;
  const fs::path old = dir.string() + ".old-" + std::to_string(::getpid());
  const bool had_old = fs::exists(dir, ec);
  if (had_old) {
    fs::rename(dir, old, ec);
    if (ec) ORCHID_FAIL() << dir.string() << ": cannot replace the folder (" << ec.message() << ")";
  }
  fs::rename(staging, dir, ec);
  if (ec) {
    const std::string why = ec.message();
    if (had_old) fs::rename(old, dir, ec);
    ORCHID_FAIL() << dir.string() << ": cannot move the new artifact into place (" << why << ")";
  }
  if (had_old) fs::remove_all(old, ec);
}

}  // namespace

MemoryPlan save_artifact(const Program& program, const ArtifactInfo& info, const std::string& dir) {
  check_output_folder(dir);
  // Written beside the destination, then renamed into place: a full disk, a
  // kill or any error leaves the old artifact (or nothing), never half of one.
  const fs::path target = fs::absolute(dir).lexically_normal();
  const fs::path staging = (target.has_filename() ? target : target.parent_path()).string() + ".partial-" +
                           std::to_string(::getpid());
  std::error_code ec;
  fs::remove_all(staging, ec);
  fs::create_directories(staging, ec);
  if (ec || !fs::is_directory(staging)) {
    ORCHID_FAIL() << dir << ": cannot create the output folder" << (ec ? " (" + ec.message() + ")" : std::string());
  }
  try {
    MemoryPlan memory = write_artifact(program, info, staging.string());
    replace_folder(staging, target.has_filename() ? target : target.parent_path());
    return memory;
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
}

namespace {

// plan.json of the artifact in `dir`, checked: a folder, an Orchid plan, of
// this Orchid version.
json read_plan(const std::string& dir) {
  const fs::path plan_path = fs::path(dir) / kPlanFile;
  if (!fs::is_directory(dir)) ORCHID_FAIL() << dir << ": no such folder";
  if (!fs::is_regular_file(plan_path)) ORCHID_FAIL() << dir << ": not a compiled artifact (no " << kPlanFile << ")";
  json plan = json::parse(read_file(plan_path), nullptr, /*allow_exceptions=*/false);
  if (plan.is_discarded() || !plan.is_object() || plan.value("format", "") != "orchid-program") {
    ORCHID_FAIL() << plan_path.string() << ": not an Orchid plan (invalid JSON or wrong format)";
  }
  const std::string version = plan.value("orchid_version", "?");
  if (plan.value("format_version", 0) != kArtifactFormat || version != kVersion) {
    ORCHID_FAIL() << dir << ": compiled by Orchid " << version << " (format " << plan.value("format_version", 0)
                  << "); this is Orchid " << kVersion << " (format " << kArtifactFormat
                  << "): compile the model again";
  }
  return plan;
}

std::string record_text(const json& plan, const char* key) { return plan.contains(key) ? plan[key].dump() : ""; }

}  // namespace

ArtifactInfo load_artifact_info(const std::string& dir) {
  const json plan = read_plan(dir);
  return {plan.value("source_model", ""), record_text(plan, "orchestration"), record_text(plan, "derivation")};
}

Program load_artifact(const std::string& dir) {
  const fs::path plan_path = fs::path(dir) / kPlanFile;
  json plan = read_plan(dir);
  const TensorBlob weights = open_weights(fs::path(dir) / kWeightsFile);
  Program program;
  if (!plan.contains("graph")) ORCHID_FAIL() << plan_path.string() << ": no graph";
  const std::string weights_path = (fs::path(dir) / kWeightsFile).string();
  program.graph = graph_from_json(plan["graph"], weights, plan_path.string() + " with " + weights_path);
  try {
    program.kernels = kernels_from_json(plan.at("kernels"), program.graph);
  } catch (const json::exception& e) {
    ORCHID_FAIL() << plan_path.string() << ": malformed kernels: " << e.what();
  } catch (const Error& e) {
    ORCHID_FAIL() << plan_path.string() << ": malformed kernels: " << e.what();
  }
  if (has_generated_kernels(program)) {
    const fs::path library = fs::path(dir) / kKernelLibraryFile;
    if (!fs::is_regular_file(library)) {
      ORCHID_FAIL() << library.string() << ": missing (the plan has generated kernels): compile the model again";
    }
    program.library_path = fs::absolute(library).string();
    program.library_sha256 = plan.value("kernel_library_sha256", "");
    if (program.library_sha256.empty()) {
      ORCHID_FAIL() << plan_path.string() << ": no kernel_library_sha256 for " << kKernelLibraryFile
                    << " (the plan has generated kernels): compile the model again";
    }
    program.generated_source = fs::is_regular_file(fs::path(dir) / kKernelSourceFile)
                                   ? read_file(fs::path(dir) / kKernelSourceFile)
                                   : std::string();
  }
  return program;
}

}  // namespace orchid::runtime
