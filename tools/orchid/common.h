// Pieces shared by the orchid subcommands.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "frontend/onnx/importer.h"
#include "ir/tensor.h"
#include "orchid/orchid.h"
#include "pipeline.h"

namespace orchid::cli {

// --shape NAME=1x3x224x224 (repeatable), parsed into ImportOptions.
struct ShapeOptions {
  std::vector<std::string> specs;
  void add_to(CLI::App& command);
  std::map<std::string, Shape> parse() const;
};

// How an ONNX model is compiled: --no-fusion (the baseline plan), --no-profile
// (analytical costs only), --no-derive (derivation is on with fusion), --cache-dir.
struct CompileFlags {
  bool no_fusion = false;
  bool no_profile = false;
  bool derive = false;     // --derive: asked for explicitly
  bool no_derive = false;  // --no-derive
  double derive_budget = 20;
  bool derive_replace = false;
  std::string cache_dir;
  void add_to(CLI::App& command);
  // The library's options: kernels timed with `threads` (0: all cores);
  // progress goes to stderr when it is a terminal, unless `quiet`.
  CompileOptions options(int threads, bool quiet) const;
  // The same in the pipeline's terms, for the commands that run its stages.
  PipelineOptions pipeline(int threads, bool quiet) const;
};

// Prints import notes (bound symbolic dimensions, specializations) to stderr.
void print_notes(const onnx_frontend::ImportResult& result);

// A model to execute: a compiled artifact folder, or an ONNX file imported
// and compiled in memory (or, for the interpreter, only imported).
struct LoadedModel {
  // The imported graph for the interpreter; otherwise only the program's
  // interface (its inputs and outputs, no nodes, no weights).
  Graph graph;
  std::vector<std::string> declared_inputs;  // the model's inputs, specialized ones included
  std::optional<Model> model;                // absent when the interpreter runs it
};
// `threads`: what the compiled model runs (and is timed) with; 0: all cores.
LoadedModel load_model(const std::string& path, const ShapeOptions& shapes, bool interpreter, int threads,
                       const CompileFlags& flags = {}, bool quiet = false);
// Runs a loaded model once: the compiled model, or the reference interpreter.
std::vector<Tensor> execute(const LoadedModel& model, const std::map<std::string, Tensor>& feeds);

// --threads N: the thread pool's size (default: all cores).
void add_threads_option(CLI::App& command, int& threads);

// Each subcommand sets `status` to its exit status (0 success, 1 check failed).
void add_run_command(CLI::App& app, int& status);
void add_check_command(CLI::App& app, int& status);
void add_show_command(CLI::App& app, int& status);
void add_compile_command(CLI::App& app, int& status);
void add_bench_command(CLI::App& app, int& status);
void add_machine_command(CLI::App& app, int& status);
void add_explain_command(CLI::App& app, int& status);
void add_report_command(CLI::App& app, int& status);

}  // namespace orchid::cli
