//===- ReportHtml.cpp - `einc report --format html` -----------------------===//
//
// One self-contained page: inline CSS and inline SVG, no scripts, no
// external references. Headline figures, the roofline (every op a dot under
// the device's roofs), live memory over the training step, FLOPs and bytes
// per layer, and the text report's tables.
//
//===----------------------------------------------------------------------===//
#include "Report.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

namespace einc {
namespace {

std::string escape(const std::string &s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string num(double v) { return fixed(v, 1); }

const char *phaseColor(const std::string &phase) {
  if (phase == "backward")
    return "#e8710a";
  if (phase == "optimizer")
    return "#1e8e3e";
  if (phase == "recompute")
    return "#9334e6";
  return "#1a73e8";
}

const char *kStyle = R"(<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #202124; margin: 24px 32px; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #dadce0; padding-bottom: 4px; }
.sub { color: #5f6368; margin-bottom: 16px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { border: 1px solid #dadce0; border-radius: 8px; padding: 10px 14px; min-width: 150px; }
.card .v { font-size: 20px; font-weight: 600; }
.card .l { color: #5f6368; font-size: 12px; }
.bad { color: #c5221f; }
.good { color: #137333; }
.charts { display: flex; flex-wrap: wrap; gap: 24px; }
figure { margin: 0; }
figcaption { color: #5f6368; font-size: 12px; max-width: 640px; }
svg text { font: 11px system-ui, sans-serif; fill: #3c4043; }
svg .axis { stroke: #5f6368; stroke-width: 1; }
svg .grid { stroke: #e8eaed; stroke-width: 1; }
pre { font: 12px/1.35 ui-monospace, "DejaVu Sans Mono", monospace; background: #f8f9fa; border: 1px solid #e8eaed; border-radius: 6px; padding: 12px; overflow-x: auto; }
table.kernels { border-collapse: collapse; font: 12px/1.35 ui-monospace, "DejaVu Sans Mono", monospace; }
table.kernels td, table.kernels th { border-bottom: 1px solid #e8eaed; padding: 2px 8px; text-align: left; vertical-align: top; }
.legend span { display: inline-block; margin-right: 14px; font-size: 12px; }
.dot { display: inline-block; width: 10px; height: 10px; border-radius: 5px; margin-right: 4px; vertical-align: -1px; }
</style>
)";

struct Frame {
  double x0 = 60, y0 = 20, w = 560, h = 320; // plot area inside the svg
};

/// The roofline, log-log: x intensity (FLOP/byte), y attained FLOP/s.
void roofline(const Report &r, llvm::raw_ostream &os) {
  Frame f;
  double xmin = 1e-2, xmax = 1e4, ymin = 1e9, ymax = 1e16;
  double peak = std::max(r.matrixPeak, 1.0);
  // Fit the decades to the device and the ops.
  ymax = std::pow(10, std::ceil(std::log10(peak * 1.5)));
  ymin = ymax / 1e7;
  for (const ReportOp &op : r.ops)
    if (op.flops > 0 && op.bytes > 0) {
      xmin = std::min(xmin, std::pow(10, std::floor(std::log10(op.intensity))));
      xmax = std::max(xmax, std::pow(10, std::ceil(std::log10(op.intensity))));
    }
  auto X = [&](double v) {
    return f.x0 + f.w * (std::log10(v) - std::log10(xmin)) / (std::log10(xmax) - std::log10(xmin));
  };
  auto Y = [&](double v) {
    v = std::clamp(v, ymin, ymax);
    return f.y0 +
           f.h * (1 - (std::log10(v) - std::log10(ymin)) / (std::log10(ymax) - std::log10(ymin)));
  };
  os << "<figure><svg width=\"640\" height=\"380\" viewBox=\"0 0 640 380\" role=\"img\">\n";
  for (double d = xmin; d <= xmax * 1.001; d *= 10) {
    os << "<line class=\"grid\" x1=\"" << num(X(d)) << "\" y1=\"" << f.y0 << "\" x2=\"" << num(X(d))
       << "\" y2=\"" << f.y0 + f.h << "\"/>";
    os << "<text x=\"" << num(X(d)) << "\" y=\"" << f.y0 + f.h + 14 << "\" text-anchor=\"middle\">"
       << escape(d >= 1 ? withThousands(int64_t(d)) : fixed(d, d >= 0.1 ? 1 : 2)) << "</text>\n";
  }
  for (double d = ymin; d <= ymax * 1.001; d *= 10) {
    os << "<line class=\"grid\" x1=\"" << f.x0 << "\" y1=\"" << num(Y(d)) << "\" x2=\""
       << f.x0 + f.w << "\" y2=\"" << num(Y(d)) << "\"/>";
    os << "<text x=\"" << f.x0 - 4 << "\" y=\"" << num(Y(d) + 4) << "\" text-anchor=\"end\">"
       << escape(formatRate(d, "")) << "</text>\n";
  }
  os << "<rect class=\"axis\" fill=\"none\" x=\"" << f.x0 << "\" y=\"" << f.y0 << "\" width=\""
     << f.w << "\" height=\"" << f.h << "\"/>\n";
  // Roofs: min(peak, bandwidth × intensity), sampled along x.
  auto roof = [&](double top, const char *color, const char *label) {
    os << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
    for (int i = 0; i <= 200; ++i) {
      double x = xmin * std::pow(xmax / xmin, i / 200.0);
      os << num(X(x)) << "," << num(Y(std::min(top, r.bandwidth * x))) << " ";
    }
    os << "\"/>";
    os << "<text x=\"" << num(f.x0 + f.w - 4) << "\" y=\"" << num(Y(top) - 5)
       << "\" text-anchor=\"end\" style=\"fill:" << color << "\">" << escape(label) << " "
       << escape(formatRate(top, "FLOP")) << "</text>\n";
  };
  roof(r.matrixPeak, "#5f6368", ("matrix " + r.computeDtype).c_str());
  roof(r.vectorPeak, "#9aa0a6", "vector");
  size_t placed = 0;
  for (const ReportOp &op : r.ops) {
    if (op.flops <= 0 || op.bytes <= 0 || op.seconds <= 0)
      continue;
    ++placed;
    double attained = op.flops / op.seconds;
    os << "<circle cx=\"" << num(X(op.intensity)) << "\" cy=\"" << num(Y(attained))
       << "\" r=\"3\" fill=\"" << phaseColor(op.phase) << "\" fill-opacity=\"0.55\"><title>#"
       << op.index << " " << escape(op.name) << " (" << escape(op.phase) << ", " << escape(op.layer)
       << ") " << escape(formatFlops(double(op.flops))) << ", "
       << escape(formatBytes(double(op.bytes))) << ", " << escape(formatSeconds(op.seconds))
       << (op.location.empty() ? "" : " at " + escape(op.location)) << "</title></circle>\n";
  }
  os << "<text x=\"" << f.x0 + f.w / 2 << "\" y=\"" << f.y0 + f.h + 32
     << "\" text-anchor=\"middle\">arithmetic intensity (FLOP/byte)</text>";
  os << "<text transform=\"translate(12," << f.y0 + f.h / 2
     << ") rotate(-90)\" text-anchor=\"middle\">attained FLOP/s</text>\n";
  os << "</svg><figcaption>Roofline on " << escape(r.device) << ": every op with work (" << placed
     << " of " << r.ops.size()
     << ") at its intensity and the rate the model predicts for it; the roofs are min(peak, "
        "bandwidth × intensity). Dots on the slanted part are memory-bound. Hover a dot for the op."
     << "<div class=\"legend\"><span><i class=\"dot\" "
        "style=\"background:#1a73e8\"></i>forward</span>"
        "<span><i class=\"dot\" style=\"background:#e8710a\"></i>backward</span>"
        "<span><i class=\"dot\" style=\"background:#1e8e3e\"></i>optimizer</span>"
        "<span><i class=\"dot\" style=\"background:#9334e6\"></i>recompute</span></div>";
  // Each op sits under the roofs of its operands' type: the peaks by dtype.
  os << "By dtype:";
  for (const ReportDtype &d : r.dtypes)
    os << " " << escape(d.dtype) << " " << d.ops << " ops, " << escape(formatFlops(double(d.flops)))
       << ", " << escape(formatBytes(double(d.bytes))) << ", " << escape(formatSeconds(d.seconds))
       << " (matrix " << escape(formatRate(d.matrixPeak, "FLOP")) << ", vector "
       << escape(formatRate(d.vectorPeak, "FLOP")) << ");";
  os << "</figcaption></figure>\n";
}

/// Live bytes at each step of the @train_step Program (the runtime's memory
/// plan), the step with the most temporaries marked.
void memoryChart(const Report &r, llvm::raw_ostream &os) {
  Frame f;
  f.x0 = 70;
  f.w = 550;
  size_t n = r.liveAfter.size();
  double top = 1;
  for (int64_t b : r.liveAfter)
    top = std::max(top, double(b));
  top *= 1.1;
  auto X = [&](double i) { return f.x0 + f.w * (n > 1 ? i / double(n - 1) : 0.5); };
  auto Y = [&](double b) { return f.y0 + f.h * (1 - b / top); };
  os << "<figure><svg width=\"640\" height=\"380\" viewBox=\"0 0 640 380\" role=\"img\">\n";
  for (int k = 0; k <= 4; ++k) {
    double b = top * k / 4;
    os << "<line class=\"grid\" x1=\"" << f.x0 << "\" y1=\"" << num(Y(b)) << "\" x2=\""
       << f.x0 + f.w << "\" y2=\"" << num(Y(b)) << "\"/><text x=\"" << f.x0 - 4 << "\" y=\""
       << num(Y(b) + 4) << "\" text-anchor=\"end\">" << escape(formatBytes(b)) << "</text>\n";
  }
  if (n > 0) {
    // At most ~1000 points: the max of each bucket keeps the peak visible.
    size_t step = std::max<size_t>(1, n / 1000);
    os << "<polyline fill=\"none\" stroke=\"#1a73e8\" stroke-width=\"1.5\" points=\"";
    for (size_t i = 0; i < n; i += step) {
      int64_t b = 0;
      size_t j = i;
      for (size_t k = i; k < std::min(n, i + step); ++k)
        if (r.liveAfter[k] >= b)
          b = r.liveAfter[k], j = k;
      os << num(X(double(j))) << "," << num(Y(double(b))) << " ";
    }
    os << "\"/>\n";
  }
  if (r.peakOpIndex >= 0 && size_t(r.peakOpIndex) < n) {
    double px = X(double(r.peakOpIndex)), py = Y(double(r.liveAfter[size_t(r.peakOpIndex)]));
    os << "<circle cx=\"" << num(px) << "\" cy=\"" << num(py) << "\" r=\"4\" fill=\"#c5221f\"/>"
       << "<text x=\"" << num(std::min(px, f.x0 + f.w - 150)) << "\" y=\"" << num(py - 8)
       << "\" style=\"fill:#c5221f\">most live at step #" << r.peakOpIndex << "; planned "
       << escape(formatBytes(double(r.peakBytes))) << "</text>\n";
  }
  os << "<rect class=\"axis\" fill=\"none\" x=\"" << f.x0 << "\" y=\"" << f.y0 << "\" width=\""
     << f.w << "\" height=\"" << f.h << "\"/>";
  os << "<text x=\"" << f.x0 + f.w / 2 << "\" y=\"" << f.y0 + f.h + 20
     << "\" text-anchor=\"middle\">Program step in execution order (" << n
     << " steps): forward, backward, optimizer</text>\n";
  os << "</svg><figcaption>Live bytes at each step of the training step's Program: the resident "
        "block (params, optimizer state, inputs, results) and the temporaries live at it; the "
        "planned peak (arena + resident) is what the runtime allocates. Under the "
     << escape(r.precision) << " policy: " << escape(fixed(r.bytesPerParam, 2))
     << " bytes per param (params + grads + state); activations saved for the backward "
     << escape(formatBytes(double(r.activationBytes)));
  for (const auto &[dtype, bytes] : r.activationBytesByDtype)
    os << ", " << escape(dtype) << " " << escape(formatBytes(double(bytes)));
  if (r.paramCopyBytes > 0)
    os << "; working copies of params " << escape(formatBytes(double(r.paramCopyBytes)));
  os << ". Device memory: " << escape(formatBytes(r.deviceMemory))
     << (r.fits ? " — fits." : " — does not fit.") << "</figcaption></figure>\n";
}

/// `--remat-sweep`: predicted step time against planned peak, for the
/// ladder of budgets (the frontier) and the named policies.
void rematChart(const Report &r, llvm::raw_ostream &os) {
  const ReportRematSweep &w = *r.rematSweep;
  Frame f;
  f.x0 = 70;
  f.w = 550;
  double xmin = 1e300, xmax = 0, ymin = 1e300, ymax = 0;
  for (const auto *plans : {&w.frontier, &w.policies})
    for (const ReportRematPlan &p : *plans) {
      xmin = std::min(xmin, double(p.peak));
      xmax = std::max(xmax, double(p.peak));
      ymin = std::min(ymin, p.stepSeconds);
      ymax = std::max(ymax, p.stepSeconds);
    }
  if (xmax <= xmin)
    xmax = xmin + 1;
  if (ymax <= ymin)
    ymax = ymin + 1e-9;
  double padX = (xmax - xmin) * 0.08, padY = (ymax - ymin) * 0.1;
  xmin -= padX, xmax += padX, ymin = std::max(0.0, ymin - padY), ymax += padY;
  auto X = [&](double b) { return f.x0 + f.w * (b - xmin) / (xmax - xmin); };
  auto Y = [&](double t) { return f.y0 + f.h * (1 - (t - ymin) / (ymax - ymin)); };
  os << "<figure><svg width=\"640\" height=\"380\" viewBox=\"0 0 640 380\" role=\"img\">\n";
  for (int k = 0; k <= 4; ++k) {
    double t = ymin + (ymax - ymin) * k / 4, b = xmin + (xmax - xmin) * k / 4;
    os << "<line class=\"grid\" x1=\"" << f.x0 << "\" y1=\"" << num(Y(t)) << "\" x2=\""
       << f.x0 + f.w << "\" y2=\"" << num(Y(t)) << "\"/><text x=\"" << f.x0 - 4 << "\" y=\""
       << num(Y(t) + 4) << "\" text-anchor=\"end\">" << escape(formatSeconds(t)) << "</text>"
       << "<text x=\"" << num(X(b)) << "\" y=\"" << f.y0 + f.h + 14 << "\" text-anchor=\"middle\">"
       << escape(formatBytes(b)) << "</text>\n";
  }
  if (r.deviceMemory > xmin && r.deviceMemory < xmax)
    os << "<line x1=\"" << num(X(r.deviceMemory)) << "\" y1=\"" << f.y0 << "\" x2=\""
       << num(X(r.deviceMemory)) << "\" y2=\"" << f.y0 + f.h
       << "\" stroke=\"#c5221f\" stroke-dasharray=\"4 3\"/>\n";
  os << "<polyline fill=\"none\" stroke=\"#9334e6\" stroke-width=\"1.5\" points=\"";
  for (const ReportRematPlan &p : w.frontier)
    os << num(X(double(p.peak))) << "," << num(Y(p.stepSeconds)) << " ";
  os << "\"/>\n";
  for (const ReportRematPlan &p : w.frontier)
    os << "<circle cx=\"" << num(X(double(p.peak))) << "\" cy=\"" << num(Y(p.stepSeconds))
       << "\" r=\"3\" fill=\"#9334e6\"><title>budget " << escape(formatBytes(double(p.budget)))
       << ": peak " << escape(formatBytes(double(p.peak))) << ", recompute "
       << escape(formatFlops(double(p.recomputeFlops))) << "</title></circle>\n";
  for (const ReportRematPlan &p : w.policies)
    os << "<circle cx=\"" << num(X(double(p.peak))) << "\" cy=\"" << num(Y(p.stepSeconds))
       << "\" r=\"5\" fill=\"none\" stroke=\"#1e8e3e\" stroke-width=\"2\"/><text x=\""
       << num(X(double(p.peak)) + 7) << "\" y=\"" << num(Y(p.stepSeconds) - 6)
       << "\" style=\"fill:#1e8e3e\">" << escape(p.label) << "</text>\n";
  os << "<rect class=\"axis\" fill=\"none\" x=\"" << f.x0 << "\" y=\"" << f.y0 << "\" width=\""
     << f.w << "\" height=\"" << f.h << "\"/>";
  os << "<text x=\"" << f.x0 + f.w / 2 << "\" y=\"" << f.y0 + f.h + 32
     << "\" text-anchor=\"middle\">planned peak (arena + resident)</text>\n";
  os << "</svg><figcaption>The remat trade-off of the training step: for each budget of the "
        "ladder (purple) the plan of least predicted recompute time that fits, its planned peak "
        "and predicted step time; the named policies (green) on the same axes"
     << (r.deviceMemory > xmin && r.deviceMemory < xmax ? "; the device's memory (dashed)" : "")
     << ".</figcaption></figure>\n";
}

/// Horizontal bars of one per-layer quantity.
void layerBars(const Report &r, llvm::raw_ostream &os, const char *title, const char *color,
               double (*value)(const ReportLayer &), std::string (*label)(double)) {
  double top = 1;
  for (const ReportLayer &l : r.layers)
    top = std::max(top, value(l));
  double rowH = 18, x0 = 80, w = 420;
  double height = 30 + rowH * double(r.layers.size());
  os << "<figure><svg width=\"640\" height=\"" << num(height) << "\" viewBox=\"0 0 640 "
     << num(height) << "\" role=\"img\">\n<text x=\"0\" y=\"14\" style=\"font-weight:600\">"
     << escape(title) << "</text>\n";
  double y = 24;
  for (const ReportLayer &l : r.layers) {
    double v = value(l);
    os << "<text x=\"" << x0 - 6 << "\" y=\"" << num(y + 12) << "\" text-anchor=\"end\">"
       << escape(l.name) << "</text><rect x=\"" << x0 << "\" y=\"" << num(y + 2) << "\" width=\""
       << num(std::max(0.5, w * v / top)) << "\" height=\"" << rowH - 4 << "\" fill=\"" << color
       << "\"/><text x=\"" << num(x0 + w * v / top + 6) << "\" y=\"" << num(y + 12) << "\">"
       << escape(label(v)) << "</text>\n";
    y += rowH;
  }
  os << "</svg></figure>\n";
}

std::string textReport(const Report &r) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printReportText(r, os);
  return text;
}

void card(llvm::raw_ostream &os, const std::string &value, const std::string &label,
          const char *cls = "") {
  os << "<div class=\"card\"><div class=\"v " << cls << "\">" << escape(value)
     << "</div><div class=\"l\">" << escape(label) << "</div></div>\n";
}

/// The kernel table: every kernel of the step, where fusion stopped.
void kernelTable(const Report &r, llvm::raw_ostream &os) {
  int64_t boundaries = 0;
  std::string reasons;
  for (const auto &[reason, count] : r.fusionStops) {
    boundaries += count;
    reasons += (reasons.empty() ? "" : ", ") + reason + " " + withThousands(count);
  }
  os << "<h2>Kernels</h2>\n<p>" << withThousands(int64_t(r.kernels.size()))
     << " kernels with fusion = " << escape(r.fusionSetting) << ", predicted "
     << escape(formatSeconds(r.kernelSeconds)) << "; fusion stopped at "
     << withThousands(boundaries) << " boundaries (" << escape(reasons) << ").</p>\n"
     << "<details><summary>every kernel</summary>\n<table class=\"kernels\">\n<tr><th>#</th>"
        "<th>kind</th><th>phase</th><th>layer</th><th>ops</th><th>FLOPs</th><th>read</th>"
        "<th>written</th><th>FLOP/B</th><th>bound</th><th>time</th><th>source</th>"
        "<th>fusion stopped before</th></tr>\n";
  for (const ReportKernel &k : r.kernels) {
    std::string ops, stops;
    for (const std::string &op : k.ops)
      ops += (ops.empty() ? "" : " ") + llvm::StringRef(op).drop_front(4).str();
    for (const ReportFusionStop &s : k.stops)
      stops += (stops.empty() ? "" : "; ") + ("#" + std::to_string(s.to)) + " " + s.reason +
               (s.detail.empty() ? "" : " (" + s.detail + ")");
    std::string bound = k.flops == 0 && k.bytesRead + k.bytesWritten == 0 ? "—"
                        : k.computeBound                                  ? "compute"
                                                                          : "memory";
    os << "<tr><td>" << k.index << "</td><td>" << escape(k.kind) << "</td><td>" << escape(k.phase)
       << "</td><td>" << escape(k.layer) << "</td><td>" << escape(ops) << "</td><td>"
       << escape(formatFlops(double(k.flops))) << "</td><td>"
       << escape(formatBytes(double(k.bytesRead))) << "</td><td>"
       << escape(formatBytes(double(k.bytesWritten))) << "</td><td>"
       << escape(fixed(k.intensity, k.intensity >= 10 ? 0 : 2)) << "</td><td>" << bound
       << "</td><td>" << escape(formatSeconds(k.seconds)) << "</td><td>"
       << escape(llvm::join(k.locations, " ")) << "</td><td>" << escape(stops) << "</td></tr>\n";
  }
  os << "</table>\n</details>\n";
}

} // namespace

void printReportHtml(const Report &r, llvm::raw_ostream &os) {
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>einc "
        "report: "
     << escape(r.model) << "</title>\n"
     << kStyle << "</head>\n<body>\n";
  os << "<h1>einc report: " << escape(r.model) << "</h1>\n<div class=\"sub\">" << escape(r.device)
     << " (" << escape(r.deviceDescription) << "), " << escape(r.precision) << " precision, "
     << escape(r.optimizer) << ", fusion " << (r.fusion ? "on" : "off") << ", "
     << escape(withThousands(r.tokensPerStep)) << " tokens per step</div>\n<div class=\"cards\">\n";
  card(os, formatCount(double(r.params)), "params");
  card(os, formatFlops(double(r.flops.total())),
       "FLOPs per step (model " + formatFlops(double(r.modelFlops.total())) + ")");
  card(os, formatSeconds(r.stepSeconds),
       r.launchSeconds > 0
           ? "predicted step time, " + formatSeconds(r.launchSeconds) + " of it kernel launches"
           : std::string("predicted step time"));
  card(os, withThousands(int64_t(std::llround(r.tokensPerSecond))), "predicted tokens/s");
  card(os, fixed(100 * r.mfu, 1) + "%", "predicted MFU");
  card(os, formatBytes(double(r.peakBytes)),
       std::string("peak memory: ") + (r.fits ? "fits in " : "exceeds ") +
           formatBytes(r.deviceMemory),
       r.fits ? "good" : "bad");
  if (r.cluster)
    card(os, fixed(r.cluster->days, 1) + " days",
         std::to_string(r.cluster->gpus) + " × " + r.device + " for " +
             formatCount(r.cluster->tokens) + " tokens");
  os << "</div>\n";

  os << "<h2>Roofline and memory</h2>\n<div class=\"charts\">\n";
  roofline(r, os);
  memoryChart(r, os);
  if (r.rematSweep && r.rematSweep->ladder && !r.rematSweep->frontier.empty()) {
    os << "</div>\n<h2>Remat frontier</h2>\n<div class=\"charts\">\n";
    rematChart(r, os);
  }
  os << "</div>\n<h2>Per layer</h2>\n<div class=\"charts\">\n";
  layerBars(
      r, os, "FLOPs per layer", "#1a73e8", [](const ReportLayer &l) { return double(l.flops); },
      [](double v) { return formatFlops(v); });
  layerBars(
      r, os, "Bytes moved per layer", "#e8710a",
      [](const ReportLayer &l) { return double(l.bytes); },
      [](double v) { return formatBytes(v); });
  os << "</div>\n";
  kernelTable(r, os);
  os << "<h2>The report</h2>\n<pre>" << escape(textReport(r)) << "</pre>\n";
  os << "</body>\n</html>\n";
}

} // namespace einc
