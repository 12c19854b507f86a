// The artifact of `orchid compile MODEL.onnx -o DIR`: a self-contained folder
// that `orchid run DIR` loads in a fresh process.
//   plan.json    readable: format and Orchid version stamp, the source model,
//                the primitive graph (values, nodes, attributes), the kernels
//                in execution order, the memory plan's summary
//   weights.bin  every constant tensor, 64-byte aligned, at the offsets that
//                plan.json gives
// Only the Orchid version that wrote an artifact loads it: kernels are built
// for the running binary, so a stale artifact is an error asking to recompile.
#pragma once

#include <string>

#include "runtime/memory_plan.h"
#include "runtime/program.h"

namespace orchid::runtime {

constexpr int kArtifactFormat = 2;  // 2: kernel_library_sha256

struct ArtifactInfo {
  std::string source_model;  // the ONNX file it was compiled from
  // JSON text recorded as plan.json's "orchestration" (how the plan was
  // chosen: parts, candidates, per-kernel costs, optimality); empty: none.
  std::string orchestration_json = {};
  // JSON text recorded as plan.json's "derivation" (which primitives were
  // replaced by derived forms, with the steps); empty: none.
  std::string derivation_json = {};
};

// Returns the memory plan it records in plan.json (row-major sizes; layouts
// negotiated at load may take a little more).
MemoryPlan save_artifact(const Program& program, const ArtifactInfo& info, const std::string& dir);
// orchid::Error naming the folder and file when it is missing, corrupt, or
// from another Orchid version.
Program load_artifact(const std::string& dir);
// What save_artifact recorded beside the program (same errors as load_artifact).
ArtifactInfo load_artifact_info(const std::string& dir);
// Whether `path` is a folder holding plan.json.
bool is_artifact(const std::string& path);

}  // namespace orchid::runtime
