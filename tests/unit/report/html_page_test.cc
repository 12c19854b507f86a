// The report page: every kernel a table row, names escaped, the records
// shown, the SVG inlined, nothing fetched from elsewhere.
#include <gtest/gtest.h>

#include "report/html_page.h"
#include "report_test_util.h"

namespace orchid::report {
namespace {

using testing::tiny_data;
using testing::tiny_program;

constexpr const char* kSvg = "<svg id=\"test-svg\"><g class=\"node\"><title>k0n0</title></g></svg>";

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST(ReportHtml, EscapesText) {
  EXPECT_EQ(html_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(html_escape("plain"), "plain");
}

TEST(ReportHtml, KernelTableHasARowPerKernel) {
  const runtime::Program program = tiny_program();
  ReportData data = tiny_data(program);
  data.kernels[1].name = "<script>alert(\"x\")</script>&";
  const std::string page = html_page(data, kSvg);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(page, "<table id=\"kernels\""), 1u);
  const size_t body = page.find("<tbody>", page.find("<table id=\"kernels\""));
  const size_t end = page.find("</tbody>", body);
  EXPECT_EQ(count(page.substr(body, end - body), "<tr>"), 3u);
  EXPECT_NE(page.find("<td class=\"name\">Relu0+Exp1</td><td class=\"name\">Relu+Exp</td><td>generated</td>"),
            std::string::npos);
  EXPECT_NE(page.find("<td class=\"num\" data-sort=\"0.03\">0.03000</td>"), std::string::npos);  // Add3's time
  EXPECT_NE(page.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;"), std::string::npos);
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_EQ(count(page, "<script>"), 1u);  // the page's own
  EXPECT_NE(page.find(kSvg), std::string::npos);
  EXPECT_NE(page.find("tiny.onnx"), std::string::npos);
  EXPECT_NE(page.find("body.dataset.rendered = \"ok\""), std::string::npos);
}

TEST(ReportHtml, SelfContained) {
  const runtime::Program program = tiny_program();
  const std::string page = html_page(tiny_data(program), kSvg);
  for (const char* external : {"<link", "src=", "http://", "https://", "@import", "url("}) {
    EXPECT_EQ(page.find(external), std::string::npos) << external;
  }
}

TEST(ReportHtml, ShowsTheRecords) {
  const runtime::Program program = tiny_program();
  ReportData data = tiny_data(program);
  data.baseline_ms = 0.14;
  data.baseline_kernels = 4;
  BlpRecord blp;
  blp.candidates = 12;
  blp.fused_candidates = 4;
  blp.clusters = 3;
  blp.measured = 2;
  blp.cached = 1;
  blp.rounds = 2;
  blp.proven_optimal = false;
  blp.parts.push_back({0, 3, 4, 12, "narrowest"});
  data.blp = blp;
  data.derivation = testing::one_derived_region();
  const std::string page = html_page(data, kSvg);
  EXPECT_NE(page.find("no-fusion baseline (4 kernels): this plan is 2.00x as fast"), std::string::npos);
  EXPECT_NE(page.find("12 (4 fused) from 3 clusters"), std::string::npos);
  EXPECT_NE(page.find("2 measured in this compile, 1 from the cache"), std::string::npos);
  EXPECT_NE(page.find("no (solver time limit reached)"), std::string::npos);
  EXPECT_NE(page.find("<td>narrowest</td>"), std::string::npos);
  EXPECT_NE(page.find("Conv 1x8x8x8 * 8x8x3x3<span class=\"badge applied\">applied</span>"), std::string::npos);
  EXPECT_NE(page.find("<li>split &lt;h&gt;</li>\n<li>merge (w)</li>"), std::string::npos);
  EXPECT_NE(page.find("2.000 ms -&gt; 1.000 ms (2.00x)"), std::string::npos);
  EXPECT_NE(page.find("Conv&lt;0&gt;"), std::string::npos);
  EXPECT_NE(page.find("<li>1.500 ms: other</li>"), std::string::npos);
}

TEST(ReportHtml, SaysWhenRecordsAreMissing) {
  const runtime::Program program = tiny_program();
  const std::string page = html_page(tiny_data(program), kSvg);
  EXPECT_NE(page.find("No orchestration record"), std::string::npos);
  EXPECT_NE(page.find("No derivation record"), std::string::npos);
  EXPECT_NE(page.find("no-fusion baseline not measured"), std::string::npos);
}

}  // namespace
}  // namespace orchid::report
