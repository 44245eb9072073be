//===- TrainerCheckpoint.cpp - Saving and resuming a training run ---------===//
//
// The trainer's state as checkpoint tensors (params, optimizer state, the
// loss scaler), the settings a resume must match (a change is named), and
// resuming: params first, then optimizer state all or nothing; and a new
// run from another's params, --init-from (docs/training.md).
//
//===----------------------------------------------------------------------===//
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

Expected<std::vector<TensorData>> Trainer::stateTensors() const {
  if (sharded())
    return gatherState();
  std::vector<TensorData> out;
  for (const Impl::Slot &s : impl->slots) {
    Expected<TensorData> t = impl->holder->exportBuffer(impl->holderBuf(s));
    if (!t.ok())
      return t.takeStatus();
    out.push_back(t.take());
    out.back().name = s.name;
  }
  return out;
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

Status Trainer::saveCheckpoint(const std::string &path) {
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
  Expected<std::vector<TensorData>> tensors = stateTensors();
  if (!tensors.ok())
    return tensors.takeStatus();
  // ZeRO-1: every rank took part in gathering the state; rank 0 writes.
  return leader() ? writeCheckpoint(path, *tensors, info) : Status::success();
}

Status Trainer::resumeFrom(const std::string &path) {
  Expected<Checkpoint> ck = readCheckpoint(path);
  if (!ck.ok())
    return ck.takeStatus();
  Impl &I = *impl;
  if (std::string note = uncheckedNote(path, ck->checksummed); !note.empty())
    I.progress->message(note);
  SettingsRecord now = resumeSettings(cfg, I.holder->program(), *I.trainLayout, I.unshardedArgs);
  std::vector<std::string> params;
  for (size_t k = 0; k < I.paramCount; ++k)
    params.push_back(I.slots[k].name);
  if (std::string refusal = settingsRefusal(path, ck->info, now, params);
      !refusal.empty() && !cfg.allowConfigChange)
    return Status::invalid(refusal);
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
      return Status::invalid("checkpoint " + einrt::quoted(path) + " has no param " +
                             einrt::quoted(s.name));
    }
  }
  if (!missingOpt.empty())
    return Status::invalid("checkpoint " + einrt::quoted(path) + " has no optimizer state (" +
                           einrt::quoted(missingOpt.front()) +
                           (missingOpt.size() > 1
                                ? " and " + std::to_string(missingOpt.size() - 1) + " more"
                                : std::string()) +
                           "); resuming without it restarts the optimizer from zero "
                           "moments: ask for that with reset_optimizer (--reset-optimizer)");
  const Program &hp = I.holder->program();
  for (const Impl::Slot &s : I.slots) {
    size_t buf = size_t(hp.arguments[s.holderArg]);
    if ((s.opt && !s.scaler && cfg.resetOptimizer) || (s.scaler && !ck->find(s.name))) {
      EINRT_TRY(I.holder->zeroBuffer(buf));
      continue;
    }
    EINRT_TRY(I.holder->importBuffer(buf, *ck->find(s.name))
                  .withContext("checkpoint " + einrt::quoted(path) + ", tensor " +
                               einrt::quoted(s.name) + ": "));
  }
  EINRT_TRY(trainSampler->restoreState(ck->info.sampler)
                .withContext("checkpoint " + einrt::quoted(path) + ": "));
  curStep = ck->info.step;
  optStep = cfg.resetOptimizer ? 0 : ck->info.optimizerStep;
  lastVal = ck->info.valLoss;
  bestVal = ck->info.bestValLoss;
  return syncParamsToGrad(I, progs.accumulate);
}

Status Trainer::startFrom(const Checkpoint &ck, const std::string &path) {
  Impl &I = *impl;
  const Program &hp = I.holder->program();
  if (std::string note = uncheckedNote(path, ck.checksummed); !note.empty())
    I.progress->message(note);
  // Its tensors must be this model's params (optimizer state of any
  // optimizer may ride along).
  std::vector<ParamShape> params;
  for (size_t k = 0; k < I.paramCount; ++k)
    params.push_back({I.slots[k].name, hp.buffers[I.holderBuf(I.slots[k])].shape});
  if (std::string mismatch = checkpointMismatch(ck.tensors, params); !mismatch.empty())
    return Status::invalid("--init-from '" + path + "' does not fit the model:\n" + mismatch);
  std::vector<std::string> missing; // --keep-optimizer: state this optimizer needs
  for (size_t i = I.paramCount; i < I.slots.size(); ++i) {
    const Impl::Slot &s = I.slots[i];
    const TensorData *t = ck.find(s.name);
    if (cfg.keepOptimizer && !s.scaler && (!t || t->shape != hp.buffers[I.holderBuf(s)].shape))
      missing.push_back(s.name + " " + shapeText(hp.buffers[I.holderBuf(s)].shape));
  }
  if (!missing.empty())
    return Status::invalid(
        "--init-from '" + path + "' lacks the optimizer state this run's optimizer keeps ('" +
        missing.front() + "'" +
        (missing.size() > 1 ? " and " + std::to_string(missing.size() - 1) + " more"
                            : std::string()) +
        "): it was trained with another optimizer or saved without state; without "
        "--keep-optimizer the state starts at zero");
  for (size_t i = 0; i < I.slots.size(); ++i) {
    const Impl::Slot &s = I.slots[i];
    const TensorData *t = ck.find(s.name);
    // Params always; the optimizer's state and the loss scaler's only when
    // kept (and present: a checkpoint without loss scaling starts it fresh).
    if (s.opt && (!cfg.keepOptimizer || !t))
      continue;
    EINRT_TRY(I.holder->importBuffer(I.holderBuf(s), *t)
                  .withContext("--init-from '" + path + "', tensor '" + s.name + "': "));
  }
  optStep = cfg.keepOptimizer ? ck.info.optimizerStep : 0;
  I.progress->message(
      "initialised from " + path + " (its step " + std::to_string(ck.info.step) +
      "; optimizer state " +
      (cfg.keepOptimizer ? "kept, update count " + std::to_string(optStep) : std::string("reset")) +
      ")");
  return Status::success();
}

namespace trainer_detail {
Status syncParamsToGrad(Trainer::Impl &I, Executor *grad) {
  if (!grad || I.holder == grad)
    return Status::success();
  if (I.accScaleArg >= 0)
    EINRT_TRY(grad->copyFrom(size_t(grad->program().arguments[size_t(I.accScaleArg)]), *I.holder,
                             I.holderBuf(I.slots[size_t(I.scalerSlots[0])])));
  for (size_t k = 0; k < I.paramCount; ++k) {
    const Trainer::Impl::Slot &s = I.slots[k];
    if (s.accArg >= 0)
      EINRT_TRY(grad->copyFrom(size_t(grad->program().arguments[size_t(s.accArg)]), *I.holder,
                               I.holderBuf(s)));
  }
  return Status::success();
}
} // namespace trainer_detail

} // namespace einrt
