// ONNX import: protobuf (Debian's libonnx) to Graph, with operators rewritten
// into their canonical form, static shapes inferred, and constant subgraphs
// folded by the reference interpreter.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace orchid::onnx_frontend {

struct ImportOptions {
  // Full shapes for graph inputs (--shape x=1x3x224x224). Inputs without one
  // get their symbolic dimensions bound to 1.
  std::map<std::string, Shape> input_shapes;
  // Values of graph inputs that the importer may specialize on when an
  // operator needs an input's value to know its output shape (ONNX test models
  // feed Reshape's shape as an input). Each use is reported in the notes.
  std::map<std::string, Tensor> specializable_inputs;
};

struct ImportResult {
  Graph graph;
  int opset = 0;  // of the default ONNX domain
  // The model's graph inputs (initializers excluded) in declaration order,
  // including any that were specialized away.
  std::vector<std::string> declared_inputs;
  // Declared inputs imported as constants with their offered values (see
  // ImportOptions::specializable_inputs).
  std::vector<std::string> specialized_inputs;
  // Things the user should know: bound symbolic dimensions, specializations.
  std::vector<std::string> notes;
};

// Errors (orchid::Error) name the file, and where relevant the node, operator
// and what was expected.
ImportResult import_model(const std::string& path, const ImportOptions& options = {});
// The same from serialized bytes (for tests and the fuzzer); `display_name`
// stands for the file in messages, `base_dir` for external data.
ImportResult import_model_bytes(const std::string& bytes, const std::string& display_name,
                                const std::string& base_dir, const ImportOptions& options = {});

// A model file's bytes; a folder, a missing or unreadable file is an
// orchid::Error naming the path.
std::string read_model_file(const std::string& path);

// The names of a model's graph inputs (initializers excluded), in order,
// without importing the graph.
std::vector<std::string> declared_model_inputs(const std::string& path);

}  // namespace orchid::onnx_frontend
