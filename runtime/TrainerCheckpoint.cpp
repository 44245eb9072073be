//===- TrainerCheckpoint.cpp - Saving and resuming a training run ---------===//
//
// The trainer's state as checkpoint tensors (params, optimizer state, the
// loss scaler), the configuration hash a resume must match, and resuming:
// params first, then optimizer state all or nothing (docs/training.md).
//
//===----------------------------------------------------------------------===//
#include "runtime/TerminalText.h"
#include "runtime/TrainerImpl.h"

namespace einrt {

namespace trainer_detail {
std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}
std::string argText(const Buffer &b) {
  return b.name + ":" + dtypeName(b.dtype) + shapeText(b.shape) + ",";
}
} // namespace trainer_detail

using trainer_detail::shapeText;
using trainer_detail::syncParamsToGrad;

bool Trainer::stateTensors(std::vector<TensorData> &out, std::string &error) const {
  if (sharded())
    return gatherState(out, error);
  out.clear();
  for (const Impl::Slot &s : impl->slots) {
    TensorData t;
    if (!impl->holder->exportBuffer(impl->holderBuf(s), t, error))
      return false;
    t.name = s.name;
    out.push_back(std::move(t));
  }
  return true;
}

namespace {
std::string configHash(const TrainConfig &c, const Program &holder, const WindowLayout &layout,
                       const std::string &unshardedArgs) {
  std::string text = "seed=" + std::to_string(c.seed) +
                     ";accumulate=" + std::to_string(c.accumulate * (c.comm ? c.comm->size() : 1)) +
                     ";mapping=" + windowMappingName(c.mapping) +
                     ";batch=" + std::to_string(layout.batch) +
                     ";context=" + std::to_string(layout.context) +
                     ";schedule=" + c.schedule.describeShape() + ";args=";
  if (!unshardedArgs.empty()) // ZeRO-1: as one process has them
    text += unshardedArgs;
  else
    for (int32_t a : holder.arguments)
      text += trainer_detail::argText(holder.buffers[size_t(a)]);
  return hashText(text + ";" + c.configText);
}
} // namespace

bool Trainer::saveCheckpoint(const std::string &path, std::string &error) {
  CheckpointInfo info;
  info.step = curStep;
  info.optimizerStep = optStep;
  info.sampler = trainSampler->saveState();
  info.schedule = cfg.schedule.describe();
  info.configHash =
      configHash(cfg, impl->holder->program(), *impl->trainLayout, impl->unshardedArgs);
  info.valLoss = lastVal;
  info.bestValLoss = bestVal;
  std::vector<TensorData> tensors;
  if (!stateTensors(tensors, error))
    return false;
  // ZeRO-1: every rank took part in gathering the state; rank 0 writes.
  return !leader() || writeCheckpoint(path, tensors, info, error);
}

bool Trainer::resumeFrom(const std::string &path, std::string &error) {
  auto ck = readCheckpoint(path, error);
  if (!ck)
    return false;
  Impl &I = *impl;
  std::string hash = configHash(cfg, I.holder->program(), *I.trainLayout, I.unshardedArgs);
  if (!ck->info.configHash.empty() && ck->info.configHash != hash && !cfg.allowConfigChange) {
    error = "checkpoint " + einrt::quoted(path) +
            " was written with other training settings (config hash " + ck->info.configHash +
            ", now " + hash +
            "; seed, batch, accumulation, schedule, optimizer or model "
            "changed): a resume would not continue the same run";
    return false;
  }
  // Params first; then optimizer state (all or nothing).
  // The loss scaler's state is not the optimizer's: reset_optimizer keeps
  // it, and a checkpoint without it (loss scaling newly on) starts it fresh.
  std::vector<std::string> missingOpt;
  for (const Impl::Slot &s : I.slots) {
    if ((s.opt && !s.scaler && cfg.resetOptimizer) || s.scaler)
      continue;
    const TensorData *t = ck->find(s.name);
    if (!t) {
      if (s.opt) {
        missingOpt.push_back(s.name);
        continue;
      }
      error = "checkpoint " + einrt::quoted(path) + " has no param " + einrt::quoted(s.name);
      return false;
    }
  }
  if (!missingOpt.empty()) {
    error = "checkpoint " + einrt::quoted(path) + " has no optimizer state (" +
            einrt::quoted(missingOpt.front()) +
            (missingOpt.size() > 1 ? " and " + std::to_string(missingOpt.size() - 1) + " more"
                                   : std::string()) +
            "); resuming without it restarts the optimizer from zero "
            "moments: ask for that with reset_optimizer (--reset-optimizer)";
    return false;
  }
  const Program &hp = I.holder->program();
  for (const Impl::Slot &s : I.slots) {
    size_t buf = size_t(hp.arguments[s.holderArg]);
    if ((s.opt && !s.scaler && cfg.resetOptimizer) || (s.scaler && !ck->find(s.name))) {
      if (!I.holder->zeroBuffer(buf, error))
        return false;
      continue;
    }
    if (!I.holder->importBuffer(buf, *ck->find(s.name), error)) {
      error =
          "checkpoint " + einrt::quoted(path) + ", tensor " + einrt::quoted(s.name) + ": " + error;
      return false;
    }
  }
  if (!trainSampler->restoreState(ck->info.sampler, error)) {
    error = "checkpoint " + einrt::quoted(path) + ": " + error;
    return false;
  }
  curStep = ck->info.step;
  optStep = cfg.resetOptimizer ? 0 : ck->info.optimizerStep;
  lastVal = ck->info.valLoss;
  bestVal = ck->info.bestValLoss;
  return syncParamsToGrad(I, progs.accumulate, error);
}

namespace trainer_detail {
bool syncParamsToGrad(Trainer::Impl &I, Executor *grad, std::string &error) {
  if (!grad || I.holder == grad)
    return true;
  if (I.accScaleArg >= 0 &&
      !grad->copyFrom(size_t(grad->program().arguments[size_t(I.accScaleArg)]), *I.holder,
                      I.holderBuf(I.slots[size_t(I.scalerSlots[0])]), error))
    return false;
  for (size_t k = 0; k < I.paramCount; ++k) {
    const Trainer::Impl::Slot &s = I.slots[k];
    if (s.accArg < 0)
      continue;
    if (!grad->copyFrom(size_t(grad->program().arguments[size_t(s.accArg)]), *I.holder,
                        I.holderBuf(s), error))
      return false;
  }
  return true;
}
} // namespace trainer_detail

} // namespace einrt
