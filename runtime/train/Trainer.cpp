//===- Trainer.cpp - The training loop ------------------------------------===//
//
// Building the argument plumbing between the Programs (create), one step,
// evaluation and the loop. Checkpoints: TrainerCheckpoint.cpp.
//
//===----------------------------------------------------------------------===//
#include "runtime/train/Trainer.h"
#include "runtime/base/LossScaleState.h"
#include "runtime/base/Memory.h"
#include "runtime/base/StatusOut.h"
#include "runtime/base/TerminalText.h"
#include "runtime/core/Init.h"
#include "runtime/dist/DeviceOrderedSum.h"
#include "runtime/io/CheckpointDir.h"
#include "runtime/train/TrainerImpl.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>

namespace einrt {

using trainer_detail::syncParamsToGrad;

namespace {

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

bool fileExists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

int64_t findArg(const Program &p, const std::string &name, BufferRole role) {
  for (size_t a = 0; a < p.arguments.size(); ++a) {
    const Buffer &b = p.buffers[p.arguments[a]];
    if (b.name == name && b.role == role)
      return int64_t(a);
  }
  return -1;
}

int64_t findResult(const Program &p, const std::string &name, size_t from) {
  for (size_t r = from; r < p.results.size(); ++r)
    if (p.resultNames[r] == name)
      return int64_t(r);
  return -1;
}

bool sameType(const Buffer &a, const Buffer &b) { return a.dtype == b.dtype && a.shape == b.shape; }

} // namespace

Trainer::~Trainer() = default;

std::unique_ptr<Trainer> Trainer::create(const TrainConfig &config, const TrainPrograms &programs,
                                         const TokenFile &train, const TokenFile *val,
                                         std::string &error) {
  std::unique_ptr<Trainer> t(new Trainer());
  t->cfg = config;
  t->progs = programs;
  t->trainFile = &train;
  t->valFile = val;
  t->impl = std::make_unique<Impl>();
  Impl &I = *t->impl;
  const TrainConfig &c = t->cfg;

  if (c.steps < 0) {
    error = "the number of steps must be >= 0";
    return nullptr;
  }
  if (c.accumulate < 1) {
    error = "accumulate must be >= 1, got " + std::to_string(c.accumulate);
    return nullptr;
  }
  if (c.logEvery < 1 || c.evalEvery < 0 || c.evalSteps < 1 || c.checkpointEvery < 0) {
    error = "log_every and eval_steps must be >= 1, eval_every and "
            "checkpoint_every >= 0";
    return nullptr;
  }
  std::string problem = c.schedule.validate();
  if (!problem.empty()) {
    error = "schedule: " + problem;
    return nullptr;
  }

  const int64_t ranks = c.comm ? c.comm->size() : 1;
  const int64_t global = c.accumulate * ranks; // micro-batches per step, all ranks
  if (c.comm && (c.comm->rank() < 0 || c.comm->rank() >= ranks)) {
    error =
        "rank " + std::to_string(c.comm->rank()) + " is not in [0, " + std::to_string(ranks) + ")";
    return nullptr;
  }

  if (std::string problem = trainer_detail::collectivesProblem(c, programs, global);
      !problem.empty()) {
    error = problem;
    return nullptr;
  }

  // The holder of params and optimizer state.
  const char *holderName;
  if (global == 1) {
    if (!programs.trainStep) {
      error = "training needs the @train_step program";
      return nullptr;
    }
    I.holder = programs.trainStep;
    holderName = "@train_step";
  } else {
    if (!programs.accumulate || !programs.apply) {
      error = "accumulate = " + std::to_string(c.accumulate) +
              (ranks > 1 ? " on " + std::to_string(ranks) + " ranks" : "") +
              " needs the @accumulate_grad and @apply_update programs";
      return nullptr;
    }
    I.holder = programs.apply;
    holderName = "@apply_update";
  }
  const Program &hp = I.holder->program();
  size_t firstResult = global == 1 ? 2 : 1;
  if (hp.results.size() < firstResult) {
    error = std::string(holderName) + " has too few results";
    return nullptr;
  }
  int64_t stepArg = findArg(hp, "step", BufferRole::Scalar);
  int64_t lrArg = findArg(hp, "lr", BufferRole::Scalar);
  if (stepArg < 0 || lrArg < 0) {
    error = std::string(holderName) + " lacks its step or lr argument";
    return nullptr;
  }
  I.stepArg = size_t(stepArg);
  I.lrArg = size_t(lrArg);
  I.gradNormResult = global == 1 ? 1 : 0;
  for (int pass = 0; pass < 2; ++pass) {
    BufferRole role = pass == 0 ? BufferRole::Param : BufferRole::OptState;
    for (size_t a = 0; a < hp.arguments.size(); ++a) {
      const Buffer &b = hp.buffers[hp.arguments[a]];
      if (b.role != role)
        continue;
      Impl::Slot s;
      s.name = b.name;
      s.opt = pass == 1;
      s.holderArg = a;
      int64_t r = findResult(hp, b.name, firstResult);
      if (r < 0 && c.shardOptimizer && ranks > 1 && pass == 0) {
        s.owned = false; // another rank's (checked in prepareShards)
        I.slots.push_back(s);
        continue;
      }
      if (r < 0 || !sameType(hp.buffers[hp.results[size_t(r)]], b)) {
        error = std::string(holderName) + " has no result '" + b.name +
                "' of the argument's type to carry it to the next step";
        return nullptr;
      }
      s.result = size_t(r);
      const char *const scalerNames[] = {kLossScaleName, kGoodStepsName, kSkippedStepsName};
      for (int k = 0; k < 3; ++k)
        if (s.opt && b.name == scalerNames[k] && b.shape.empty()) {
          s.scaler = true;
          I.scalerSlots[k] = int64_t(I.slots.size());
        }
      I.slots.push_back(s);
    }
    if (pass == 0)
      I.paramCount = I.slots.size();
  }
  if (I.paramCount == 0) {
    error = std::string(holderName) + " has no params";
    return nullptr;
  }
  if ((I.scalerSlots[0] >= 0) != (I.scalerSlots[1] >= 0) ||
      (I.scalerSlots[0] >= 0) != (I.scalerSlots[2] >= 0)) {
    error = std::string(holderName) + " carries only part of the loss scaler's state (" +
            kLossScaleName + ", " + kGoodStepsName + ", " + kSkippedStepsName + ")";
    return nullptr;
  }

  // Inputs of the program that draws training data.
  Executor *dataEx = global == 1 ? programs.trainStep : programs.accumulate;
  if (!statusOut(windowLayout(dataEx->program(), c.mapping), I.trainLayout, error))
    return nullptr;
  if (!statusOut(WindowSampler::create(train, *I.trainLayout, c.seed, c.vocab), t->trainSampler,
                 error))
    return nullptr;
  I.lossResult = 0;

  // The trainer's own big allocations, checked now rather than met as an
  // abort mid-run: a checkpoint stages a copy of params and optimizer state
  // and its serialised file (2x their bytes).
  {
    int64_t stateBytes = 0;
    for (const Impl::Slot &s : I.slots) {
      const Buffer &b = hp.buffers[hp.arguments[s.holderArg]];
      stateBytes += b.elementCount() * dtypeSize(b.dtype);
    }
    int64_t need = c.checkpointDir.empty() || !t->leader() ? 0 : 2 * stateBytes;
    std::string shortfall = memoryShortfall(need, "the trainer (checkpoint staging)");
    if (!shortfall.empty()) {
      error = shortfall;
      return nullptr;
    }
  }

  if (global > 1) {
    // @accumulate_grad: (inputs..., params..., accumulators...) ->
    // (accumulators'...), each result named as its accumulator, the loss's
    // first; @apply_update: (params..., grads..., opt_state..., step, lr).
    const Program &ap = programs.accumulate->program();
    for (size_t r = 0; r < ap.results.size(); ++r) {
      int64_t a = findArg(ap, ap.resultNames[r], BufferRole::Accumulator);
      if (a < 0 || !sameType(ap.buffers[ap.arguments[size_t(a)]], ap.buffers[ap.results[r]])) {
        error = "@accumulate_grad has no accumulator argument '" + ap.resultNames[r] +
                "' of its result's type";
        return nullptr;
      }
      I.accumulators.emplace_back(r, size_t(a)); // laid out below (layOutByReadiness)
    }
    if (I.accumulators.size() != 1 + I.paramCount) {
      error = "@accumulate_grad accumulates " + std::to_string(I.accumulators.size()) +
              " values; @apply_update takes " + std::to_string(I.paramCount) +
              " params (and the loss is the first)";
      return nullptr;
    }
    I.lossSumArg = I.accumulators.front().second;
    trainer_detail::layOutByReadiness(I, *programs.accumulate);
    // A loss-scaled @accumulate_grad reads the scaler's scale (a copy of
    // the holder's, made before each step's micro-batches).
    I.accScaleArg = findArg(ap, kLossScaleName, BufferRole::OptState);
    if ((I.accScaleArg >= 0) != I.scaling()) {
      error = I.scaling() ? "@apply_update scales the loss but @accumulate_grad takes no " +
                                std::string(kLossScaleName)
                          : "@accumulate_grad takes a " + std::string(kLossScaleName) +
                                " but @apply_update does not scale the loss";
      return nullptr;
    }
    std::vector<size_t> applyGrads;
    for (size_t a = 0; a < hp.arguments.size(); ++a) {
      BufferRole r = hp.buffers[hp.arguments[a]].role;
      if (r != BufferRole::Param && r != BufferRole::OptState && r != BufferRole::Scalar)
        applyGrads.push_back(a);
    }
    if (applyGrads.size() != I.paramCount) {
      error = "@apply_update takes " + std::to_string(applyGrads.size()) + " gradients for " +
              std::to_string(I.paramCount) + " params";
      return nullptr;
    }
    for (size_t k = 0; k < I.paramCount; ++k) {
      Impl::Slot &s = I.slots[k];
      const Buffer &pb = hp.buffers[hp.arguments[s.holderArg]];
      s.accArg = findArg(ap, s.name, BufferRole::Param);
      s.sumArg = findArg(ap, s.name, BufferRole::Accumulator);
      if (s.accArg < 0 || !sameType(ap.buffers[ap.arguments[size_t(s.accArg)]], pb) ||
          s.sumArg < 0 || !sameType(ap.buffers[ap.arguments[size_t(s.sumArg)]], pb)) {
        error = "@accumulate_grad has no param '" + s.name + "' and accumulator of type " +
                dtypeName(pb.dtype) + shapeText(pb.shape);
        return nullptr;
      }
      // The apply's gradients follow its params' order.
      s.applyGradArg = int64_t(applyGrads[k]);
      const Buffer &ag = hp.buffers[hp.arguments[size_t(s.applyGradArg)]];
      if (!sameType(ag, pb)) {
        error = "the gradient of '" + s.name + "' has shape " + shapeText(ag.shape) +
                " in @apply_update; the param is " + shapeText(pb.shape);
        return nullptr;
      }
    }
  }

  if (programs.forward && val && c.evalEvery > 0) {
    const Program &fp = programs.forward->program();
    for (size_t k = 0; k < I.paramCount; ++k) {
      Impl::Slot &s = I.slots[k];
      s.forwardArg = findArg(fp, s.name, BufferRole::Param);
      if (s.forwardArg < 0 || !sameType(fp.buffers[fp.arguments[size_t(s.forwardArg)]],
                                        hp.buffers[hp.arguments[s.holderArg]])) {
        error = "@forward has no param '" + s.name + "' of the same type";
        return nullptr;
      }
    }
    if (fp.results.empty()) {
      error = "@forward returns nothing";
      return nullptr;
    }
    if (!statusOut(windowLayout(fp, c.mapping), I.evalLayout, error))
      return nullptr;
    // The same batches at every evaluation: rewound before each.
    if (!statusOut(
            WindowSampler::create(*val, *I.evalLayout, c.seed ^ 0x76616C6964617465ull, c.vocab),
            t->valSampler, error))
      return nullptr;
  }

  if (c.shardOptimizer && ranks > 1 && !t->prepareShards(error))
    return nullptr;

  ProgressOptions po = c.progress;
  po.totalSteps = c.steps;
  I.progress = std::make_unique<Progress>(po);
  return t;
}

int64_t Trainer::tokensPerStep() const {
  return impl->trainLayout->targetsPerBatch() * globalMicroBatches();
}

bool Trainer::trainStep(double &loss, double &gradNorm, std::string &error) {
  Impl &I = *impl;
  const int64_t t = curStep + 1;
  const double lr = cfg.schedule.at(t);
  const double tOpt = double(optStep + 1);
  if (!statusOut(I.holder->setArgument(I.stepArg, &tOpt, 1), error) ||
      !statusOut(I.holder->setArgument(I.lrArg, &lr, 1), error))
    return false;

  if (globalMicroBatches() == 1) {
    Executor &ex = *progs.trainStep;
    if (!statusOut(trainSampler->feed(ex), error))
      return false;
    if (!statusOut(ex.run(), error)) {
      error = "step " + std::to_string(t) + ": " + error;
      return false;
    }
    if (!statusOut(ex.readScalar(I.lossResult), loss, error))
      return false;
  } else if (ranks() > 1 || cfg.collectives) {
    if (!distributedMicroBatches(loss, error))
      return false;
  } else {
    // The means over the micro-batches, summed in compiled code
    // (@accumulate_grad adds loss/k and grads/k into its accumulators).
    Executor &g = *progs.accumulate;
    const Program &ap = g.program();
    if (!trainer_detail::zeroAccumulators(I, g, error))
      return false;
    for (int64_t m = 0; m < cfg.accumulate; ++m) {
      if (!statusOut(trainSampler->feed(g), error))
        return false;
      if (!statusOut(g.run(), error)) {
        error =
            "step " + std::to_string(t) + ", micro-batch " + std::to_string(m + 1) + ": " + error;
        return false;
      }
      for (auto [result, arg] : I.accumulators)
        if (!statusOut(g.copyFrom(size_t(ap.arguments[arg]), g, size_t(ap.results[result])), error))
          return false;
    }
    std::vector<double> lossValues;
    if (!statusOut(g.read(size_t(ap.arguments[I.lossSumArg])), lossValues, error))
      return false;
    loss = lossValues.empty() ? NAN : lossValues[0];
    for (size_t p = 0; p < I.paramCount; ++p)
      if (!statusOut(I.holder->copyFrom(
                         size_t(I.holder->program().arguments[size_t(I.slots[p].applyGradArg)]), g,
                         size_t(ap.arguments[size_t(I.slots[p].sumArg)])),
                     error))
        return false;
  }
  if (globalMicroBatches() > 1) {
    if (!std::isfinite(loss)) {
      gradNorm = NAN;
      nonFinite = true;
      error = "step " + std::to_string(t) + ": the loss is not finite (" + num(loss) +
              "); stopping, the last good checkpoint is kept";
      return false;
    }
    if (!statusOut(I.holder->run(), error)) {
      error = "step " + std::to_string(t) + ": " + error;
      return false;
    }
  }
  if (!statusOut(I.holder->readScalar(I.gradNormResult), gradNorm, error))
    return false;
  // Loss scaling: a step whose gradients were not finite was skipped by the
  // program (params and state kept, the scale backed off); it is not the
  // optimizer's update, so its count t stays (torch's GradScaler).
  bool skipped = false;
  StepMetrics::Scaler scaler;
  if (I.scaling()) {
    double value[3];
    for (int k = 0; k < 3; ++k)
      if (!statusOut(I.holder->readScalar(I.slots[size_t(I.scalerSlots[k])].result), value[k],
                     error))
        return false;
    std::vector<double> before;
    if (!statusOut(I.holder->read(I.holderBuf(I.slots[size_t(I.scalerSlots[2])])), before, error))
      return false;
    skipped = !before.empty() && value[2] > before[0];
    scaler = {value[0], int64_t(value[1]), int64_t(value[2])};
  }
  if (!std::isfinite(loss) || (!std::isfinite(gradNorm) && !skipped)) {
    nonFinite = true;
    error = "step " + std::to_string(t) + ": " +
            (!std::isfinite(loss) ? "the loss is not finite (" + num(loss) + ")"
                                  : "the gradient norm is not finite (" + num(gradNorm) + ")") +
            "; stopping, the last good checkpoint is kept";
    return false;
  }
  // Carry params' and opt_state' into the next step's arguments.
  for (const Impl::Slot &s : I.slots)
    if (s.owned && !statusOut(I.holder->copyFrom(I.holderBuf(s), *I.holder,
                                                 size_t(I.holder->program().results[s.result])),
                              error))
      return false;
  if (sharded() && !allGatherParams(error))
    return false;
  curStep = t;
  if (!skipped)
    optStep += 1;
  if (I.scaling())
    lastScaler = scaler;
  return syncParamsToGrad(I, progs.accumulate, error);
}

bool Trainer::lastGradients(std::vector<std::vector<double>> &out, std::string &error) const {
  out.clear();
  if (!progs.accumulate) {
    error = "no accumulated gradients: accumulate is 1";
    return false;
  }
  const Program &ap = progs.accumulate->program();
  std::vector<float> onDevice;
  const std::vector<float> *sum = &gradientSum;
  if (deviceSum) { // the sum of the last step, on the device
    onDevice.resize(size_t(deviceSum->count()));
    if (!statusOut(progs.accumulate->device().download(onDevice.data(), deviceSum->sum(),
                                                       deviceSum->count() * int64_t(sizeof(float))),
                   error))
      return false;
    sum = &onDevice;
  }
  if (ranks() > 1 || deviceSum) { // the ordered sum of the last step
    for (size_t k = 0; k < impl->paramCount; ++k) {
      size_t at = 0;
      while (impl->accumulators[at].second != size_t(impl->slots[k].sumArg))
        ++at;
      int64_t offset = impl->accOffsets[at];
      int64_t count = ap.buffers[ap.arguments[size_t(impl->slots[k].sumArg)]].elementCount();
      if (sum->size() < size_t(offset + count)) {
        error = "no accumulated gradients yet";
        return false;
      }
      out.emplace_back(sum->begin() + offset, sum->begin() + offset + count);
    }
    return true;
  }
  for (size_t k = 0; k < impl->paramCount; ++k) {
    out.emplace_back();
    if (!statusOut(progs.accumulate->read(size_t(ap.arguments[size_t(impl->slots[k].sumArg)])),
                   out.back(), error))
      return false;
  }
  return true;
}

bool Trainer::evaluate(double &valLoss, std::string &error) {
  Impl &I = *impl;
  if (!progs.forward || !valSampler) {
    error = "evaluation needs @forward, a validation file and eval_every > 0";
    return false;
  }
  Executor &f = *progs.forward;
  for (size_t k = 0; k < I.paramCount; ++k)
    if (!statusOut(f.copyFrom(size_t(f.program().arguments[size_t(I.slots[k].forwardArg)]),
                              *I.holder, I.holderBuf(I.slots[k])),
                   error))
      return false;
  valSampler->rewind();
  double sum = 0;
  for (int64_t i = 0; i < cfg.evalSteps; ++i) {
    if (!statusOut(valSampler->feed(f), error))
      return false;
    if (!statusOut(f.run(), error)) {
      error = "evaluation at step " + std::to_string(curStep) + ": " + error;
      return false;
    }
    double batchLoss;
    if (!statusOut(f.readScalar(0), batchLoss, error))
      return false;
    sum += batchLoss;
  }
  valLoss = sum / double(cfg.evalSteps);
  return true;
}

bool Trainer::run(TrainResult &result, std::string &error) {
  Impl &I = *impl;
  using Clock = std::chrono::steady_clock;
  const std::string last = cfg.checkpointDir.empty() ? "" : cfg.checkpointDir + "/last.safetensors";
  // Rank 0 alone writes (the other ranks read `last` to resume).
  const std::string best =
      cfg.checkpointDir.empty() || !leader() ? "" : cfg.checkpointDir + "/best.safetensors";
  const bool writes = !last.empty() && leader();
  nonFinite = false;
  result = TrainResult();
  // A failed write leaves the file it would have replaced, if there was one.
  auto saveOrSay = [&](const std::string &path) {
    bool existed = fileExists(path);
    if (saveCheckpoint(path, error))
      return true;
    error += existed        ? "; the previous checkpoint is intact"
             : path == last ? "; there is no earlier checkpoint to resume from"
                            : "; there is no earlier best checkpoint";
    return false;
  };

  if (cfg.resume) {
    if (last.empty()) {
      error = "resume needs a checkpoint directory";
      return false;
    }
    if (!fileExists(last)) {
      error = "nothing to resume: " + einrt::quoted(last) + " does not exist";
      return false;
    }
    if (!resumeFrom(last, error))
      return false;
    I.progress->message("resumed from " + einrt::terminalSafe(last) + " at step " +
                        std::to_string(curStep) +
                        (cfg.resetOptimizer ? " (optimizer state reset)" : ""));
  } else {
    if (!last.empty() && !cfg.overwrite) {
      error = checkpointInTheWay(cfg.checkpointDir);
      if (!error.empty())
        return false;
    }
    // --init-from: read before --overwrite removes `last`, which it may be.
    std::optional<Checkpoint> init;
    if (!cfg.initFrom.empty() && !statusOut(readCheckpoint(cfg.initFrom), init, error))
      return false;
    curStep = 0;
    optStep = 0;
    lastVal.reset();
    bestVal.reset();
    trainSampler->rewind();
    if (cfg.initialize && !init) {
      // Init where the params' initialisers are: @train_step, or
      // @accumulate_grad (the model's own signature first)
      // model's own signature) when accumulating.
      if (globalMicroBatches() == 1) {
        if (!statusOut(initParams(*I.holder, cfg.seed), error))
          return false;
      } else {
        if (!statusOut(initParams(*progs.accumulate, cfg.seed), error))
          return false;
        for (size_t k = 0; k < I.paramCount; ++k)
          if (!statusOut(
                  I.holder->copyFrom(
                      I.holderBuf(I.slots[k]), *progs.accumulate,
                      size_t(progs.accumulate->program().arguments[size_t(I.slots[k].accArg)])),
                  error))
            return false;
      }
    }
    for (size_t k = I.paramCount; k < I.slots.size(); ++k)
      if (!statusOut(I.holder->zeroBuffer(I.holderBuf(I.slots[k])), error))
        return false;
    if (init && !startFrom(*init, cfg.initFrom, error))
      return false;
    if (writes) { // the run can start: --overwrite keeps no best of the old run
      std::remove(last.c_str());
      std::remove(best.c_str());
    }
    if (!syncParamsToGrad(I, progs.accumulate, error))
      return false;
  }
  result.startStep = curStep;
  result.lastStep = curStep;
  result.bestValLoss = bestVal;
  result.lastValLoss = lastVal;

  if (writes) {
    std::error_code ec;
    std::filesystem::create_directories(cfg.checkpointDir, ec);
    if (ec) {
      error = "cannot create the checkpoint directory " + einrt::quoted(cfg.checkpointDir) + ": " +
              ec.message();
      return false;
    }
    for (const std::string &f : removeStaleTemporaries(cfg.checkpointDir))
      I.progress->message("removed " + einrt::quoted(f) +
                          ", left by a checkpoint writer that was killed");
  }
  if (leader() && !cfg.logPath.empty() &&
      !succeeded(cfg.resume ? I.log.openResumed(cfg.logPath, curStep)
                            : I.log.open(cfg.logPath, /*append=*/false),
                 error))
    return false;
  if (curStep >= cfg.steps) {
    I.progress->message("already at step " + std::to_string(curStep) + " (steps " +
                        std::to_string(cfg.steps) + "): nothing to do");
    return true;
  }

  double secondsSinceReport = 0;
  int64_t stepsSinceReport = 0;
  const double tokens = double(tokensPerStep());
  while (curStep < cfg.steps) {
    const int64_t t = curStep + 1;
    double loss = 0, gradNorm = 0;
    auto start = Clock::now();
    bool ok = trainStep(loss, gradNorm, error);
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (!ok) {
      if (nonFinite) {
        result.stoppedNonFinite = true;
        StepMetrics m;
        m.step = t;
        m.loss = loss;
        m.lr = cfg.schedule.at(t);
        m.gradNorm = gradNorm;
        I.log.write(m).ignore(); // the step's own failure is the message
        I.progress->finish();
      }
      return false;
    }
    // A stop asked for (a signal) ends the run after this step, saved.
    bool stopping = false;
    if (!stopAgreed(stopping, error))
      return false;
    secondsSinceReport += seconds;
    ++stepsSinceReport;
    result.lastStep = curStep;
    result.lastLoss = loss;
    result.lastGradNorm = gradNorm;

    StepMetrics m;
    m.step = curStep;
    m.loss = loss;
    m.lr = cfg.schedule.at(curStep);
    m.gradNorm = gradNorm;
    m.scaler = lastScaler;
    if (lastScaler) {
      result.lossScale = lastScaler->scale;
      result.skippedSteps = lastScaler->skippedSteps;
    }

    const bool final = curStep == cfg.steps;
    bool evaluated = false, improved = false;
    const bool evalDue = valSampler && (curStep % cfg.evalEvery == 0 || final);
    if (evalDue && leader()) {
      double v;
      if (!evaluate(v, error))
        return false;
      if (!std::isfinite(v)) {
        result.stoppedNonFinite = true;
        error = "step " + std::to_string(curStep) + ": the validation loss is not finite (" +
                num(v) + "); stopping, the last good checkpoint is kept";
        return false;
      }
      evaluated = true;
      lastVal = v;
      m.valLoss = v;
      result.lastValLoss = v;
      if (!bestVal || v < *bestVal) {
        bestVal = v;
        result.bestValLoss = v;
        improved = true;
        if (!sharded() && !best.empty() && !saveOrSay(best))
          return false;
      }
    }
    // ZeRO-1: the state is gathered from every rank, so each takes part in
    // every save (rank 0 says whether `best` improved).
    if (sharded() && evalDue) {
      uint8_t flag = improved;
      if (!succeeded(cfg.comm->broadcast(&flag, 1, 0), error))
        return false;
      if (flag && !last.empty() && !saveOrSay(cfg.checkpointDir + "/best.safetensors"))
        return false;
    }
    bool save = final || evalDue || stopping ||
                (cfg.checkpointEvery > 0 && curStep % cfg.checkpointEvery == 0);
    if (save && (writes || (sharded() && !last.empty())) && !saveOrSay(last))
      return false;

    if (final || evaluated || stopping || curStep % cfg.logEvery == 0) {
      m.stepSeconds = secondsSinceReport / double(stepsSinceReport);
      m.tokensPerSecond = m.stepSeconds > 0 ? tokens / m.stepSeconds : 0;
      secondsSinceReport = 0;
      stepsSinceReport = 0;
      if (!succeeded(I.log.write(m), error))
        return false;
      I.progress->report(m);
    }
    if (stopping && !final) {
      // No rank leaves before rank 0 has written the step: a launcher may
      // end the job when the first rank exits.
      if (ranks() > 1 && !succeeded(cfg.comm->barrier(), error))
        return false;
      result.stopped = true;
      break;
    }
  }
  I.progress->finish();
  I.log.close();
  return true;
}

} // namespace einrt
