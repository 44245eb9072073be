//===- RematChart.cpp - `--remat-sweep`: step time against planned peak --===//
//
// The ladder of budgets (the frontier: for each, the plan of least
// predicted recompute time that fits) and the named policies, each at its
// planned peak and predicted step time; the device's memory dashed where
// it is on the scale.
//
//===----------------------------------------------------------------------===//
#include "Sections.h"
#include "SvgText.h"

#include <algorithm>

namespace einc::html {

void rematChart(const Report &r, llvm::raw_ostream &os) {
  const ReportRematSweep &sweep = *r.rematSweep;
  double xmin = 1e300, xmax = 0, ymin = 1e300, ymax = 0;
  for (const auto *plans : {&sweep.frontier, &sweep.policies})
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
  double labelW = 0;
  for (int k = 0; k <= 4; ++k)
    labelW = std::max(labelW, textWidth(formatSeconds(ymin + (ymax - ymin) * k / 4)));
  double x0 = std::ceil(labelW) + 10, y0 = 24, w = 640 - x0 - 12, h = 300;
  auto X = [&](double b) { return x0 + w * (b - xmin) / (xmax - xmin); };
  auto Y = [&](double t) { return y0 + h * (1 - (t - ymin) / (ymax - ymin)); };

  os << "<figure id=\"remat\">";
  Svg svg(os, 640, y0 + h + 44);
  for (int k = 0; k <= 4; ++k) {
    double t = ymin + (ymax - ymin) * k / 4, b = xmin + (xmax - xmin) * k / 4;
    os << "<line class=\"grid\" x1=\"" << num(x0) << "\" y1=\"" << num(Y(t)) << "\" x2=\""
       << num(x0 + w) << "\" y2=\"" << num(Y(t)) << "\"/>";
    svg.text(x0 - 6, Y(t) + 4, formatSeconds(t), Label{Anchor::End});
    svg.text(X(b), y0 + h + 14, formatBytes(b), Label{Anchor::Middle});
  }
  bool capacity = r.deviceMemory > xmin && r.deviceMemory < xmax;
  if (capacity) {
    os << "<line x1=\"" << num(X(r.deviceMemory)) << "\" y1=\"" << num(y0) << "\" x2=\""
       << num(X(r.deviceMemory)) << "\" y2=\"" << num(y0 + h)
       << "\" stroke=\"#c5221f\" stroke-dasharray=\"4 3\"/>\n";
    svg.text(X(r.deviceMemory) - 4, y0 + 12, r.device + " memory", Label{Anchor::End, "#c5221f"});
  }
  os << "<polyline fill=\"none\" stroke=\"#9334e6\" stroke-width=\"1.5\" points=\"";
  for (const ReportRematPlan &p : sweep.frontier)
    os << num(X(double(p.peak))) << "," << num(Y(p.stepSeconds)) << " ";
  os << "\"/>\n";
  for (const ReportRematPlan &p : sweep.frontier)
    os << "<circle cx=\"" << num(X(double(p.peak))) << "\" cy=\"" << num(Y(p.stepSeconds))
       << "\" r=\"3\" fill=\"#9334e6\"><title>budget " << escape(formatBytes(double(p.budget)))
       << ": peak " << escape(formatBytes(double(p.peak))) << ", recompute "
       << escape(formatFlops(double(p.recomputeFlops))) << "</title></circle>\n";
  for (const ReportRematPlan &p : sweep.policies) {
    double px = X(double(p.peak)), py = Y(p.stepSeconds);
    os << "<circle cx=\"" << num(px) << "\" cy=\"" << num(py)
       << "\" r=\"5\" fill=\"none\" stroke=\"#1e8e3e\" stroke-width=\"2\"/>\n";
    bool right = px + 7 + textWidth(p.label) <= x0 + w;
    svg.text(right ? px + 7 : px - 7, py - 6, p.label,
             Label{right ? Anchor::Start : Anchor::End, "#1e8e3e"});
  }
  os << "<rect class=\"axis\" x=\"" << num(x0) << "\" y=\"" << num(y0) << "\" width=\"" << num(w)
     << "\" height=\"" << num(h) << "\"/>\n";
  svg.text(x0 + w / 2, y0 + h + 34, "planned peak (arena + resident)", Label{Anchor::Middle});
  svg.text(2, 14, "predicted step time", Label{Anchor::Start, nullptr, true});
  svg.close();
  os << "<figcaption><div class=\"legend\">" << swatch("#9334e6", "budget ladder (frontier)")
     << swatch("#1e8e3e", "named policies")
     << (capacity ? swatch("#c5221f", "device memory") : std::string())
     << "</div>The remat trade-off of the training step: for each budget of the ladder the plan "
        "of least predicted recompute time that fits, at its planned peak and predicted step "
        "time; the named policies on the same axes.</figcaption></figure>\n";
}

} // namespace einc::html
