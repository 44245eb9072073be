//===- Cards.cpp - The verdict cards at the top of the HTML report -------===//
//
// Size, step time, throughput, MFU and memory of the step on one device;
// with --gpus [--nodes], the cluster's: devices, tokens/s per device and in
// all, the exposed all-reduce and the run's days; when the step does not
// fit, how to make it fit (the report's fit advice).
//
//===----------------------------------------------------------------------===//
#include "Sections.h"
#include "SvgText.h"

#include "runtime/base/RematPolicy.h"

#include <cmath>

namespace einc::html {
namespace {

void card(llvm::raw_ostream &os, const std::string &value, const std::string &label,
          const char *valueClass = "", const char *cardClass = "") {
  os << "<div class=\"card " << cardClass << "\"><div class=\"v " << valueClass << "\">"
     << escape(value) << "</div><div class=\"l\">" << escape(label) << "</div></div>\n";
}

std::string tokensPerSecond(double t) { return withThousands(int64_t(std::llround(t))); }

/// The remat setting of the advice as the page shows it: its budget in GiB
/// on this device ("budget:85899345920" is 80.0 GiB).
std::string rematWithBudget(const Report &r, const std::string &remat) {
  auto policy = einrt::parseRematPolicy(remat);
  if (!policy.ok() || policy->kind != einrt::RematPolicy::Kind::Budget)
    return remat;
  return "remat budget " + formatBytes(policy->budgetOn(r.deviceMemory));
}

void fitCard(const Report &r, llvm::raw_ostream &os) {
  os << "<div class=\"card wide alert\"><div class=\"v bad\">How to fit</div><div class=\"l\">";
  const ReportFitAdvice *fit = r.rematSweep && r.rematSweep->fit ? &*r.rematSweep->fit : nullptr;
  if (!fit) {
    os << "The step needs " << escape(formatBytes(double(r.peakBytes))) << " of "
       << escape(formatBytes(r.deviceMemory)) << "; try --remat-sweep.</div></div>\n";
    return;
  }
  if (!fit->found) {
    os << escape(fit->why) << "</div></div>\n";
    return;
  }
  os << "Short by " << escape(formatBytes(-r.marginBytes)) << ". ";
  if (fit->accumulate > 1)
    os << "Split the batch into " << fit->accumulate << " micro-batches of " << fit->microBatch
       << " rows" << (fit->remat.empty() ? "" : " with " + escape(rematWithBudget(r, fit->remat)));
  else
    os << "Recompute with " << escape(rematWithBudget(r, fit->remat)) << " ("
       << escape(formatSeconds(fit->recomputeSeconds)) << " of recompute a step)";
  os << ": peak " << escape(formatBytes(double(fit->peak)));
  if (fit->stepSeconds > 0)
    os << ", step " << escape(formatSeconds(fit->stepSeconds)) << " (now "
       << escape(formatSeconds(r.stepSeconds)) << ")";
  os << ".<br><code>" << escape(fit->command) << "</code></div></div>\n";
}

} // namespace

void verdictCards(const Report &r, llvm::raw_ostream &os) {
  os << "<div class=\"cards\">\n";
  card(os, formatCount(double(r.params)), "params");
  card(os, formatFlops(double(r.flops.total())),
       "FLOPs per step (model " + formatFlops(double(r.modelFlops.total())) + ")");
  card(os, formatSeconds(r.stepSeconds),
       r.launchSeconds > 0
           ? "predicted step time, " + formatSeconds(r.launchSeconds) + " of it kernel launches"
           : std::string("predicted step time"));
  card(os, tokensPerSecond(r.tokensPerSecond), "predicted tokens/s on one " + r.device);
  card(os, fixed(100 * r.mfu, 1) + "%", "predicted MFU");
  card(os, formatBytes(double(r.peakBytes)),
       std::string("peak memory (the runtime's plan of the step): ") +
           (r.fits ? "fits in " : "exceeds ") + formatBytes(r.deviceMemory),
       r.fits ? "good" : "bad");
  if (!r.fits)
    fitCard(r, os);
  if (const auto &dp = r.dataParallel) {
    std::string where = std::to_string(dp->gpus) + " × " + r.device;
    if (dp->nodes > 1)
      where += " on " + std::to_string(dp->nodes) + " nodes";
    double perDevice = dp->stepSeconds > 0 ? double(r.tokensPerStep) / dp->stepSeconds : 0;
    card(os, where, "data parallel" + std::string(dp->link ? ", ring over " + *dp->link : ""));
    card(os, tokensPerSecond(perDevice), "tokens/s per device (the all-reduce exposed included)");
    card(os, tokensPerSecond(perDevice * double(dp->gpus)), "tokens/s for the cluster");
    card(os, formatSeconds(dp->exposedSeconds),
         dp->hidden
             ? "communication exposed: the all-reduce (" + formatSeconds(dp->commSeconds) +
                   ") hides behind the backward"
             : "communication exposed of " + formatSeconds(dp->commSeconds) + " all-reduce a step",
         dp->hidden ? "good" : "bad");
  }
  if (const auto &c = r.cluster)
    card(os, formatSeconds(c->seconds),
         "to train: " + std::to_string(c->gpus) + " × " + r.device + " for " +
             formatCount(c->tokens) + " tokens at " + fixed(100 * c->mfu, 1) + "% MFU (" +
             (c->gpuHours < 1000 ? fixed(c->gpuHours, c->gpuHours < 10 ? 2 : 0)
                                 : formatCount(c->gpuHours)) +
             " GPU-hours)");
  os << "</div>\n";
}

} // namespace einc::html
