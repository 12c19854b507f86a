// The plan graph's DOT text: golden for a tiny three-kernel program, the
// one-box-per-kernel form of large plans, and escaping.
#include <gtest/gtest.h>

#include "report/plan_dot.h"
#include "report_test_util.h"

namespace orchid::report {
namespace {

using testing::tiny_data;
using testing::tiny_program;

constexpr const char* kPreamble = R"(digraph plan {
  graph [rankdir=TB, fontname="Helvetica", fontsize=10, nodesep=0.2, ranksep=0.3];
  node [shape=box, style="rounded,filled", fillcolor="white", fontname="Helvetica", fontsize=9, height=0.3];
  edge [color="#555555", arrowsize=0.6];
  in0 [label="x", shape=ellipse, style=solid];
  out0 [label="y", shape=ellipse, style=solid];
)";

TEST(ReportDot, TinyProgramGolden) {
  const runtime::Program program = tiny_program();
  const std::string expected = std::string(kPreamble) + R"(  subgraph cluster_0 {
    label="Relu0+Exp1\nRelu+Exp\n0.010 ms, 50% of bound";
    style="filled,rounded"; fillcolor="#b3e2cd"; color="#888888"; tooltip="generated";
    k0n0 [label="Relu", tooltip="Relu0"];
    k0n1 [label="Exp", tooltip="Exp1"];
  }
  subgraph cluster_1 {
    label="Neg2\nNeg\n0.020 ms, 25% of bound";
    style="filled,rounded"; fillcolor="#e6f5c9"; color="#888888"; tooltip="elementwise";
    k1n2 [label="Neg", tooltip="Neg2"];
  }
  subgraph cluster_2 {
    label="Add3\nAdd\n0.030 ms, 17% of bound";
    style="filled,rounded"; fillcolor="#fbb4ae"; color="#888888"; tooltip="reference";
    k2n3 [label="Add", tooltip="Add3"];
  }
  in0 -> k0n0;
  k0n0 -> k0n1;
  k0n1 -> k1n2;
  k1n2 -> k2n3;
  k0n0 -> k2n3;
  k2n3 -> out0;
}
)";
  EXPECT_EQ(plan_dot(program, tiny_data(program)), expected);
}

TEST(ReportDot, LargePlansDrawOneBoxPerKernel) {
  const runtime::Program program = tiny_program();
  DotOptions options;
  options.max_primitives = 3;  // the tiny program has 4
  const std::string expected = std::string(kPreamble) +
                               R"(  k0 [label="Relu0+Exp1\nRelu+Exp\n0.010 ms, 50% of bound", )"
                               R"(fillcolor="#b3e2cd", tooltip="generated"];
  k1 [label="Neg2\nNeg\n0.020 ms, 25% of bound", fillcolor="#e6f5c9", tooltip="elementwise"];
  k2 [label="Add3\nAdd\n0.030 ms, 17% of bound", fillcolor="#fbb4ae", tooltip="reference"];
  in0 -> k0;
  k0 -> k1;
  k1 -> k2;
  k0 -> k2;
  k2 -> out0;
}
)";
  EXPECT_EQ(plan_dot(program, tiny_data(program), options), expected);
}

TEST(ReportDot, NamesAreEscapedAndCut) {
  runtime::Program program = tiny_program();
  program.graph.nodes()[2].name = "a \"quoted\\\" name\nwith a break";
  ReportData data = tiny_data(program);
  data.kernels[0].name = std::string(60, 'n');
  const std::string dot = plan_dot(program, data);
  EXPECT_NE(dot.find("tooltip=\"a \\\"quoted\\\\\\\" name with a break\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"" + std::string(45, 'n') + "...\\n"), std::string::npos) << dot;
}

TEST(ReportDot, KindsHaveDistinctColours) {
  const KernelKind kinds[] = {KernelKind::Generated, KernelKind::OnednnLinear, KernelKind::DirectLinear,
                              KernelKind::Layout,    KernelKind::Library,      KernelKind::Reference};
  std::set<std::string> colours;
  for (KernelKind kind : kinds) colours.insert(kernel_colour(kind));
  EXPECT_EQ(colours.size(), std::size(kinds));
}

}  // namespace
}  // namespace orchid::report
