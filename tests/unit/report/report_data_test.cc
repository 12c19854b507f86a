// The report's data: kernel kinds from implementations, and the
// orchestration and derivation records of plan.json read into it.
#include <gtest/gtest.h>

#include "report/report_data.h"
#include "report_test_util.h"
#include "support/error.h"

namespace orchid::report {
namespace {

using testing::tiny_program;

ProgramTiming tiny_timing() {
  ProgramTiming timing;
  timing.runs = 4;
  timing.median_ms = 0.2;
  timing.kernel_ms = {0.05, 0.02, 0.1};
  timing.kernels = {{"Relu0+Exp1", "Relu+Exp", "generated"},
                    {"Neg2", "Neg", "elementwise"},
                    {"Add3", "Add", "reference"}};
  return timing;
}

const cost::MachinePeaks kPeaks{1e11, 1e10};

TEST(ReportData, KindsFromImplementations) {
  runtime::KernelGroup plain, generated;
  generated.symbol = "orchid_kernel_3";
  EXPECT_EQ(classify_kernel(generated, "whatever"), KernelKind::Generated);
  EXPECT_EQ(classify_kernel(plain, "generated"), KernelKind::Generated);
  EXPECT_EQ(classify_kernel(plain, "onednn conv (brg:avx512_core)"), KernelKind::OnednnLinear);
  EXPECT_EQ(classify_kernel(plain, "direct matmul (few rows)"), KernelKind::DirectLinear);
  EXPECT_EQ(classify_kernel(plain, "banded g2bmm"), KernelKind::DirectLinear);
  EXPECT_EQ(classify_kernel(plain, "gemm deconv (col2im)"), KernelKind::DirectLinear);
  EXPECT_EQ(classify_kernel(plain, "layout Transpose"), KernelKind::Layout);
  EXPECT_EQ(classify_kernel(plain, "elementwise"), KernelKind::Library);
  EXPECT_EQ(classify_kernel(plain, "reduce ReduceSum"), KernelKind::Library);
  EXPECT_EQ(classify_kernel(plain, "reference"), KernelKind::Reference);
  EXPECT_STREQ(kernel_kind_name(KernelKind::OnednnLinear), "oneDNN linear");
}

TEST(ReportData, RowsFromTheTiming) {
  const runtime::Program program = tiny_program();
  const ReportData data = make_report_data(program, {"tiny.onnx"}, tiny_timing(), kPeaks);
  EXPECT_EQ(data.model, "tiny.onnx");
  EXPECT_EQ(data.runs, 4);
  EXPECT_EQ(data.primitives, 4u);
  EXPECT_DOUBLE_EQ(data.latency_ms, 0.2);
  ASSERT_EQ(data.kernels.size(), 3u);
  EXPECT_EQ(data.kernels[0].name, "Relu0+Exp1");
  EXPECT_EQ(data.kernels[0].kind, KernelKind::Generated);
  EXPECT_EQ(data.kernels[0].nodes, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(data.kernels[1].kind, KernelKind::Library);
  EXPECT_EQ(data.kernels[2].kind, KernelKind::Reference);
  EXPECT_DOUBLE_EQ(data.kernels[2].ms, 0.1);
  EXPECT_DOUBLE_EQ(data.kernels_ms, 0.17);
  for (const KernelRow& row : data.kernels) {
    EXPECT_GT(row.bound_ms, 0) << row.name;
    EXPECT_TRUE(row.memory_bound) << row.name;  // elementwise: bytes dominate
    EXPECT_FALSE(row.planned_ms) << row.name;
  }
  EXPECT_FALSE(data.blp);
  EXPECT_FALSE(data.derivation);
}

TEST(ReportData, ReadsTheOrchestrationRecord) {
  runtime::ArtifactInfo info{"tiny.onnx"};
  info.orchestration_json = R"({"candidates": 12, "fused_candidates": 4, "clusters": 3,
      "parts": [{"clusters": [0, 3], "primitives": 4, "candidates": 12, "cut": "none"}],
      "measured": 2, "cached": 1, "unbuildable": 0, "rounds": 2, "proven_optimal": true, "planned_ms": 0.05,
      "solve_seconds": 0.25,
      "kernels": [{"name": "Relu0+Exp1", "primitives": 2, "cost_ms": 0.012, "cost_source": "measured"},
                  {"name": "Add3", "primitives": 1, "cost_ms": 0.02, "cost_source": "cached"}]})";
  const ReportData data = make_report_data(tiny_program(), info, tiny_timing(), kPeaks);
  ASSERT_TRUE(data.blp);
  EXPECT_EQ(data.blp->candidates, 12u);
  EXPECT_EQ(data.blp->fused_candidates, 4u);
  EXPECT_EQ(data.blp->measured, 2u);
  EXPECT_EQ(data.blp->cached, 1u);
  EXPECT_EQ(data.blp->rounds, 2);
  EXPECT_TRUE(data.blp->proven_optimal);
  EXPECT_DOUBLE_EQ(data.blp->solve_seconds, 0.25);
  ASSERT_EQ(data.blp->parts.size(), 1u);
  EXPECT_EQ(data.blp->parts[0].end_cluster, 3u);
  EXPECT_EQ(data.blp->parts[0].cut, "none");
  // By position when the names agree, else by name.
  EXPECT_DOUBLE_EQ(data.kernels[0].planned_ms.value_or(-1), 0.012);
  EXPECT_EQ(data.kernels[0].cost_source, "measured");
  EXPECT_FALSE(data.kernels[1].planned_ms);
  EXPECT_DOUBLE_EQ(data.kernels[2].planned_ms.value_or(-1), 0.02);
  EXPECT_EQ(data.kernels[2].cost_source, "cached");
}

TEST(ReportData, ReadsTheDerivationRecord) {
  runtime::ArtifactInfo info{"tiny.onnx"};
  info.derivation_json = derivation::derive_report_json(testing::one_derived_region());
  const ReportData data = make_report_data(tiny_program(), info, tiny_timing(), kPeaks);
  ASSERT_TRUE(data.derivation);
  ASSERT_EQ(data.derivation->records.size(), 1u);
  EXPECT_EQ(data.derivation->records[0].signature, "Conv 1x8x8x8 * 8x8x3x3");
  EXPECT_TRUE(data.derivation->records[0].applied);
  EXPECT_EQ(data.derivation->records[0].derivation, "split <h> -> merge (w)");
  EXPECT_EQ(data.derivation->records[0].measured.size(), 2u);
}

TEST(ReportData, MalformedRecordsAreUserErrors) {
  for (const char* text : {"not json", "[1, 2]", R"({"rounds": "many"})", R"({"parts": [3]})"}) {
    runtime::ArtifactInfo info{"tiny.onnx"};
    info.orchestration_json = text;
    EXPECT_THROW(make_report_data(tiny_program(), info, tiny_timing(), kPeaks), Error) << text;
  }
}

}  // namespace
}  // namespace orchid::report
