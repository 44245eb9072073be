//===- GradCheck.cpp - Gradients against central finite differences -------===//
#include "runtime/core/GradCheck.h"
#include "runtime/core/Init.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace einrt {

namespace {

bool lowPrecision(DType t) { return t == DType::BF16 || t == DType::F16; }

/// Turns an executor's bf16/f16 rounding off for the check, back on after.
class RoundingOff {
public:
  explicit RoundingOff(Executor &e) : e(e), was(e.roundsLowPrecision()) {
    e.setRoundLowPrecision(false);
  }
  ~RoundingOff() { e.setRoundLowPrecision(was); }
  RoundingOff(const RoundingOff &) = delete;
  RoundingOff &operator=(const RoundingOff &) = delete;

private:
  Executor &e;
  bool was;
};

void countLowPrecision(const Program &p, GradCheckReport &report) {
  for (const Buffer &b : p.buffers)
    report.unroundedBuffers += lowPrecision(b.dtype);
  for (const Step &s : p.steps)
    report.identityCasts += s.kind == StepKind::Cast && lowPrecision(p.buffers[s.output].dtype);
}

} // namespace

Expected<GradCheckReport> gradCheck(Executor &forward, Executor &grad,
                                    const GradCheckOptions &options) {
  GradCheckReport report;
  report.tolerance = options.tolerance;
  if (forward.precision() != Precision::F64 || grad.precision() != Precision::F64)
    return Status::invalid("the gradient check needs both programs run in Precision::F64");
  RoundingOff forwardExact(forward), gradExact(grad);
  countLowPrecision(forward.program(), report);
  countLowPrecision(grad.program(), report);
  for (const Step &s : forward.program().steps)
    report.quantizations += std::holds_alternative<QuantizeSpec>(s.payload);
  EINRT_TRY(grad.run());
  const Program &fp = forward.program();
  Rng rng(options.seed);
  size_t gradResult = 1;
  for (size_t a = 0; a < fp.arguments.size(); ++a) {
    int32_t buffer = fp.arguments[a];
    if (fp.buffers[buffer].role != BufferRole::Param)
      continue;
    if (gradResult >= grad.resultCount())
      return Status::invalid("the gradient program has fewer results than the forward has params");
    Expected<std::vector<double>> gradient =
        grad.read(size_t(grad.program().results[gradResult++]));
    if (!gradient.ok())
      return gradient.takeStatus();
    Expected<std::vector<double>> param = forward.read(size_t(buffer));
    if (!param.ok())
      return param.takeStatus();
    const std::vector<double> &g = *gradient;
    std::vector<double> &p = *param;
    if (g.size() != p.size())
      return Status::invalid("gradient of '" + fp.buffers[buffer].name + "' has the wrong size");
    int64_t n = int64_t(p.size());
    std::vector<int64_t> picks;
    if (n <= options.samplesPerParam) {
      for (int64_t i = 0; i < n; ++i)
        picks.push_back(i);
    } else {
      for (int s = 0; s < options.samplesPerParam; ++s)
        picks.push_back(static_cast<int64_t>(rng.below(static_cast<uint64_t>(n))));
    }
    for (int64_t i : picks) {
      double original = p[size_t(i)];
      auto lossAt = [&](double v) -> Expected<double> {
        p[size_t(i)] = v;
        EINRT_TRY(forward.write(size_t(buffer), p.data(), p.size()));
        EINRT_TRY(forward.run());
        return forward.readScalar(0);
      };
      // The five-point stencil: truncation error O(h^4), so h can stay large
      // enough that rounding in the loss does not swamp small gradients.
      const double h = options.step;
      double stencil[4]; // L(p + 2h), L(p + h), L(p - h), L(p - 2h)
      const double offsets[4] = {2 * h, h, -h, -2 * h};
      for (int k = 0; k < 4; ++k) {
        Expected<double> loss = lossAt(original + offsets[k]);
        if (!loss.ok())
          return loss.takeStatus();
        stencil[k] = *loss;
      }
      const double p2 = stencil[0], p1 = stencil[1], m1 = stencil[2], m2 = stencil[3];
      p[size_t(i)] = original;
      EINRT_TRY(forward.write(size_t(buffer), p.data(), p.size()));
      double numeric = (-p2 + 8 * p1 - 8 * m1 + m2) / (12 * h);
      double analytic = g[size_t(i)];
      // The bound of GradCheck.h: the floor grows with the loss, as the
      // rounding noise of the difference quotient does.
      double loss = std::max({std::fabs(p2), std::fabs(p1), std::fabs(m1), std::fabs(m2)});
      double noise = options.noiseFactor * DBL_EPSILON * loss / h;
      double floor = std::max(options.floor, noise / options.tolerance);
      double scale = std::max({std::fabs(analytic), std::fabs(numeric), floor});
      double rel = std::fabs(analytic - numeric) / scale;
      if (!std::isfinite(rel))
        rel = INFINITY;
      ++report.checked;
      if (report.checked == 1 || rel > report.worst.relativeError)
        report.worst = {fp.buffers[buffer].name, i, analytic, numeric, rel, floor, loss};
    }
  }
  report.passed = report.checked == 0 || report.worst.relativeError < options.tolerance;
  return report;
}

} // namespace einrt
