//===- ReportText.cpp - `einc report` as aligned text ---------------------===//
//
// Totals first, then memory, the prediction, the cluster questions, the
// per-layer table and the top ops by predicted time. Also the number
// formatting the other renderers share.
//
//===----------------------------------------------------------------------===//
#include "Report.h"

#include "passes/StepKernels.h"
#include "runtime/base/TerminalText.h"

#include "llvm/Support/Format.h"

#include <cmath>
#include <cstdio>

namespace einc {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string withThousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

namespace {

/// Three significant digits: 989, 98.9, 9.89.
std::string sig3(double v) {
  double a = std::fabs(v);
  return fixed(v, a >= 100 ? 0 : a >= 10 ? 1 : 2);
}

std::string scaled(double v, const char *const *units, int count, double step, const char *unit) {
  int i = 0;
  double a = std::fabs(v);
  while (i + 1 < count && a >= step * 0.9995) {
    a /= step;
    v /= step;
    ++i;
  }
  return sig3(v) + " " + units[i] + unit;
}

} // namespace

std::string formatBytes(double bytes) {
  static const char *const units[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
  if (std::fabs(bytes) < 1024)
    return withThousands(static_cast<int64_t>(bytes)) + " B";
  return scaled(bytes, units, 6, 1024, "B");
}

std::string formatFlops(double flops) {
  static const char *const units[] = {"", "K", "M", "G", "T", "P", "E", "Z", "Y"};
  if (std::fabs(flops) < 1000)
    return withThousands(static_cast<int64_t>(flops)) + " FLOP";
  return scaled(flops, units, 9, 1000, "FLOP");
}

std::string formatRate(double perSecond, const char *unit) {
  static const char *const units[] = {"", "K", "M", "G", "T", "P", "E"};
  return scaled(perSecond, units, 7, 1000, unit) + "/s";
}

std::string formatCount(double n) {
  static const char *const units[] = {"", " K", " M", " B", " T"};
  int i = 0;
  while (i < 4 && std::fabs(n) >= 999.5) {
    n /= 1000;
    ++i;
  }
  return i == 0 ? withThousands(static_cast<int64_t>(std::llround(n))) : sig3(n) + units[i];
}

std::string formatSeconds(double s) {
  if (!std::isfinite(s))
    return "∞";
  if (s == 0)
    return "0 s";
  if (s < 1e-6)
    return sig3(s * 1e9) + " ns";
  if (s < 1e-3)
    return sig3(s * 1e6) + " µs";
  if (s < 1)
    return sig3(s * 1e3) + " ms";
  if (s < 120)
    return sig3(s) + " s";
  if (s < 7200)
    return sig3(s / 60) + " min";
  if (s < 172800)
    return sig3(s / 3600) + " h";
  return sig3(s / 86400) + " days";
}

namespace {

/// Display width of UTF-8 text (code points; every one used here is narrow).
size_t displayWidth(const std::string &s) {
  size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

std::string pad(const std::string &s, size_t width, bool right) {
  size_t w = displayWidth(s);
  if (w >= width)
    return s;
  std::string fill(width - w, ' ');
  return right ? fill + s : s + fill;
}

/// A table: columns left- or right-aligned, widths from the contents.
struct Table {
  std::vector<std::string> header;
  std::vector<bool> right;
  std::vector<std::vector<std::string>> rows;

  void print(llvm::raw_ostream &os, const std::string &indent = "  ") const {
    std::vector<size_t> widths(header.size());
    for (size_t c = 0; c < header.size(); ++c) {
      widths[c] = displayWidth(header[c]);
      for (const auto &row : rows)
        widths[c] = std::max(widths[c], displayWidth(row[c]));
    }
    auto line = [&](const std::vector<std::string> &cells) {
      std::string text = indent;
      for (size_t c = 0; c < cells.size(); ++c) {
        bool last = c + 1 == cells.size();
        text += last && !right[c] ? cells[c] : pad(cells[c], widths[c], right[c]);
        if (!last)
          text += "  ";
      }
      while (!text.empty() && text.back() == ' ')
        text.pop_back();
      os << text << "\n";
    };
    line(header);
    for (const auto &row : rows)
      line(row);
  }
};

/// Label/value lines with the values aligned.
struct Pairs {
  std::vector<std::pair<std::string, std::string>> lines;
  void add(const std::string &label, const std::string &value) { lines.emplace_back(label, value); }
  void print(llvm::raw_ostream &os) const {
    size_t w = 0;
    for (const auto &l : lines)
      w = std::max(w, displayWidth(l.first));
    for (const auto &l : lines)
      os << "  " << pad(l.first, w, false) << "  " << l.second << "\n";
  }
};

std::string bytesLine(int64_t bytes) {
  return withThousands(bytes) + " B  (" + formatBytes(static_cast<double>(bytes)) + ")";
}

std::string flopsLine(int64_t flops) {
  return withThousands(flops) + "  (" + formatFlops(static_cast<double>(flops)) + ")";
}

std::string percent(double part, double whole) {
  return whole > 0 ? fixed(100.0 * part / whole, 1) + "%" : "—";
}

} // namespace

namespace {

/// The sentence of a stop reason's name (passes/StepKernels.h).
std::string fusionStopMeaning(const std::string &name) {
  using mlir::ein::FusionStop;
  for (int s = 0; s <= int(FusionStop::Order); ++s)
    if (mlir::ein::fusionStopName(FusionStop(s)) == name)
      return mlir::ein::fusionStopMeaning(FusionStop(s)).str();
  return "";
}

} // namespace

void printReportText(const Report &r, llvm::raw_ostream &os) {
  os << "einc report: " << einrt::terminalSafe(r.model) << "\n";
  os << "  device     " << r.device << " (" << r.deviceDescription << "): matrix "
     << formatRate(r.matrixPeak, "FLOP") << " " << r.computeDtype << ", vector "
     << formatRate(r.vectorPeak, "FLOP") << ", " << formatRate(r.bandwidth, "B") << ", "
     << formatBytes(r.deviceMemory) << "\n";
  os << "  precision  " << r.precision
     << (r.precision == "fp32" ? " (the IR's types as written)"
         : r.precision == "bf16"
             ? " (bf16 params, grads and compute; sums and the loss in f32)"
             : std::string(" (") + (r.precision == "fp16-mixed" ? "f16" : "bf16") +
                   " compute and activations, fp32 master params, grads and optimizer state; "
                   "sums and the loss in f32)")
     << "\n";
  os << "  optimizer  " << r.optimizer << " (" << r.optimizerSlots << " state tensor"
     << (r.optimizerSlots == 1 ? "" : "s") << " per param)\n";
  if (r.fusion) {
    const mlir::ein::FusionSummary &f = r.fusionSummary;
    os << "  fusion     " << r.fusionSetting << ": " << withThousands(f.fusedOps)
       << " elementwise ops in " << withThousands(f.fusedKernels) << " fused kernels, "
       << withThousands(f.foldedBroadcasts) << " broadcasts read in place, "
       << withThousands(f.indexOpsComputed) << " iotas computed in kernels; "
       << formatBytes(double(f.bytesUnfused)) << " -> " << formatBytes(double(f.bytes))
       << " moved per step";
    if (f.epilogues > 0)
      os << "; " << withThousands(f.epilogues) << " contractions with epilogues ("
         << formatBytes(double(f.epilogueBytes)) << " of products read in cache)";
    if (f.rowKernels > 0)
      os << "; " << withThousands(f.rowKernels) << " row kernels of " << withThousands(f.rowOps)
         << " ops (reductions with their producers and consumers)";
    os << "\n";
  } else {
    os << "  fusion     off (every op reads its operands and writes its result)\n";
  }
  os << "  tokens     " << withThousands(r.tokensPerStep) << " per step"
     << (r.tokensKnown
             ? " (the positions the loss averages over)"
             : " (unknown: the model has no cross_entropy; per-token figures are per step)")
     << "\n";
  os << "  remat      " << r.remat.policy;
  if (r.remat.policy != "none")
    os << ": " << withThousands(r.remat.recomputedOps) << " ops recomputed, "
       << withThousands(r.remat.kept) << " forward values kept for the backward ("
       << formatBytes(double(r.remat.keptBytes)) << ")";
  os << "\n\n";

  os << "Totals\n";
  Pairs t;
  t.add("params",
        withThousands(r.params) + "  (" + formatCount(static_cast<double>(r.params)) + ")");
  t.add("FLOPs forward", flopsLine(r.flops.forward));
  t.add("FLOPs backward", flopsLine(r.flops.backward));
  t.add("FLOPs optimizer", flopsLine(r.flops.optimizer));
  if (r.flops.recompute > 0 || r.remat.policy != "none")
    t.add("FLOPs recompute", flopsLine(r.flops.recompute) + "  (remat " + r.remat.policy + ")");
  t.add("FLOPs total (hardware)", flopsLine(r.flops.total()));
  t.add("model FLOPs (fwd+bwd contractions)", flopsLine(r.modelFlops.total()) + "  = " +
                                                  percent(r.modelFlops.total(), r.flops.total()) +
                                                  " of all");
  t.add("backward / forward (model)",
        r.modelFlops.forward ? fixed(double(r.modelFlops.backward) / r.modelFlops.forward, 2)
                             : "—");
  t.add("transcendentals", withThousands(r.transcendentals));
  std::string kinds;
  for (const auto &[kind, flops] : r.flopsByKind)
    kinds += (kinds.empty() ? "" : ", ") + kind + " " + formatFlops(double(flops)) + " (" +
             percent(flops, r.flops.total()) + ")";
  t.add("by kind", kinds);
  t.add("per token (hardware)", formatFlops(r.flopsPerToken));
  t.add("per token (model)", formatFlops(r.modelFlopsPerToken) + "  (forward " +
                                 formatFlops(r.forwardModelFlopsPerToken) + ")");
  t.add("6N per token", formatFlops(r.sixN) + "  (model / 6N = " +
                            (r.sixN > 0 ? fixed(r.modelFlopsPerToken / r.sixN, 3) : "—") + ")");
  if (r.palmPerToken)
    t.add("6N + 12·layers·ctx·d (PaLM)",
          formatFlops(*r.palmPerToken) +
              "  (model / PaLM = " + fixed(r.modelFlopsPerToken / *r.palmPerToken, 3) + ")");
  t.add("model FLOPs / (N·D)", r.params ? fixed(r.modelFlopsPerToken / r.params, 3) : "—");
  t.print(os);

  os << "\nMemory (bytes)\n";
  Pairs m;
  int64_t persistent = r.paramBytes + r.gradBytes + r.optimizerBytes;
  m.add("params", bytesLine(r.paramBytes) +
                      (r.masterBytes ? "  incl. fp32 master " + formatBytes(r.masterBytes) : ""));
  m.add("grads", bytesLine(r.gradBytes));
  m.add("optimizer state", bytesLine(r.optimizerBytes));
  m.add("params + grads + state", bytesLine(persistent) + "  = " +
                                      (r.params ? fixed(double(persistent) / r.params, 2) : "—") +
                                      " bytes/param");
  std::string byDtype;
  for (const auto &[dtype, bytes] : r.activationBytesByDtype)
    byDtype += (byDtype.empty() ? "" : ", ") + dtype + " " + formatBytes(double(bytes));
  m.add("activations saved for backward",
        bytesLine(r.activationBytes) + (byDtype.empty() ? "" : "  (" + byDtype + ")"));
  if (r.paramCopyBytes > 0)
    m.add("working copies of params", bytesLine(r.paramCopyBytes) + "  (read by the backward)");
  m.add("inputs", bytesLine(r.inputBytes) +
                      "  (read by the backward: " + formatBytes(double(r.savedInputBytes)) + ")");
  m.add("peak (planned)",
        bytesLine(r.peakBytes) + "  = arena " + formatBytes(double(r.arenaBytes)) + " + resident " +
            formatBytes(double(r.residentBytes)) + " (the runtime's memory plan of the step)");
  if (r.peakOpIndex >= 0)
    m.add("most temporaries live",
          "at step #" + std::to_string(r.peakOpIndex) +
              (r.peakOp.empty() ? "" : " " + einrt::terminalSafe(r.peakOp)));
  m.add("device memory", formatBytes(r.deviceMemory) + ": " +
                             (r.fits ? "fits, margin " + formatBytes(r.marginBytes)
                                     : "DOES NOT FIT, short by " + formatBytes(-r.marginBytes)) +
                             " (peak = " + percent(double(r.peakBytes), r.deviceMemory) + ")");
  if (!r.fits && r.rematSweep && r.rematSweep->fit) {
    const ReportFitAdvice &fit = *r.rematSweep->fit;
    if (!fit.found)
      m.add("to fit", fit.why);
    else if (fit.accumulate > 1)
      m.add("fits with micro-batches",
            std::to_string(fit.accumulate) + " × " + std::to_string(fit.microBatch) +
                " rows (accumulate = " + std::to_string(fit.accumulate) +
                (fit.remat.empty() ? "" : ", remat " + fit.remat) + "): peak " +
                formatBytes(double(fit.peak)) + ", step " + formatSeconds(fit.stepSeconds) + "; " +
                einrt::terminalSafe(fit.command));
    else
      m.add("fits with remat", fit.remat + ": peak " + formatBytes(double(fit.peak)) + ", step " +
                                   formatSeconds(fit.stepSeconds) + ", recompute " +
                                   formatSeconds(fit.recomputeSeconds) + "; " +
                                   einrt::terminalSafe(fit.command));
  }
  m.print(os);

  os << "\nPredicted on " << r.device << " (roofline: each kernel max(FLOPs/peak, bytes/bandwidth)"
     << (r.kernelLatency > 0 ? " + " + formatSeconds(r.kernelLatency) + " launch" : "")
     << (r.fusion ? "; bytes after fusion" : "") << ")\n";
  Pairs p;
  p.add("step time", formatSeconds(r.stepSeconds));
  if (r.kernelLatency > 0)
    p.add("kernel launches",
          withThousands(r.kernels.size()) + " × " + formatSeconds(r.kernelLatency) + " = " +
              formatSeconds(r.launchSeconds) + "  (" + percent(r.launchSeconds, r.stepSeconds) +
              " of the step; the profile's estimate)");
  p.add("tokens/s", withThousands(static_cast<int64_t>(std::llround(r.tokensPerSecond))));
  p.add("MFU", fixed(100 * r.mfu, 1) + "%  (model FLOPs / (step time × " +
                   formatRate(r.matrixPeak, "FLOP") + "))");
  if (r.remat.recomputeMatrixFlops > 0)
    p.add("HFU", fixed(100 * r.hfu, 1) +
                     "%  (model FLOPs + the recompute's contractions, same denominator)");
  p.add("time in compute-bound ops", percent(r.computeBoundSeconds, r.stepSeconds));
  p.add("time on matrix units", percent(r.matrixSeconds, r.stepSeconds));
  p.add("ridge point", r.bandwidth > 0
                           ? fixed(r.matrixPeak / r.bandwidth, 0) + " FLOP/byte (matrix), " +
                                 fixed(r.vectorPeak / r.bandwidth, 1) + " (vector)"
                           : "—");
  p.print(os);

  os << "\nRoofline by dtype (each op at the peaks of its operands' type)\n";
  Table dt{{"dtype", "ops", "FLOPs", "matrix FLOPs", "bytes", "matrix peak", "vector peak", "time",
            "share"},
           {false, true, true, true, true, true, true, true, true},
           {}};
  for (const ReportDtype &d : r.dtypes)
    dt.rows.push_back({d.dtype, withThousands(d.ops), formatFlops(double(d.flops)),
                       formatFlops(double(d.matrixFlops)), formatBytes(double(d.bytes)),
                       formatRate(d.matrixPeak, "FLOP"), formatRate(d.vectorPeak, "FLOP"),
                       formatSeconds(d.seconds), percent(d.seconds, r.stepSeconds)});
  dt.print(os);

  if (r.rematSweep && r.rematSweep->ladder) {
    const ReportRematSweep &w = *r.rematSweep;
    os << "\nRemat frontier (" << w.frontierPoints << " Pareto plans of "
       << withThousands(w.candidates) << " priced in " << formatSeconds(w.solverSeconds)
       << "; the plan of least recompute time within each budget)\n";
    Table t{{"plan", "peak", "recompute FLOPs", "recompute", "step time"},
            {false, true, true, true, true},
            {}};
    auto row = [&](const ReportRematPlan &p) {
      std::string label = p.budget > 0 ? "budget " + formatBytes(double(p.budget)) : p.label;
      t.rows.push_back({label, formatBytes(double(p.peak)), formatFlops(double(p.recomputeFlops)),
                        formatSeconds(p.recomputeSeconds), formatSeconds(p.stepSeconds)});
    };
    for (const ReportRematPlan &p : w.frontier)
      row(p);
    for (const ReportRematPlan &p : w.policies)
      row(p);
    t.print(os);
  }

  if (r.dataParallel) {
    const ReportDataParallel &d = *r.dataParallel;
    os << "\nData parallel: " << d.gpus << " × " << r.device << " on " << d.nodes << " node"
       << (d.nodes == 1 ? "" : "s") << "\n";
    Pairs q;
    q.add("link", !d.link
                      ? std::string("none in the profile (its communication is unknown)")
                      : *d.link + ", " + formatBytes(d.linkBandwidth) + "/s per device each way" +
                            (d.nodes > 1 ? " (between nodes)" : " (within the node)"));
    q.add("all-reduce", formatBytes(double(d.gradientBytes)) + " of gradients; ring: 2(N−1)/N × " +
                            "that = " + formatBytes(d.ringBytes) + " per device");
    q.add("communication", formatSeconds(d.commSeconds) + " per step");
    q.add("compute", formatSeconds(d.computeSeconds) + " per step (backward " +
                         formatSeconds(d.backwardSeconds) + ")");
    q.add("overlap", d.hidden ? std::string("hidden behind the backward")
                              : "exposed " + formatSeconds(d.exposedSeconds) +
                                    " (communication outlasts the backward)");
    q.add("step", formatSeconds(d.stepSeconds) + ", MFU " + fixed(100 * d.mfu, 1) + "%");
    q.add("optimizer state", formatBytes(double(d.optimizerBytesPerRank)) + " per device" +
                                 (d.shardOptimizer ? " (ZeRO-1: 1/" + std::to_string(d.gpus) + ")"
                                                   : " (a full copy each)") +
                                 "; peak " + formatBytes(double(d.peakBytesPerRank)) +
                                 " per device");
    q.print(os);
  }

  if (r.cluster) {
    const ReportCluster &c = *r.cluster;
    os << "\nCluster: " << c.gpus << " × " << r.device << ", " << formatCount(c.tokens)
       << " tokens";
    if (c.scheduleSteps > 0)
      os << " (the " << c.schedule << " schedule's " << withThousands(c.scheduleSteps)
         << " steps × " << withThousands(r.tokensPerStep) << " tokens"
         << (c.accumulate > 1 ? " × " + std::to_string(c.accumulate) + " micro-batches" : "")
         << (c.gpus > 1 ? " × " + std::to_string(c.gpus) + " devices" : "") << ")";
    os << "\n";
    Pairs q;
    q.add("training FLOPs", formatFlops(c.totalFlops) + "  (model FLOPs/token " +
                                formatFlops(c.flopsPerToken) +
                                " × D; 6ND = " + formatFlops(c.sixNDFlops) + ")");
    q.add("MFU assumed", fixed(100 * c.mfu, 1) + "%" + (c.mfuGiven ? " (--mfu)" : " (predicted)"));
    q.add("time", sig3(c.days) + " days  = " + sig3(c.days * 24) + " hours  (" +
                      formatSeconds(c.seconds) + ")");
    q.add("GPU-hours", withThousands(static_cast<int64_t>(std::llround(c.gpuHours))));
    q.add("largest model that fits", formatCount(c.maxParams) + " params on " +
                                         std::to_string(c.gpus) + " devices (" +
                                         formatCount(c.maxParamsPerDevice) + " per device)");
    q.add("", "napkin: G × device memory / " + fixed(c.bytesPerParam, 2) +
                  " bytes per param (params + grads + optimizer state), no activations");
    q.print(os);
  }

  os << "\nPer layer\n";
  Table layers{{"layer", "ops", "FLOPs", "model FLOPs", "bytes", "time", "share"},
               {false, true, true, true, true, true, true},
               {}};
  for (const ReportLayer &l : r.layers)
    layers.rows.push_back({l.name, withThousands(l.ops), formatFlops(double(l.flops)),
                           formatFlops(double(l.modelFlops)), formatBytes(double(l.bytes)),
                           formatSeconds(l.seconds), percent(l.seconds, r.stepSeconds)});
  layers.print(os);

  std::vector<size_t> top = r.topOps(15);
  os << "\nTop " << top.size() << " ops by predicted time (of " << withThousands(r.ops.size())
     << ")\n";
  Table ops{
      {"#", "op", "phase", "layer", "FLOPs", "bytes", "FLOP/B", "bound", "time", "share", "source"},
      {true, false, false, false, true, true, true, false, true, true, false},
      {}};
  for (size_t i : top) {
    const ReportOp &op = r.ops[i];
    ops.rows.push_back({std::to_string(op.index), op.name, op.phase, op.layer,
                        formatFlops(double(op.flops)), formatBytes(double(op.bytes)),
                        fixed(op.intensity, op.intensity >= 10 ? 0 : 2),
                        op.flops == 0 && op.bytes == 0 ? "—"
                        : op.computeBound              ? "compute"
                                                       : "memory",
                        formatSeconds(op.seconds), percent(op.seconds, r.stepSeconds),
                        einrt::terminalSafe(op.location)});
  }
  ops.print(os);
  if (r.kernelTable)
    printKernelTable(r, os);
}

namespace {

/// "sub exp div …+3": a kernel's ops without the dialect, the first six.
std::string opsSummary(const std::vector<std::string> &names) {
  std::string out;
  size_t shown = std::min<size_t>(names.size(), 6);
  for (size_t i = 0; i < shown; ++i) {
    llvm::StringRef n(names[i]);
    n.consume_front("ein.");
    out += (i ? " " : "") + n.str();
  }
  if (names.size() > shown)
    out += " +" + std::to_string(names.size() - shown);
  return out;
}

std::string stopsSummary(const ReportKernel &k) {
  std::string out;
  for (const ReportFusionStop &s : k.stops) {
    out += out.empty() ? "" : "; ";
    out += "#" + std::to_string(s.to) + " " + s.reason;
    if (!s.detail.empty())
      out += " (" + s.detail + ")";
  }
  return out;
}

} // namespace

void printKernelTable(const Report &r, llvm::raw_ostream &os) {
  os << "\nKernels (fusion = " << r.fusionSetting << "): " << withThousands(r.kernels.size())
     << " kernels of the step, predicted " << formatSeconds(r.kernelSeconds)
     << " (each kernel on the roofline"
     << (r.kernelLatency > 0 ? " + " + formatSeconds(r.kernelLatency) + " launch" : "") << ")\n";
  Table t{{"#", "kind", "phase", "layer", "ops", "FLOPs", "read", "written", "FLOP/B", "bound",
           "time", "source", "fusion stopped before"},
          {true, false, false, false, false, true, true, true, true, false, true, false, false},
          {}};
  for (const ReportKernel &k : r.kernels) {
    std::string source = k.locations.empty() ? "" : einrt::terminalSafe(k.locations.front());
    if (k.locations.size() > 1)
      source += " +" + std::to_string(k.locations.size() - 1);
    t.rows.push_back({std::to_string(k.index), k.kind, k.phase, k.layer, opsSummary(k.ops),
                      formatFlops(double(k.flops)), formatBytes(double(k.bytesRead)),
                      formatBytes(double(k.bytesWritten)),
                      fixed(k.intensity, k.intensity >= 10 ? 0 : 2),
                      k.flops == 0 && k.bytesRead + k.bytesWritten == 0 ? "—"
                      : k.computeBound                                  ? "compute"
                                                                        : "memory",
                      formatSeconds(k.seconds), source, stopsSummary(k)});
  }
  t.print(os);

  int64_t boundaries = 0;
  for (const auto &[reason, count] : r.fusionStops)
    boundaries += count;
  os << "\nWhy fusion stopped (" << withThousands(boundaries)
     << " boundaries: a value one kernel writes and a later one reads)\n";
  Table why{{"reason", "boundaries", "meaning"}, {false, true, false}, {}};
  for (const auto &[reason, count] : r.fusionStops)
    why.rows.push_back({reason, withThousands(count), fusionStopMeaning(reason)});
  why.print(os);
}

} // namespace einc
