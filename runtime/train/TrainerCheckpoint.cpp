//===- TrainerCheckpoint.cpp - Saving and resuming a training run ---------===//
//
// The trainer's state as checkpoint tensors (params, optimizer state, the
// loss scaler), the settings a resume must match (a change is named), and
// resuming: params first, then optimizer state all or nothing; and a new
// run from another's params, --init-from (docs/training.md).
//
//===----------------------------------------------------------------------===//
#include "runtime/base/StatusOut.h"
#include "runtime/base/TerminalText.h"
#include "runtime/train/TrainerImpl.h"

#include <map>

namespace einrt {

namespace trainer_detail {
std::string argText(const Buffer &b) {
  return b.name + ":" + dtypeName(b.dtype) + shapeText(b.shape) + ",";
}
} // namespace trainer_detail

using trainer_detail::syncParamsToGrad;

bool Trainer::stateTensors(std::vector<TensorData> &out, std::string &error) const {
  if (sharded())
    return gatherState(out, error);
  out.clear();
  for (const Impl::Slot &s : impl->slots) {
    TensorData t;
    if (!statusOut(impl->holder->exportBuffer(impl->holderBuf(s)), t, error))
      return false;
    t.name = s.name;
    out.push_back(std::move(t));
  }
  return true;
}

namespace {
/// argText's `name:dtype[shape],` words as record entries.
void addArguments(SettingsRecord &record, const std::string &words) {
  for (size_t at = 0; at < words.size();) {
    size_t end = words.find("],", at);
    if (end == std::string::npos)
      break;
    std::string word = words.substr(at, end + 1 - at); // name:dtype[shape]
    size_t colon = word.rfind(':', word.find('['));
    record.emplace_back("argument " + word.substr(0, colon), word.substr(colon + 1));
    at = end + 2;
  }
}

/// What a resume must keep: the trainer's own settings, the caller's
/// (model dims and train settings), then every argument of the holder (as
/// one process has them under ZeRO-1).
SettingsRecord resumeSettings(const TrainConfig &c, const Program &holder,
                              const WindowLayout &layout, const std::string &unshardedArgs) {
  SettingsRecord r = {
      {"seed", std::to_string(c.seed)},
      {"accumulate", std::to_string(c.accumulate * (c.comm ? c.comm->size() : 1))},
      {"data", windowMappingName(c.mapping)},
      {"batch", std::to_string(layout.batch)},
      {"context", std::to_string(layout.context)},
      {"lr schedule", c.schedule.describeShape()},
  };
  r.insert(r.end(), c.settings.begin(), c.settings.end());
  std::string args = unshardedArgs;
  if (args.empty())
    for (int32_t a : holder.arguments)
      args += trainer_detail::argText(holder.buffers[size_t(a)]);
  addArguments(r, args);
  return r;
}
/// "" when a checkpoint with `info` may be resumed with the settings `now`;
/// else why not, naming each setting that changed (old and new value), and
/// pointing to --init-from unless one of `params` changed shape.
std::string settingsRefusal(const std::string &path, const CheckpointInfo &info,
                            const SettingsRecord &now, const std::vector<std::string> &params) {
  std::string newRun = "; to start a new run from its params with this run's settings, use "
                       "--init-from " +
                       path + " (--keep-optimizer keeps its optimizer state)";
  if (info.settings) {
    std::map<std::string, std::string> was(info.settings->begin(), info.settings->end());
    for (const std::string &p : params)
      for (const auto &[name, value] : now)
        if (name == "argument " + p && was.count(name) && was[name] != value)
          newRun.clear(); // its params do not fit this model
    std::string changed = settingsDifference(*info.settings, now);
    if (changed.empty())
      return "";
    return "checkpoint '" + path + "' was written with other training settings (" + changed +
           "): a resume would not continue the same run" + newRun;
  }
  if (info.configHash.empty() || info.configHash == settingsHash(now))
    return "";
  return "checkpoint '" + path + "' records the hash of its settings (" + info.configHash +
         ") but not the settings (an einc before they were recorded wrote it), and this run's "
         "hash differs (" +
         settingsHash(now) + "): a resume cannot tell that it continues the same run" + newRun;
}
} // namespace

bool Trainer::saveCheckpoint(const std::string &path, std::string &error) {
  CheckpointInfo info;
  info.step = curStep;
  info.optimizerStep = optStep;
  info.sampler = trainSampler->saveState();
  info.schedule = cfg.schedule.describe();
  info.settings =
      resumeSettings(cfg, impl->holder->program(), *impl->trainLayout, impl->unshardedArgs);
  info.configHash = settingsHash(*info.settings);
  info.valLoss = lastVal;
  info.bestValLoss = bestVal;
  std::vector<TensorData> tensors;
  if (!stateTensors(tensors, error))
    return false;
  // ZeRO-1: every rank took part in gathering the state; rank 0 writes.
  return !leader() || statusOut(writeCheckpoint(path, tensors, info), error);
}

bool Trainer::resumeFrom(const std::string &path, std::string &error) {
  std::optional<Checkpoint> ck = statusOut(readCheckpoint(path), error);
  if (!ck)
    return false;
  Impl &I = *impl;
  if (std::string note = uncheckedNote(path, ck->checksummed); !note.empty())
    I.progress->message(note);
  SettingsRecord now = resumeSettings(cfg, I.holder->program(), *I.trainLayout, I.unshardedArgs);
  std::vector<std::string> params;
  for (size_t k = 0; k < I.paramCount; ++k)
    params.push_back(I.slots[k].name);
  if (std::string refusal = settingsRefusal(path, ck->info, now, params);
      !refusal.empty() && !cfg.allowConfigChange) {
    error = refusal;
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
      if (!statusOut(I.holder->zeroBuffer(buf), error))
        return false;
      continue;
    }
    if (!statusOut(I.holder->importBuffer(buf, *ck->find(s.name)), error)) {
      error =
          "checkpoint " + einrt::quoted(path) + ", tensor " + einrt::quoted(s.name) + ": " + error;
      return false;
    }
  }
  if (!statusOut(trainSampler->restoreState(ck->info.sampler), error)) {
    error = "checkpoint " + einrt::quoted(path) + ": " + error;
    return false;
  }
  curStep = ck->info.step;
  optStep = cfg.resetOptimizer ? 0 : ck->info.optimizerStep;
  lastVal = ck->info.valLoss;
  bestVal = ck->info.bestValLoss;
  return syncParamsToGrad(I, progs.accumulate, error);
}

bool Trainer::startFrom(const Checkpoint &ck, const std::string &path, std::string &error) {
  Impl &I = *impl;
  const Program &hp = I.holder->program();
  if (std::string note = uncheckedNote(path, ck.checksummed); !note.empty())
    I.progress->message(note);
  // Its tensors must be this model's params (optimizer state of any
  // optimizer may ride along).
  std::vector<ParamShape> params;
  for (size_t k = 0; k < I.paramCount; ++k)
    params.push_back({I.slots[k].name, hp.buffers[I.holderBuf(I.slots[k])].shape});
  if (std::string mismatch = checkpointMismatch(ck.tensors, params); !mismatch.empty()) {
    error = "--init-from '" + path + "' does not fit the model:\n" + mismatch;
    return false;
  }
  std::vector<std::string> missing; // --keep-optimizer: state this optimizer needs
  for (size_t i = I.paramCount; i < I.slots.size(); ++i) {
    const Impl::Slot &s = I.slots[i];
    const TensorData *t = ck.find(s.name);
    if (cfg.keepOptimizer && !s.scaler && (!t || t->shape != hp.buffers[I.holderBuf(s)].shape))
      missing.push_back(s.name + " " + shapeText(hp.buffers[I.holderBuf(s)].shape));
  }
  if (!missing.empty()) {
    error = "--init-from '" + path + "' lacks the optimizer state this run's optimizer keeps ('" +
            missing.front() + "'" +
            (missing.size() > 1 ? " and " + std::to_string(missing.size() - 1) + " more"
                                : std::string()) +
            "): it was trained with another optimizer or saved without state; without "
            "--keep-optimizer the state starts at zero";
    return false;
  }
  for (size_t i = 0; i < I.slots.size(); ++i) {
    const Impl::Slot &s = I.slots[i];
    const TensorData *t = ck.find(s.name);
    // Params always; the optimizer's state and the loss scaler's only when
    // kept (and present: a checkpoint without loss scaling starts it fresh).
    if (s.opt && (!cfg.keepOptimizer || !t))
      continue;
    if (!statusOut(I.holder->importBuffer(I.holderBuf(s), *t), error)) {
      error = "--init-from '" + path + "', tensor '" + s.name + "': " + error;
      return false;
    }
  }
  optStep = cfg.keepOptimizer ? ck.info.optimizerStep : 0;
  I.progress->message(
      "initialised from " + path + " (its step " + std::to_string(ck.info.step) +
      "; optimizer state " +
      (cfg.keepOptimizer ? "kept, update count " + std::to_string(optStep) : std::string("reset")) +
      ")");
  return true;
}

namespace trainer_detail {
bool syncParamsToGrad(Trainer::Impl &I, Executor *grad, std::string &error) {
  if (!grad || I.holder == grad)
    return true;
  if (I.accScaleArg >= 0 &&
      !statusOut(grad->copyFrom(size_t(grad->program().arguments[size_t(I.accScaleArg)]), *I.holder,
                                I.holderBuf(I.slots[size_t(I.scalerSlots[0])])),
                 error))
    return false;
  for (size_t k = 0; k < I.paramCount; ++k) {
    const Trainer::Impl::Slot &s = I.slots[k];
    if (s.accArg < 0)
      continue;
    if (!statusOut(grad->copyFrom(size_t(grad->program().arguments[size_t(s.accArg)]), *I.holder,
                                  I.holderBuf(s)),
                   error))
      return false;
  }
  return true;
}
} // namespace trainer_detail

} // namespace einrt
