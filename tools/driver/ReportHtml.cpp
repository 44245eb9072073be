//===- ReportHtml.cpp - `einc report --format html` -----------------------===//
//
// One self-contained page: inline CSS and inline SVG, no scripts, no
// external references. The verdict cards, step time by phase, kind and
// layer, memory over the step, the roofline of the kernels, the remat
// frontier (with --remat-sweep), the kernel table, and the text report.
// The sections are tools/driver/html/ (Sections.h).
//
//===----------------------------------------------------------------------===//
#include "Report.h"
#include "html/Sections.h"
#include "html/SvgText.h"

#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace einc {
namespace html {

namespace {
/// Each phase's colour (dots, bars, swatches) and its light band (shading
/// behind the memory chart); the first row is the default (forward).
struct PhaseStyle {
  const char *phase, *color, *band;
};
constexpr PhaseStyle kPhaseStyles[] = {
    {"forward", "#1a73e8", "#e8f0fe"},       {"backward", "#e8710a", "#fef3e8"},
    {"optimizer", "#1e8e3e", "#e6f4ea"},     {"recompute", "#9334e6", "#f3e8fd"},
    {"communication", "#c5221f", "#e8f0fe"},
};
const PhaseStyle &phaseStyle(llvm::StringRef phase) {
  for (const PhaseStyle &s : kPhaseStyles)
    if (phase == s.phase)
      return s;
  return kPhaseStyles[0];
}
} // namespace

const char *phaseColor(llvm::StringRef phase) { return phaseStyle(phase).color; }
const char *phaseBand(llvm::StringRef phase) { return phaseStyle(phase).band; }

std::string swatch(const char *color, llvm::StringRef name) {
  return "<span><i class=\"dot\" style=\"background:" + std::string(color) + "\"></i>" +
         escape(name) + "</span>";
}

std::string shortSource(const Report &r, llvm::StringRef path) {
  llvm::StringRef dir = llvm::sys::path::parent_path(r.model);
  if (!dir.empty() && path.starts_with(dir) && path.size() > dir.size() + 1 &&
      llvm::sys::path::is_separator(path[dir.size()]))
    return path.drop_front(dir.size() + 1).str();
  // Else the file name, with its :line:col.
  size_t slash = path.find_last_of('/');
  return slash == llvm::StringRef::npos ? path.str() : path.drop_front(slash + 1).str();
}

} // namespace html

namespace {

// Labels of the charts in DejaVu Sans, the font their widths are measured
// in (html/SvgText.h).
const char *kStyle = R"(<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #202124; margin: 24px 32px; background: #fff; max-width: 1400px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #dadce0; padding-bottom: 4px; }
.sub { color: #5f6368; margin-bottom: 16px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { border: 1px solid #dadce0; border-radius: 8px; padding: 10px 14px; min-width: 150px; max-width: 420px; }
.card.wide { max-width: 640px; }
.card .v { font-size: 20px; font-weight: 600; }
.card .l { color: #5f6368; font-size: 12px; }
.card code { font-size: 12px; word-break: break-all; }
.bad { color: #c5221f; }
.good { color: #137333; }
.card.alert { border-color: #c5221f; background: #fce8e6; }
.charts { display: flex; flex-wrap: wrap; gap: 0 40px; }
.charts section { width: 640px; }
figure { margin: 0; }
figcaption { color: #5f6368; font-size: 12px; max-width: 640px; }
svg text { font-family: "DejaVu Sans", Verdana, sans-serif; font-size: 11px; fill: #3c4043; }
svg .axis { stroke: #5f6368; stroke-width: 1; fill: none; }
svg .grid { stroke: #e8eaed; stroke-width: 1; }
pre { font: 12px/1.35 ui-monospace, "DejaVu Sans Mono", monospace; background: #f8f9fa; border: 1px solid #e8eaed; border-radius: 6px; padding: 12px; overflow-x: auto; }
table.t { border-collapse: collapse; font-size: 12px; }
table.t td, table.t th { border-bottom: 1px solid #e8eaed; padding: 2px 8px; text-align: left; vertical-align: top; }
table.t th { color: #5f6368; font-weight: 600; white-space: nowrap; }
table.t .n { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
table.t .m { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
table.layers td, table.kernels td:nth-child(-n+5) { white-space: nowrap; }
table.kernels td:nth-child(6) { min-width: 160px; }
table.kernels td:last-child { min-width: 220px; }
.scroll { overflow-x: auto; }
table.t .bar i { display: inline-block; height: 9px; vertical-align: 0; margin-right: 6px; }
details summary { cursor: pointer; color: #1a73e8; margin: 6px 0; }
.legend span { display: inline-block; margin-right: 14px; font-size: 12px; }
.dot { display: inline-block; width: 10px; height: 10px; border-radius: 5px; margin-right: 4px; vertical-align: -1px; }
</style>
)";

} // namespace

void printReportHtml(const Report &r, llvm::raw_ostream &os) {
  using html::escape;
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>einc "
        "report: "
     << escape(r.model) << "</title>\n"
     << kStyle << "</head>\n<body>\n";
  os << "<h1>einc report: " << escape(r.model) << "</h1>\n<div class=\"sub\">" << escape(r.device)
     << " (" << escape(r.deviceDescription) << "), " << escape(r.precision) << " precision, "
     << escape(r.optimizer) << ", fusion " << escape(r.fusionSetting) << ", remat "
     << escape(r.remat.policy) << ", " << escape(withThousands(r.tokensPerStep))
     << " tokens per step</div>\n";
  html::verdictCards(r, os);
  html::stepTime(r, os);
  os << "<div class=\"charts\">\n<section>\n<h2>Memory over the step</h2>\n";
  html::memoryChart(r, os);
  os << "</section>\n<section>\n<h2>Roofline</h2>\n";
  html::rooflineChart(r, os);
  if (r.rematSweep && r.rematSweep->ladder && !r.rematSweep->frontier.empty()) {
    os << "</section>\n<section>\n<h2>Remat frontier</h2>\n";
    html::rematChart(r, os);
  }
  os << "</section>\n</div>\n";
  html::kernelTable(r, os);
  // The text report, its kernel table left out (the table above has it).
  Report text = r;
  text.kernelTable = false;
  std::string body;
  llvm::raw_string_ostream out(body);
  printReportText(text, out);
  os << "<h2>The report</h2>\n<pre>" << escape(body) << "</pre>\n";
  os << "</body>\n</html>\n";
}

} // namespace einc
