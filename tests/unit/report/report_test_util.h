// A tiny planned program and its report data with fixed numbers, for the
// report's golden and page tests (no timing).
#pragma once

#include "../runtime/runtime_test_util.h"
#include "report/report_data.h"

namespace orchid::report::testing {

// x -> Relu0 -> Exp1 -> Neg2; Add3(Neg2, Relu0) -> y, in three kernels:
// {Relu0, Exp1} (Relu0's output also read outside), {Neg2}, {Add3}.
inline runtime::Program tiny_program() {
  Graph g;
  const ValueId x = g.add_value("x", {DType::Float32, {16}});
  g.inputs().push_back(x);
  const ValueId r = runtime::testing::add_op(g, "Relu", {x})[0];
  const ValueId e = runtime::testing::add_op(g, "Exp", {r})[0];
  const ValueId n = runtime::testing::add_op(g, "Neg", {e})[0];
  g.outputs().push_back(runtime::testing::add_op(g, "Add", {n, r})[0]);
  g.value(g.outputs()[0]).name = "y";
  runtime::Program program{g, {}};
  for (std::vector<size_t> nodes : {std::vector<size_t>{0, 1}, {2}, {3}}) {
    program.kernels.push_back(runtime::make_group(g, nodes));
  }
  return program;
}

// tiny_program's report data: a generated kernel, a library one and a
// reference one, with fixed times and bounds.
inline ReportData tiny_data(const runtime::Program& program) {
  ReportData data;
  data.model = "tiny.onnx";
  data.threads = 2;
  data.runs = 5;
  data.primitives = program.graph.nodes().size();
  const KernelKind kinds[] = {KernelKind::Generated, KernelKind::Library, KernelKind::Reference};
  const char* implementations[] = {"generated", "elementwise", "reference"};
  const char* ops[] = {"Relu+Exp", "Neg", "Add"};
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    KernelRow row;
    row.name = program.kernels[k].name;
    row.ops = ops[k];
    row.implementation = implementations[k];
    row.kind = kinds[k];
    row.nodes = program.kernels[k].nodes;
    row.ms = 0.01 * double(k + 1);
    row.bound_ms = 0.005;
    row.memory_bound = true;
    data.kernels.push_back(row);
    data.kernels_ms += row.ms;
    data.bound_ms += row.bound_ms;
  }
  data.latency_ms = 0.07;
  return data;
}

// A derivation record of one region, replaced by a form of two steps (names
// that need escaping on a page), with two forms measured.
inline derivation::DeriveReport one_derived_region() {
  derivation::DerivationRecord record;
  record.nodes = {"Conv<0>"};
  record.signature = "Conv 1x8x8x8 * 8x8x3x3";
  record.derivation = "split <h> -> merge (w)";
  record.original_seconds = 2e-3;
  record.derived_seconds = 1e-3;
  record.applied = true;
  record.measured = {{"split <h> -> merge (w)", {}, 1e-3}, {"other", {}, 1.5e-3}};
  derivation::DeriveReport report;
  report.records.push_back(record);
  return report;
}

}  // namespace orchid::report::testing
