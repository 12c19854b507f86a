// The report end to end on a small real program (orchestrated with
// analytical costs, so it has generated and library kernels): timed, laid
// out by Graphviz, rendered, written. No timing is asserted.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "../runtime/runtime_test_util.h"
#include "fission/fission.h"
#include "orchestration/orchestrate.h"
#include "report/graphviz.h"
#include "report/report.h"
#include "support/error.h"
#include "../test_temp_dir.h"

namespace orchid::report {
namespace {

namespace fs = std::filesystem;
using runtime::testing::GraphBuilder;

std::string test_dir() { return orchid::testing::process_temp_dir("orchid-report-test").string(); }

// Conv + Relu, then a Softmax: a oneDNN kernel and generated ones. The first
// kernel is renamed to something that needs escaping.
runtime::Program small_program() {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 3, 8, 8});
  Attributes conv;
  conv.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  const ValueId r = b.op("Relu", {b.op("Conv", {x, b.constant({4, 3, 3, 3}), b.constant({4})}, conv)});
  Attributes softmax;
  softmax.set("axis", int64_t(-1));
  const Graph g = fission::fission(b.finish(b.op("Softmax", {r}, softmax)));
  orchestration::OrchestrateOptions options;
  options.profile = false;
  options.cache_dir = test_dir();
  runtime::Program program = orchestration::orchestrate(g, options);
  program.kernels[0].name = "conv <&> \"first\"";
  return program;
}

ReportOptions quick_options() {
  ReportOptions options;
  options.runs = 2;
  options.cache_dir = test_dir();
  return options;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST(ReportBuild, SmallProgramPage) {
  const runtime::Program program = small_program();
  const std::string page = build_report_html(program, {"small.onnx"}, quick_options());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(page.find("<?xml"), std::string::npos);
  ASSERT_NE(page.find("<svg"), std::string::npos);
  EXPECT_GE(count(page, "class=\"node\""), program.graph.nodes().size());  // every primitive drawn
  EXPECT_EQ(count(page, "class=\"cluster\""), program.kernels.size());
  const size_t body = page.find("<tbody>", page.find("<table id=\"kernels\""));
  EXPECT_EQ(count(page.substr(body, page.find("</tbody>", body) - body), "<tr>"), program.kernels.size());
  EXPECT_NE(page.find("<td class=\"name\">conv &lt;&amp;&gt; &quot;first&quot;</td>"), std::string::npos);
  EXPECT_EQ(page.find("conv <&>"), std::string::npos);
  EXPECT_NE(page.find("no-fusion baseline ("), std::string::npos);
  EXPECT_NE(page.find("small.onnx"), std::string::npos);
}

TEST(ReportBuild, WritesThePage) {
  const std::string path = test_dir() + "/report.html";
  ReportOptions options = quick_options();
  options.compare_no_fusion = false;
  write_report(small_program(), {"small.onnx"}, options, path);
  std::ifstream file(path);
  const std::string page((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_NE(page.find("no-fusion baseline not measured"), std::string::npos);
}

TEST(ReportBuild, UnwritablePathIsAUserError) {
  const std::string path = test_dir() + "/no-such-folder/report.html";
  ReportOptions options = quick_options();
  options.runs = 1;
  options.compare_no_fusion = false;
  try {
    write_report(small_program(), {"small.onnx"}, options, path);
    FAIL() << "expected orchid::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(ReportBuild, NoRunsIsAUserError) {
  ReportOptions options = quick_options();
  options.runs = 0;
  EXPECT_THROW(build_report_html(small_program(), {"small.onnx"}, options), Error);
}

TEST(ReportGraphviz, RendersSvg) {
  const std::string svg = render_svg("digraph g { a -> b; }");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);  // prolog and doctype dropped
  EXPECT_EQ(count(svg, "class=\"node\""), 2u);
  EXPECT_EQ(count(svg, "class=\"edge\""), 1u);
}

TEST(ReportGraphviz, MissingDotSaysToInstallGraphviz) {
  for (auto call : {+[] { check_graphviz("orchid-no-such-dot"); },
                    +[] { render_svg("digraph g { a; }", "orchid-no-such-dot"); }}) {
    try {
      call();
      FAIL() << "expected orchid::Error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("install Debian's graphviz"), std::string::npos) << e.what();
    }
  }
}

TEST(ReportGraphviz, BadDotTextIsReported) {
  EXPECT_THROW(render_svg("digraph g { a -> ; }"), Error);
}

}  // namespace
}  // namespace orchid::report
