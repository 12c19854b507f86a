// Pieces shared by the orchid subcommands.
#pragma once

#include <map>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "frontend/onnx/importer.h"
#include "ir/tensor.h"

namespace orchid::cli {

// --shape NAME=1x3x224x224 (repeatable), parsed into ImportOptions.
struct ShapeOptions {
  std::vector<std::string> specs;
  void add_to(CLI::App& command);
  std::map<std::string, Shape> parse() const;
};

// A random tensor for testing: floats uniform in [-1, 1], integers in [0, 4),
// booleans fair coin flips.
Tensor random_tensor(const TensorType& type, std::mt19937_64& rng);

// Prints import notes (bound symbolic dimensions, specializations) to stderr.
void print_notes(const onnx_frontend::ImportResult& result);

// Each subcommand sets `status` to its exit status (0 success, 1 check failed).
void add_run_command(CLI::App& app, int& status);
void add_check_command(CLI::App& app, int& status);
void add_show_command(CLI::App& app, int& status);

}  // namespace orchid::cli
