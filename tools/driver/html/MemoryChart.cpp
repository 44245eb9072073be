//===- MemoryChart.cpp - Live bytes over the step, by category ----------===//
//
// Report::memoryTimeline as stacked areas over the Program's steps: the
// resident params, optimizer state, inputs and other resident buffers,
// then the temporaries live at each step (grads, saved activations,
// recompute, other). Behind them the phases as bands; the device's memory
// as a dashed line where it is on the scale; the step where most is live
// marked with its op. At most ~400 columns: each column draws the step of
// its bucket where most is live, so the peak step is drawn exactly.
//
//===----------------------------------------------------------------------===//
#include "Sections.h"
#include "SvgText.h"

#include <algorithm>
#include <cmath>

namespace einc::html {
namespace {

struct Category {
  const char *name, *color;
  int64_t resident = 0;                       // a resident category's bytes, or
  const std::vector<int64_t> *live = nullptr; // a temporary one's per step
  int64_t at(size_t i) const { return live ? (*live)[i] : resident; }
};

/// A round axis top at or above `v`: 1, 2 or 5 × a power of ten of the
/// unit formatBytes uses at that size.
double niceTop(double v) {
  double unit = 1;
  while (v / unit >= 1024 && unit < 1024.0 * 1024 * 1024 * 1024)
    unit *= 1024;
  double x = v / unit, p = std::pow(10, std::floor(std::log10(std::max(x, 1e-9))));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * p >= x)
      return m * p * unit;
  return 10 * p * unit;
}

/// `part` as a share of `whole`: "12.5%", "0.016%".
std::string share(double part, double whole) {
  double pct = whole > 0 ? 100 * part / whole : 0;
  return (pct >= 1 ? fixed(pct, 1) : pct >= 0.1 ? fixed(pct, 2) : fixed(pct, 3)) + "%";
}

} // namespace

void memoryChart(const Report &r, llvm::raw_ostream &os) {
  const ReportMemoryTimeline &t = r.memoryTimeline;
  size_t n = r.liveAfter.size();
  if (n == 0 || t.grads.size() != n) {
    os << "<p>The step has no Program steps to draw.</p>\n";
    return;
  }
  std::vector<Category> cats = {
      {"params (in + updated)", "#1a73e8", t.params},
      {"optimizer state (in + updated)", "#34a853", t.optimizerState},
      {"inputs", "#80868b", t.inputs},
      {"other resident", "#bdc1c6", t.otherResident},
      {"grads", "#e8710a", 0, &t.grads},
      {"saved activations", "#f9ab00", 0, &t.saved},
      {"recompute", "#9334e6", 0, &t.recompute},
      {"temporaries", "#f6aea9", 0, &t.other},
  };

  size_t peak = 0;
  for (size_t i = 0; i < n; ++i)
    if (r.liveAfter[i] > r.liveAfter[peak])
      peak = i;
  double most = double(r.liveAfter[peak]);
  // The device's memory on the scale when the step takes a fair part of it.
  bool capacityShown = r.deviceMemory > 0 && r.deviceMemory <= 2.5 * most;
  double top = niceTop(std::max(most, capacityShown ? r.deviceMemory : 0.0) * 1.08);

  // The frame: room on the left for the widest tick label.
  double labelW = 0;
  for (int k = 0; k <= 4; ++k)
    labelW = std::max(labelW, textWidth(formatBytes(top * k / 4)));
  double x0 = std::ceil(labelW) + 10, y0 = 24, w = 640 - x0 - 12, h = 300;
  auto X = [&](double i) { return x0 + w * (n > 1 ? i / double(n - 1) : 0.5); };
  auto Y = [&](double b) { return y0 + h * (1 - b / top); };

  os << "<figure id=\"memory\">";
  Svg svg(os, 640, y0 + h + 44);
  // Phases behind everything.
  for (const ReportPhaseRun &run : t.phases) {
    double a = X(double(run.first) - 0.5), b = X(double(run.last) + 0.5);
    a = std::max(a, x0), b = std::min(b, x0 + w);
    os << "<rect class=\"phase\" data-phase=\"" << escape(run.phase) << "\" x=\"" << num(a)
       << "\" y=\"" << num(y0) << "\" width=\"" << num(std::max(b - a, 0.3)) << "\" height=\""
       << num(h) << "\" fill=\"" << phaseBand(run.phase) << "\"/>\n";
  }
  for (int k = 0; k <= 4; ++k) {
    double b = top * k / 4;
    os << "<line class=\"grid\" x1=\"" << num(x0) << "\" y1=\"" << num(Y(b)) << "\" x2=\""
       << num(x0 + w) << "\" y2=\"" << num(Y(b)) << "\"/>";
    svg.text(x0 - 6, Y(b) + 4, formatBytes(b), Label{Anchor::End});
  }

  // The columns: per bucket, the step where most is live.
  size_t bucket = std::max<size_t>(1, (n + 399) / 400);
  std::vector<size_t> columns;
  for (size_t i = 0; i < n; i += bucket) {
    size_t best = i;
    for (size_t k = i; k < std::min(n, i + bucket); ++k)
      if (r.liveAfter[k] > r.liveAfter[best])
        best = k;
    columns.push_back(best);
  }
  std::vector<double> below(columns.size(), 0.0);
  std::vector<const Category *> present;
  for (const Category &c : cats) {
    bool any = false;
    for (size_t i = 0; i < n && !any; ++i)
      any = c.at(i) > 0;
    if (!any)
      continue;
    present.push_back(&c);
    os << "<polygon class=\"area\" data-category=\"" << escape(c.name) << "\" fill=\"" << c.color
       << "\" fill-opacity=\"0.85\" points=\"";
    std::vector<double> above(below);
    for (size_t k = 0; k < columns.size(); ++k) {
      above[k] += double(c.at(columns[k]));
      os << num(X(double(columns[k]))) << "," << num(Y(above[k])) << " ";
    }
    for (size_t k = columns.size(); k-- > 0;)
      os << num(X(double(columns[k]))) << "," << num(Y(below[k])) << " ";
    os << "\"><title>" << escape(c.name) << "</title></polygon>\n";
    below = above;
  }
  os << "<rect class=\"axis\" x=\"" << num(x0) << "\" y=\"" << num(y0) << "\" width=\"" << num(w)
     << "\" height=\"" << num(h) << "\"/>\n";

  if (capacityShown) {
    double y = Y(r.deviceMemory);
    os << "<line class=\"capacity\" x1=\"" << num(x0) << "\" y1=\"" << num(y) << "\" x2=\""
       << num(x0 + w) << "\" y2=\"" << num(y) << "\" stroke=\"#c5221f\" stroke-dasharray=\"5 3\"/>";
    svg.text(x0 + w - 4, y - 4, r.device + " memory " + formatBytes(r.deviceMemory),
             Label{Anchor::End, "#c5221f"});
  } else {
    svg.text(x0 + w, 14,
             r.device + " memory " + formatBytes(r.deviceMemory) + ": off the scale (peak " +
                 share(double(r.peakBytes), r.deviceMemory) + " of it)",
             Label{Anchor::End, "#5f6368"});
  }

  // The peak: a dot and its label, right of it where it fits, else left.
  double px = X(double(peak)), py = Y(most);
  os << "<circle class=\"peak\" cx=\"" << num(px) << "\" cy=\"" << num(py)
     << "\" r=\"4\" fill=\"#c5221f\"/>\n";
  // The step's op and where ("ein.contract at gpt.ein:45:15"), the rest of
  // its note (a fused kernel's ops) left to the kernel table.
  llvm::StringRef note = r.peakOp, opName, rest;
  std::tie(opName, rest) = note.split(" at ");
  // A kernel's note names its ops: "rows 10 ops (ein.reduce ...)".
  std::string op = opName.split(" (").first.str();
  if (!rest.empty()) {
    llvm::StringRef where = rest.take_until([](char c) { return c == ' '; });
    op += " at " + shortSource(r, where) + (where.size() < rest.size() ? " …" : "");
  }
  std::string label = "most live " + formatBytes(most) + " at step #" + std::to_string(peak);
  double ly = std::max(py - 8, y0 + 14);
  Label style{textWidth(label) + px + 8 <= x0 + w ? Anchor::Start : Anchor::End, "#c5221f", true};
  svg.text(style.anchor == Anchor::Start ? px + 8 : px - 8, ly, label, style);
  if (!op.empty() && size_t(r.peakOpIndex) == peak) {
    Label small{textWidth(op) + px + 8 <= x0 + w ? Anchor::Start : Anchor::End, "#c5221f"};
    svg.text(small.anchor == Anchor::Start ? px + 8 : px - 8, ly + 14, op, small);
  }

  // The x axis: step numbers, the title under them.
  for (int k = 0; k <= 4; ++k) {
    double i = std::round(double(n - 1) * k / 4);
    svg.text(X(i), y0 + h + 14, withThousands(int64_t(i)), Label{Anchor::Middle});
  }
  svg.text(x0 + w / 2, y0 + h + 34,
           "Program step in execution order (" + withThousands(int64_t(n)) + " steps)",
           Label{Anchor::Middle});
  svg.text(2, 14, "live bytes", Label{Anchor::Start, nullptr, true});
  svg.close();

  os << "<figcaption><div class=\"legend\">";
  for (const Category *c : present)
    os << swatch(c->color, c->name);
  os << "</div><div class=\"legend\">Phases: ";
  std::vector<std::string> seen;
  for (const ReportPhaseRun &run : t.phases)
    if (!llvm::is_contained(seen, run.phase)) {
      seen.push_back(run.phase);
      os << swatch(phaseBand(run.phase), run.phase);
    }
  os << "</div>The memory plan of the step's Program as the runtime allocates it: the resident "
        "block ("
     << escape(formatBytes(double(r.residentBytes)))
     << ") and the temporaries live at each step; the planned peak, "
     << escape(formatBytes(double(r.peakBytes))) << " = arena "
     << escape(formatBytes(double(r.arenaBytes))) << " + resident, is what it allocates. Under "
     << escape(r.precision) << ": " << escape(fixed(r.bytesPerParam, 2))
     << " bytes per param (params + grads + state). Device memory "
     << escape(formatBytes(r.deviceMemory)) << (r.fits ? " — fits." : " — does not fit.")
     << "</figcaption></figure>\n";
}

} // namespace einc::html
