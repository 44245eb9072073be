//===- TrainerStep.cpp - One optimizer step and an evaluation -------------===//
//
// A step: one batch through @train_step, or the micro-batches through
// @accumulate_grad (summed in compiled code, or across ranks:
// TrainerDistributed.cpp) and then @apply_update; a non-finite loss or
// gradient norm fails it (a step the loss scaler skipped aside). The
// accumulated gradients of the last step, and the mean validation loss.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/FloatFormats.h"
#include "runtime/dist/DeviceOrderedSum.h"
#include "runtime/train/TrainerImpl.h"

#include <cmath>
#include <cstdio>

namespace einrt {

using trainer_detail::shortNumber;
using trainer_detail::syncParamsToGrad;

namespace trainer_detail {
std::string shortNumber(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}
} // namespace trainer_detail

int64_t Trainer::tokensPerStep() const {
  return impl->trainLayout->targetsPerBatch() * globalMicroBatches();
}

Status Trainer::trainStep(double &loss, double &gradNorm) {
  Impl &I = *impl;
  const int64_t t = curStep + 1;
  const double lr = cfg.schedule.at(t);
  const double tOpt = double(optStep + 1);
  const std::string step = "step " + std::to_string(t) + ": ";
  EINRT_TRY(I.holder->setArgument(I.stepArg, &tOpt, 1));
  EINRT_TRY(I.holder->setArgument(I.lrArg, &lr, 1));
  if (I.seedArg >= 0) { // the dropout masks' key
    const int32_t seed = dropoutSeed(cfg.seed);
    EINRT_TRY(I.holder->setArgument(size_t(I.seedArg), &seed, 1));
  }

  if (globalMicroBatches() == 1) {
    Executor &ex = *progs.trainStep;
    EINRT_TRY(trainSampler->feed(ex));
    EINRT_TRY(ex.run().withContext(step));
    Expected<double> stepLoss = ex.readScalar(I.lossResult);
    if (!stepLoss.ok())
      return stepLoss.takeStatus();
    loss = *stepLoss;
  } else if (ranks() > 1 || cfg.collectives) {
    Expected<double> stepLoss = distributedMicroBatches();
    if (!stepLoss.ok())
      return stepLoss.takeStatus();
    loss = *stepLoss;
  } else {
    // The means over the micro-batches, summed in compiled code
    // (@accumulate_grad adds loss/k and grads/k into its accumulators).
    Executor &g = *progs.accumulate;
    const Program &ap = g.program();
    EINRT_TRY(trainer_detail::zeroAccumulators(I, g));
    for (int64_t m = 0; m < cfg.accumulate; ++m) {
      EINRT_TRY(trainSampler->feed(g));
      EINRT_TRY(g.run().withContext("step " + std::to_string(t) + ", micro-batch " +
                                    std::to_string(m + 1) + ": "));
      for (auto [result, arg] : I.accumulators)
        EINRT_TRY(g.copyFrom(size_t(ap.arguments[arg]), g, size_t(ap.results[result])));
    }
    Expected<std::vector<double>> lossValues = g.read(size_t(ap.arguments[I.lossSumArg]));
    if (!lossValues.ok())
      return lossValues.takeStatus();
    loss = lossValues->empty() ? NAN : (*lossValues)[0];
    for (size_t p = 0; p < I.paramCount; ++p)
      EINRT_TRY(
          I.holder->copyFrom(size_t(I.holder->program().arguments[size_t(I.slots[p].applyGradArg)]),
                             g, size_t(ap.arguments[size_t(I.slots[p].sumArg)])));
  }
  if (globalMicroBatches() > 1) {
    if (!std::isfinite(loss)) {
      gradNorm = NAN;
      nonFinite = true;
      return Status::invalid(step + "the loss is not finite (" + shortNumber(loss) +
                             "); stopping, the last good checkpoint is kept");
    }
    EINRT_TRY(I.holder->run().withContext(step));
  }
  Expected<double> norm = I.holder->readScalar(I.gradNormResult);
  if (!norm.ok())
    return norm.takeStatus();
  gradNorm = *norm;
  // Loss scaling: a step whose gradients were not finite was skipped by the
  // program (params and state kept, the scale backed off); it is not the
  // optimizer's update, so its count t stays (torch's GradScaler).
  bool skipped = false;
  StepMetrics::Scaler scaler;
  if (I.scaling()) {
    double value[3];
    for (int k = 0; k < 3; ++k) {
      Expected<double> v = I.holder->readScalar(I.slots[size_t(I.scalerSlots[k])].result);
      if (!v.ok())
        return v.takeStatus();
      value[k] = *v;
    }
    Expected<std::vector<double>> before =
        I.holder->read(I.holderBuf(I.slots[size_t(I.scalerSlots[2])]));
    if (!before.ok())
      return before.takeStatus();
    skipped = !before->empty() && value[2] > (*before)[0];
    scaler = {value[0], int64_t(value[1]), int64_t(value[2])};
  }
  if (!std::isfinite(loss) || (!std::isfinite(gradNorm) && !skipped)) {
    nonFinite = true;
    return Status::invalid(
        step +
        (!std::isfinite(loss) ? "the loss is not finite (" + shortNumber(loss) + ")"
                              : "the gradient norm is not finite (" + shortNumber(gradNorm) + ")") +
        "; stopping, the last good checkpoint is kept");
  }
  // Carry params' and opt_state' into the next step's arguments.
  for (const Impl::Slot &s : I.slots)
    if (s.owned)
      EINRT_TRY(I.holder->copyFrom(I.holderBuf(s), *I.holder,
                                   size_t(I.holder->program().results[s.result])));
  if (sharded())
    EINRT_TRY(allGatherParams());
  curStep = t;
  if (!skipped)
    optStep += 1;
  if (I.scaling())
    lastScaler = scaler;
  return syncParamsToGrad(I, progs.accumulate);
}

Expected<std::vector<std::vector<double>>> Trainer::lastGradients() const {
  if (!progs.accumulate)
    return Status::invalid("no accumulated gradients: accumulate is 1");
  const Program &ap = progs.accumulate->program();
  std::vector<std::vector<double>> out;
  std::vector<float> onDevice;
  const std::vector<float> *sum = &gradientSum;
  if (deviceSum) { // the sum of the last step, on the device
    onDevice.resize(size_t(deviceSum->count()));
    EINRT_TRY(progs.accumulate->device().download(onDevice.data(), deviceSum->sum(),
                                                  deviceSum->count() * int64_t(sizeof(float))));
    sum = &onDevice;
  }
  if (ranks() > 1 || deviceSum) { // the ordered sum of the last step
    for (size_t k = 0; k < impl->paramCount; ++k) {
      size_t at = 0;
      while (impl->accumulators[at].second != size_t(impl->slots[k].sumArg))
        ++at;
      int64_t offset = impl->accOffsets[at];
      int64_t count = ap.buffers[ap.arguments[size_t(impl->slots[k].sumArg)]].elementCount();
      if (sum->size() < size_t(offset + count))
        return Status::invalid("no accumulated gradients yet");
      out.emplace_back(sum->begin() + offset, sum->begin() + offset + count);
    }
    return out;
  }
  for (size_t k = 0; k < impl->paramCount; ++k) {
    Expected<std::vector<double>> gradient =
        progs.accumulate->read(size_t(ap.arguments[size_t(impl->slots[k].sumArg)]));
    if (!gradient.ok())
      return gradient.takeStatus();
    out.push_back(gradient.take());
  }
  return out;
}

std::optional<double> Trainer::Evaluation::metric(const std::string &name) const {
  for (const auto &[n, value] : metrics)
    if (n == name)
      return value;
  return std::nullopt;
}

Expected<Trainer::Evaluation> Trainer::evaluate() {
  Impl &I = *impl;
  if (!progs.forward || !valSampler)
    return Status::invalid("evaluation needs @forward, a validation file and eval_every > 0");
  Executor &f = *progs.forward;
  for (size_t k = 0; k < I.paramCount; ++k)
    EINRT_TRY(f.copyFrom(size_t(f.program().arguments[size_t(I.slots[k].forwardArg)]), *I.holder,
                         I.holderBuf(I.slots[k])));
  // The loss, then every other scalar float result (its metrics).
  const Program &p = f.program();
  std::vector<size_t> scalars{0};
  Evaluation e;
  for (size_t r = 1; r < p.results.size(); ++r) {
    const Buffer &b = p.buffers[size_t(p.results[r])];
    if (b.elementCount() == 1 && isFloat(b.dtype)) {
      scalars.push_back(r);
      e.metrics.emplace_back(
          r < p.resultNames.size() ? p.resultNames[r] : "output" + std::to_string(r), 0.0);
    }
  }
  valSampler->rewind();
  std::vector<double> sums(scalars.size(), 0.0);
  for (int64_t i = 0; i < cfg.evalSteps; ++i) {
    EINRT_TRY(valSampler->feed(f));
    EINRT_TRY(f.run().withContext("evaluation at step " + std::to_string(curStep) + ": "));
    for (size_t k = 0; k < scalars.size(); ++k) {
      Expected<double> value = f.readScalar(scalars[k]);
      if (!value.ok())
        return value.takeStatus();
      sums[k] += *value;
    }
  }
  e.loss = sums[0] / double(cfg.evalSteps);
  for (size_t k = 1; k < scalars.size(); ++k)
    e.metrics[k - 1].second = sums[k] / double(cfg.evalSteps);
  return e;
}

} // namespace einrt
