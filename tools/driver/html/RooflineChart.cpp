//===- RooflineChart.cpp - The kernels on the device's roofline ----------===//
//
// Log-log: x a kernel's intensity (FLOP/byte), y the FLOP/s it attains in
// its predicted time; the roofs min(peak, bandwidth × intensity) of the
// matrix and vector units at the step's compute dtype. One dot per kernel
// with FLOPs (a kernel that only moves data has no place on a log FLOP/s
// axis), coloured by phase, a short tooltip.
//
//===----------------------------------------------------------------------===//
#include "Sections.h"
#include "SvgText.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace einc::html {
namespace {

bool drawn(const ReportKernel &k) {
  return k.flops > 0 && k.bytesRead + k.bytesWritten > 0 && k.seconds > 0;
}

std::string decade(double d) {
  return d >= 1 ? withThousands(int64_t(std::llround(d)))
                : fixed(d, int(std::ceil(-std::log10(d))));
}

} // namespace

void rooflineChart(const Report &r, llvm::raw_ostream &os) {
  double peak = std::max(r.matrixPeak, 1.0);
  double ymax = std::pow(10, std::ceil(std::log10(peak * 1.5))), ymin = ymax / 1e7;
  double xmin = 1e-2, xmax = 1e4;
  for (const ReportKernel &k : r.kernels)
    if (drawn(k)) {
      xmin = std::min(xmin, std::pow(10, std::floor(std::log10(k.intensity))));
      xmax = std::max(xmax, std::pow(10, std::ceil(std::log10(k.intensity))));
    }
  double labelW = 0;
  for (double d = ymin; d <= ymax * 1.001; d *= 10)
    labelW = std::max(labelW, textWidth(formatRate(d, "")));
  double x0 = std::ceil(labelW) + 10, y0 = 24, w = 640 - x0 - 12, h = 320;
  auto X = [&](double v) {
    return x0 + w * (std::log10(v) - std::log10(xmin)) / (std::log10(xmax) - std::log10(xmin));
  };
  auto Y = [&](double v) {
    v = std::clamp(v, ymin, ymax);
    return y0 +
           h * (1 - (std::log10(v) - std::log10(ymin)) / (std::log10(ymax) - std::log10(ymin)));
  };

  os << "<figure id=\"roofline\">";
  Svg svg(os, 640, y0 + h + 44);
  for (double d = xmin; d <= xmax * 1.001; d *= 10) {
    os << "<line class=\"grid\" x1=\"" << num(X(d)) << "\" y1=\"" << num(y0) << "\" x2=\""
       << num(X(d)) << "\" y2=\"" << num(y0 + h) << "\"/>";
    svg.text(X(d), y0 + h + 14, decade(d), Label{Anchor::Middle});
  }
  for (double d = ymin; d <= ymax * 1.001; d *= 10) {
    os << "<line class=\"grid\" x1=\"" << num(x0) << "\" y1=\"" << num(Y(d)) << "\" x2=\""
       << num(x0 + w) << "\" y2=\"" << num(Y(d)) << "\"/>";
    svg.text(x0 - 6, Y(d) + 4, formatRate(d, ""), Label{Anchor::End});
  }
  os << "<rect class=\"axis\" x=\"" << num(x0) << "\" y=\"" << num(y0) << "\" width=\"" << num(w)
     << "\" height=\"" << num(h) << "\"/>\n";
  auto roof = [&](double top, const char *color, const std::string &label) {
    os << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
    // The slanted part is straight in log-log: its ends and the ridge do.
    double ridge = r.bandwidth > 0 ? top / r.bandwidth : xmin;
    for (double x : {xmin, std::clamp(ridge, xmin, xmax), xmax})
      os << num(X(x)) << "," << num(Y(std::min(top, r.bandwidth * x))) << " ";
    os << "\"/>\n";
    svg.text(x0 + w - 4, Y(top) - 5, label + " " + formatRate(top, "FLOP"),
             Label{Anchor::End, color});
  };
  bool same = r.vectorPeak == r.matrixPeak;
  roof(r.matrixPeak, "#5f6368", (same ? "matrix = vector " : "matrix ") + r.computeDtype);
  if (!same)
    roof(r.vectorPeak, "#9aa0a6", "vector " + r.computeDtype);

  // The dots, one group per phase.
  std::map<std::string, std::vector<const ReportKernel *>> byPhase;
  size_t placed = 0;
  for (const ReportKernel &k : r.kernels)
    if (drawn(k))
      byPhase[k.phase].push_back(&k), ++placed;
  for (const auto &[phase, kernels] : byPhase) {
    os << "<g class=\"dots\" data-phase=\"" << escape(phase) << "\" fill=\"" << phaseColor(phase)
       << "\" fill-opacity=\"0.55\">\n";
    for (const ReportKernel *k : kernels)
      os << "<circle cx=\"" << num(X(k->intensity)) << "\" cy=\""
         << num(Y(double(k->flops) / k->seconds)) << "\" r=\"3\"><title>#" << k->index << " "
         << escape(k->kind) << ", " << escape(k->layer) << ": " << escape(formatSeconds(k->seconds))
         << "</title></circle>\n";
    os << "</g>\n";
  }
  svg.text(x0 + w / 2, y0 + h + 34, "arithmetic intensity (FLOP/byte)", Label{Anchor::Middle});
  svg.text(2, 14, "attained FLOP/s", Label{Anchor::Start, nullptr, true});
  svg.close();

  os << "<figcaption><div class=\"legend\">";
  for (const auto &[phase, kernels] : byPhase)
    os << swatch(phaseColor(phase), phase + " (" + std::to_string(kernels.size()) + ")");
  os << "</div>The " << placed << " kernels with FLOPs of the " << r.kernels.size()
     << " kernels of the step on " << escape(r.device)
     << " (the others only move data), each at its intensity and the FLOP/s of its predicted "
        "time; the roofs are min(peak, bandwidth × intensity). Dots on the slanted roof are "
        "memory-bound. Hover a dot for its kernel (the kernel table has it by number). By dtype:";
  for (const ReportDtype &d : r.dtypes)
    os << " " << escape(d.dtype) << " " << d.ops << " ops, " << escape(formatFlops(double(d.flops)))
       << ", " << escape(formatSeconds(d.seconds)) << " (matrix "
       << escape(formatRate(d.matrixPeak, "FLOP")) << ", vector "
       << escape(formatRate(d.vectorPeak, "FLOP")) << ");";
  os << "</figcaption></figure>\n";
}

} // namespace einc::html
