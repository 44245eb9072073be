//===- ReportHtmlTest.cpp - The HTML report's labels and memory timeline --===//
//
// Issue 30: "the generator measures its SVG labels with font metrics and a
// unit test asserts none leaves its box", and memory over the step by
// category. Reports of the examples, compiled as `einc report` compiles
// them (gpt; gpt with --remat-sweep; mlp_lm on 8 GPUs for 1B tokens; gpt
// at a batch that does not fit; gpt under `full` remat; GPT-2 XL), rendered
// as HTML:
// every <text> of every <svg>, measured with the same font metrics
// (tools/driver/html/SvgText.h), lies inside the svg's viewBox. And the
// memory timeline's categories sum to live_after at every step.
//
//===----------------------------------------------------------------------===//
#include "tools/driver/Compile.h"
#include "tools/driver/Frontend.h"
#include "tools/driver/html/SvgText.h"

#include "dsl/Elaborator.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <regex>

namespace {

struct Case {
  std::string model;
  std::vector<std::pair<std::string, std::string>> overrides;
  einc::ReportFlags flags;
  std::string name;
};

std::vector<Case> cases() {
  einc::ReportFlags sweep, cluster;
  sweep.rematSweep = true;
  cluster.gpus = 8;
  cluster.clusterTokens = 1e9;
  return {
      {"gpt", {}, {}, "gpt"},
      {"gpt", {}, sweep, "gpt --remat-sweep"},
      {"mlp_lm", {}, cluster, "mlp_lm --gpus 8 --tokens 1B"},
      {"gpt", {{"batch", "8192"}}, {}, "gpt batch=8192 (does not fit)"},
      {"gpt", {{"remat", "full"}}, {}, "gpt remat=full"},
      {"gpt",
       {{"d", "1600"},
        {"layers", "48"},
        {"ctx", "1024"},
        {"heads", "25"},
        {"vocab", "50257"},
        {"precision", "bf16-mixed"}},
       {},
       "GPT-2 XL bf16-mixed"},
  };
}

bool compile(const Case &c, mlir::MLIRContext &context, einc::CompiledModel &out) {
  einc::CompileRequest request;
  request.use = einrt::SettingsUse::Report;
  request.modelPath = std::string(EINC_SOURCE_DIR) + "/examples/" + c.model + ".ein";
  request.overrides = c.overrides;
  request.reportFlags = c.flags;
  einc::Frontend fe;
  if (!fe.load(request.modelPath) || !fe.parse())
    return false;
  mlir::OwningOpRef<mlir::ModuleOp> module = fe.lower(context, request.overrides, request.use);
  fe.printDiagnostics();
  if (!module)
    return false;
  request.functions = {"train_step"};
  request.jit = false;
  request.report = true;
  request.reportDevice = "h100";
  request.settings = fe.settings;
  request.frontend = &fe;
  return einc::compileModel(*module, request, out);
}

std::string unescape(std::string s) {
  for (auto [from, to] : {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}})
    for (size_t at; (at = s.find(from)) != std::string::npos;)
      s.replace(at, std::strlen(from), to);
  return s;
}

std::string attribute(const std::string &tag, const std::string &name) {
  std::smatch m;
  if (std::regex_search(tag, m, std::regex(" " + name + "=\"([^\"]*)\"")))
    return m[1];
  return "";
}

/// Every <text> of every <svg> of `page` inside its viewBox; the count of
/// labels checked. (Scanned with find: std::regex recurses per character
/// and overflows the stack on a chart's length.)
int checkLabels(const std::string &page) {
  int checked = 0;
  for (size_t at = page.find("<svg "); at != std::string::npos; at = page.find("<svg ", at)) {
    size_t tagEnd = page.find('>', at), end = page.find("</svg>", at);
    EXPECT_NE(end, std::string::npos);
    if (tagEnd == std::string::npos || end == std::string::npos)
      break;
    std::string viewBox = attribute(page.substr(at, tagEnd - at), "viewBox");
    double w = 0, h = 0;
    EXPECT_EQ(std::sscanf(viewBox.c_str(), "0 0 %lf %lf", &w, &h), 2) << viewBox;
    einc::html::Box view{0, 0, w, h};
    for (size_t t = page.find("<text", at); t < end; t = page.find("<text", t + 1)) {
      size_t open = page.find('>', t), close = page.find("</text>", t);
      std::string tag = page.substr(t + 5, open - t - 5);
      std::string text = unescape(page.substr(open + 1, close - open - 1));
      std::string style = attribute(tag, "style");
      EXPECT_EQ(attribute(tag, "transform"), "") << "a rotated label: " << text;
      std::string anchor = attribute(tag, "text-anchor");
      double px = einc::html::kFontPx;
      std::smatch size;
      if (std::regex_search(style, size, std::regex("font-size:([0-9.]+)px")))
        px = std::stod(size[1]);
      einc::html::Box box =
          einc::html::textBox(text, std::stod(attribute(tag, "x")), std::stod(attribute(tag, "y")),
                              anchor == "middle" ? einc::html::Anchor::Middle
                              : anchor == "end"  ? einc::html::Anchor::End
                                                 : einc::html::Anchor::Start,
                              px, style.find("font-weight:bold") != std::string::npos);
      EXPECT_TRUE(box.within(view))
          << "\"" << text << "\" at [" << box.x0 << ", " << box.x1 << "] x [" << box.y0 << ", "
          << box.y1 << "] leaves the svg's 0 0 " << view.x1 << " " << view.y1;
      ++checked;
    }
    at = end;
  }
  return checked;
}

TEST(ReportHtml, LabelsStayInTheirCharts) {
  for (const Case &c : cases()) {
    SCOPED_TRACE(c.name);
    mlir::MLIRContext context;
    ein::dsl::registerElaboratorDialects(context);
    einc::CompiledModel compiled;
    ASSERT_TRUE(compile(c, context, compiled));
    ASSERT_TRUE(compiled.report.has_value());
    std::string page;
    llvm::raw_string_ostream os(page);
    einc::printReportHtml(*compiled.report, os);
    EXPECT_GT(checkLabels(page), 30);
  }
}

TEST(ReportHtml, MeasuresWithTheFontsWidths) {
  // DejaVu Sans at 11 px: "0" advances 1303/2048 em, "W" 2025/2048.
  EXPECT_NEAR(einc::html::textWidth("0"), 11 * 1303 / 2048.0, 1e-9);
  EXPECT_NEAR(einc::html::textWidth("00W"), 11 * (2 * 1303 + 2025) / 2048.0, 1e-9);
  EXPECT_GT(einc::html::textWidth("W", 11, true), einc::html::textWidth("W"));
  // µ is in the table; a character that is not counts as the widest.
  EXPECT_NEAR(einc::html::textWidth("µ"), 11 * 1303 / 2048.0, 1e-9);
  EXPECT_GT(einc::html::textWidth("漢"), einc::html::textWidth("W"));
  // A label past the right edge is moved inside.
  std::string out;
  llvm::raw_string_ostream os(out);
  einc::html::Svg svg(os, 100, 50);
  einc::html::Box b = svg.text(95, 20, "a long label");
  svg.close();
  EXPECT_LE(b.x1, 100);
  EXPECT_GE(b.x0, 0);
  EXPECT_EQ(checkLabels(out), 1);
}

TEST(ReportHtml, MemoryTimelineSumsToLiveBytes) {
  for (const Case &c : cases()) {
    if (c.flags.rematSweep || c.flags.gpus)
      continue;
    SCOPED_TRACE(c.name);
    mlir::MLIRContext context;
    ein::dsl::registerElaboratorDialects(context);
    einc::CompiledModel compiled;
    ASSERT_TRUE(compile(c, context, compiled));
    const einc::Report &r = *compiled.report;
    const einc::ReportMemoryTimeline &t = r.memoryTimeline;
    size_t n = r.liveAfter.size();
    ASSERT_EQ(t.grads.size(), n);
    EXPECT_EQ(t.resident(), r.residentBytes);
    int64_t grads = 0, saved = 0, recompute = 0;
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(t.liveAt(i), r.liveAfter[i]) << "step " << i;
      ASSERT_GE(std::min({t.grads[i], t.saved[i], t.recompute[i], t.other[i]}), 0) << i;
      grads = std::max(grads, t.grads[i]);
      saved = std::max(saved, t.saved[i]);
      recompute = std::max(recompute, t.recompute[i]);
    }
    // The resident block holds the params and the state (in and out).
    EXPECT_GE(t.params, r.paramBytes);
    EXPECT_GE(t.optimizerState, r.optimizerBytes);
    // Activations are saved for the backward, gradients wait for the
    // optimizer; only a remat policy recomputes.
    EXPECT_GT(saved, 0);
    EXPECT_GT(grads, 0);
    EXPECT_EQ(recompute > 0, r.remat.policy == "full");
    // The phases cover every step in order: forward first, optimizer last.
    ASSERT_FALSE(t.phases.empty());
    EXPECT_EQ(t.phases.front().first, 0);
    EXPECT_EQ(t.phases.front().phase, "forward");
    EXPECT_EQ(t.phases.back().phase, "optimizer");
    EXPECT_EQ(t.phases.back().last, int64_t(n) - 1);
    for (size_t k = 1; k < t.phases.size(); ++k)
      EXPECT_EQ(t.phases[k].first, t.phases[k - 1].last + 1);
  }
}

} // namespace
