// A Graph as JSON plus one binary blob for its tensor data (constants and
// tensor attributes): exact round trip, readable structure. Used by compiled
// artifacts (runtime/artifact.h).
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/graph.h"

namespace orchid {

// Where tensor data is read back from: `size` bytes in all; read() copies
// [offset, offset + bytes) into `destination`. Each tensor is read straight
// into its own storage, so loading never holds the data twice.
struct TensorBlob {
  size_t size = 0;
  std::function<void(size_t offset, size_t bytes, void* destination)> read;
};

// Appends every tensor's bytes to `blob` (64-byte aligned) and refers to them
// by offset from the JSON.
nlohmann::json graph_to_json(const Graph& graph, std::string& blob);
// orchid::Error (prefixed with `where`) when the JSON or blob is malformed.
Graph graph_from_json(const nlohmann::json& json, const TensorBlob& blob, const std::string& where);

}  // namespace orchid
