// A Graph as JSON plus one binary blob for its tensor data (constants and
// tensor attributes): exact round trip, readable structure. Used by compiled
// artifacts (runtime/artifact.h).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/graph.h"

namespace orchid {

// Tensor data read back: `data` points at `size` bytes that `owner` keeps
// alive (a memory-mapped file); constants borrow from it without copying.
struct TensorBlob {
  std::shared_ptr<void> owner;
  const std::byte* data = nullptr;
  size_t size = 0;
};

// Appends every tensor's bytes to `blob` (64-byte aligned) and refers to them
// by offset from the JSON.
nlohmann::json graph_to_json(const Graph& graph, std::string& blob);
// orchid::Error (prefixed with `where`) when the JSON or blob is malformed.
Graph graph_from_json(const nlohmann::json& json, const TensorBlob& blob, const std::string& where);

}  // namespace orchid
