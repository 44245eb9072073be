//===- StepTime.cpp - Step time by phase, by kind, and per layer ---------===//
//
// The predicted step (the kernels' times, each op its share: op.seconds
// sums to the step) split by phase — with --gpus, the all-reduce time the
// backward does not hide added as "communication" — and by kind of work,
// as two stacked bars; then per layer: time, FLOPs and bytes side by side,
// runs of identical layers in one row ("layers 1–47 ×47").
//
//===----------------------------------------------------------------------===//
#include "Sections.h"
#include "SvgText.h"

#include <algorithm>
#include <cmath>

namespace einc::html {
namespace {

struct Part {
  std::string name;
  const char *color;
  double seconds;
};

std::vector<Part> byPhase(const Report &r) {
  std::vector<Part> parts;
  for (const char *phase : {"forward", "backward", "recompute", "optimizer"}) {
    double s = 0;
    for (const ReportOp &op : r.ops)
      if (op.phase == phase)
        s += op.seconds;
    parts.push_back({phase, phaseColor(phase), s});
  }
  if (r.dataParallel)
    parts.push_back({"communication", phaseColor("communication"), r.dataParallel->exposedSeconds});
  return parts;
}

std::vector<Part> byKind(const Report &r) {
  static const std::pair<const char *, const char *> kinds[] = {{"contraction", "matmul"},
                                                                {"elementwise", "elementwise"},
                                                                {"reduction", "reduction"},
                                                                {"data", "data movement"}};
  static const char *colors[] = {"#1a73e8", "#12b5cb", "#f9ab00", "#9aa0a6"};
  std::vector<Part> parts;
  for (size_t k = 0; k < 4; ++k) {
    double s = 0;
    for (const ReportOp &op : r.ops)
      if (op.kind == kinds[k].first)
        s += op.seconds;
    parts.push_back({kinds[k].second, colors[k], s});
  }
  return parts;
}

/// One stacked bar: each part its share of the width, labelled inside
/// where its label fits.
void stackedBar(Svg &svg, double y, const char *title, const std::vector<Part> &parts, double x0,
                double w) {
  double total = 0;
  for (const Part &p : parts)
    total += p.seconds;
  svg.text(x0 - 8, y + 15, title, Label{Anchor::End});
  double x = x0;
  for (const Part &p : parts) {
    if (p.seconds <= 0 || total <= 0)
      continue;
    double pw = w * p.seconds / total;
    svg.os << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(pw)
           << "\" height=\"22\" fill=\"" << p.color << "\"><title>" << escape(p.name) << " "
           << escape(formatSeconds(p.seconds)) << "</title></rect>\n";
    std::string label = p.name + " " + fixed(100 * p.seconds / total, 0) + "%";
    if (textWidth(label) + 8 <= pw)
      svg.text(x + pw / 2, y + 15, label, Label{Anchor::Middle, "#fff"});
    x += pw;
  }
}

void legend(llvm::raw_ostream &os, const std::vector<Part> &parts) {
  double total = 0;
  for (const Part &p : parts)
    total += p.seconds;
  os << "<div class=\"legend\">";
  for (const Part &p : parts)
    if (p.seconds > 0)
      os << swatch(p.color, p.name + " " + formatSeconds(p.seconds) + " (" +
                                fixed(total > 0 ? 100 * p.seconds / total : 0, 1) + "%)");
  os << "</div>\n";
}

bool identical(const ReportLayer &a, const ReportLayer &b) {
  return a.ops == b.ops && a.flops == b.flops && a.bytes == b.bytes &&
         std::fabs(a.seconds - b.seconds) <= 1e-9 * std::max(a.seconds, b.seconds);
}

int layerNumber(llvm::StringRef name) {
  int n = -1;
  if (name.consume_front("layer.") && !name.getAsInteger(10, n))
    return n;
  return -1;
}

/// A table cell with a bar of `v` against `top`.
void barCell(llvm::raw_ostream &os, double v, double top, const char *color,
             const std::string &text) {
  os << "<td class=\"n bar\"><i style=\"width:" << num(top > 0 ? 48 * v / top : 0)
     << "px;background:" << color << "\"></i>" << escape(text) << "</td>";
}

void layerTable(const Report &r, llvm::raw_ostream &os) {
  double topSeconds = 0, topFlops = 0, topBytes = 0;
  for (const ReportLayer &l : r.layers) {
    topSeconds = std::max(topSeconds, l.seconds);
    topFlops = std::max(topFlops, double(l.flops));
    topBytes = std::max(topBytes, double(l.bytes));
  }
  os << "<table class=\"t layers\"><tr><th>layer</th><th class=\"n\">ops</th><th>time</th>"
        "<th>FLOPs</th><th>bytes moved</th><th class=\"n\">of the step</th></tr>\n";
  for (size_t i = 0; i < r.layers.size();) {
    const ReportLayer &l = r.layers[i];
    size_t j = i + 1;
    int first = layerNumber(l.name);
    while (first >= 0 && j < r.layers.size() &&
           layerNumber(r.layers[j].name) == first + int(j - i) && identical(l, r.layers[j]))
      ++j;
    size_t run = j - i;
    std::string name = l.name == "—" ? "outside the layers" : l.name;
    if (run > 1)
      name = "layers " + std::to_string(first) + "–" + std::to_string(first + int(run) - 1) + " ×" +
             std::to_string(run);
    os << "<tr><td>" << escape(name) << "</td><td class=\"n\">" << withThousands(l.ops) << "</td>";
    barCell(os, l.seconds, topSeconds, "#1a73e8", formatSeconds(l.seconds));
    barCell(os, double(l.flops), topFlops, "#12b5cb", formatFlops(double(l.flops)));
    barCell(os, double(l.bytes), topBytes, "#e8710a", formatBytes(double(l.bytes)));
    double share = r.stepSeconds > 0 ? 100 * l.seconds / r.stepSeconds : 0;
    os << "<td class=\"n\">" << fixed(share, 1) << "%" << (run > 1 ? " each" : "")
       << "</td></tr>\n";
    i = j;
  }
  os << "</table>\n";
}

} // namespace

void stepTime(const Report &r, llvm::raw_ostream &os) {
  os << "<div class=\"charts\">\n<section>\n<h2>Step time</h2>\n<figure id=\"step-time\">";
  double x0 = 110, w = 640 - x0 - 10;
  {
    Svg svg(os, 640, 70);
    stackedBar(svg, 4, "by phase", byPhase(r), x0, w);
    stackedBar(svg, 40, "by kind", byKind(r), x0, w);
    svg.close();
  }
  os << "<figcaption>The predicted step, " << escape(formatSeconds(r.stepSeconds))
     << (r.dataParallel ? " + " + escape(formatSeconds(r.dataParallel->exposedSeconds)) +
                              " of all-reduce the backward does not hide"
                        : "")
     << ", by phase:";
  legend(os, byPhase(r));
  os << "by kind of work (each kernel's time shared among its ops):";
  legend(os, byKind(r));
  os << "</figcaption></figure>\n</section>\n<section>\n<h2>Per layer</h2>\n";
  layerTable(r, os);
  os << "</section>\n</div>\n";
}

} // namespace einc::html
