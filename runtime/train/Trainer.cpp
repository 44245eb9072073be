//===- Trainer.cpp - The training loop ------------------------------------===//
//
// Building the argument plumbing between the Programs (create), one step,
// evaluation and the loop. Checkpoints: TrainerCheckpoint.cpp.
//
//===----------------------------------------------------------------------===//
#include "runtime/train/Trainer.h"
#include "runtime/base/LossScaleState.h"
#include "runtime/base/Memory.h"
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

Expected<std::unique_ptr<Trainer>> Trainer::create(const TrainConfig &config,
                                                   const TrainPrograms &programs,
                                                   const TokenFile &train, const TokenFile *val) {
  std::unique_ptr<Trainer> t(new Trainer());
  t->cfg = config;
  t->progs = programs;
  t->trainFile = &train;
  t->valFile = val;
  t->impl = std::make_unique<Impl>();
  Impl &I = *t->impl;
  const TrainConfig &c = t->cfg;

  if (c.steps < 0)
    return Status::invalid("the number of steps must be >= 0");
  if (c.accumulate < 1)
    return Status::invalid("accumulate must be >= 1, got " + std::to_string(c.accumulate));
  if (c.logEvery < 1 || c.evalEvery < 0 || c.evalSteps < 1 || c.checkpointEvery < 0)
    return Status::invalid("log_every and eval_steps must be >= 1, eval_every and "
                           "checkpoint_every >= 0");
  std::string problem = c.schedule.validate();
  if (!problem.empty())
    return Status::invalid("schedule: " + problem);

  const int64_t ranks = c.comm ? c.comm->size() : 1;
  const int64_t global = c.accumulate * ranks; // micro-batches per step, all ranks
  if (c.comm && (c.comm->rank() < 0 || c.comm->rank() >= ranks))
    return Status::invalid("rank " + std::to_string(c.comm->rank()) + " is not in [0, " +
                           std::to_string(ranks) + ")");

  if (std::string problem = trainer_detail::collectivesProblem(c, programs, global);
      !problem.empty())
    return Status::invalid(problem);

  // The holder of params and optimizer state.
  const char *holderName;
  if (global == 1) {
    if (!programs.trainStep)
      return Status::invalid("training needs the @train_step program");
    I.holder = programs.trainStep;
    holderName = "@train_step";
  } else {
    if (!programs.accumulate || !programs.apply)
      return Status::invalid("accumulate = " + std::to_string(c.accumulate) +
                             (ranks > 1 ? " on " + std::to_string(ranks) + " ranks" : "") +
                             " needs the @accumulate_grad and @apply_update programs");
    I.holder = programs.apply;
    holderName = "@apply_update";
  }
  const Program &hp = I.holder->program();
  size_t firstResult = global == 1 ? 2 : 1;
  if (hp.results.size() < firstResult)
    return Status::invalid(std::string(holderName) + " has too few results");
  int64_t stepArg = findArg(hp, "step", BufferRole::Scalar);
  int64_t lrArg = findArg(hp, "lr", BufferRole::Scalar);
  if (stepArg < 0 || lrArg < 0)
    return Status::invalid(std::string(holderName) + " lacks its step or lr argument");
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
      if (r < 0 || !sameType(hp.buffers[hp.results[size_t(r)]], b))
        return Status::invalid(std::string(holderName) + " has no result '" + b.name +
                               "' of the argument's type to carry it to the next step");
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
  if (I.paramCount == 0)
    return Status::invalid(std::string(holderName) + " has no params");
  if ((I.scalerSlots[0] >= 0) != (I.scalerSlots[1] >= 0) ||
      (I.scalerSlots[0] >= 0) != (I.scalerSlots[2] >= 0))
    return Status::invalid(std::string(holderName) +
                           " carries only part of the loss scaler's state (" + kLossScaleName +
                           ", " + kGoodStepsName + ", " + kSkippedStepsName + ")");

  // Inputs of the program that draws training data.
  Executor *dataEx = global == 1 ? programs.trainStep : programs.accumulate;
  Expected<WindowLayout> trainLayout = windowLayout(dataEx->program(), c.mapping);
  if (!trainLayout.ok())
    return trainLayout.takeStatus();
  I.trainLayout = *trainLayout;
  Expected<WindowSampler> trainSampler =
      WindowSampler::create(train, *I.trainLayout, c.seed, c.vocab);
  if (!trainSampler.ok())
    return trainSampler.takeStatus();
  t->trainSampler = trainSampler.take();
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
    if (!shortfall.empty())
      return Status(StatusCode::OutOfMemory, shortfall);
  }

  if (global > 1) {
    // @accumulate_grad: (inputs..., params..., accumulators...) ->
    // (accumulators'...), each result named as its accumulator, the loss's
    // first; @apply_update: (params..., grads..., opt_state..., step, lr).
    const Program &ap = programs.accumulate->program();
    for (size_t r = 0; r < ap.results.size(); ++r) {
      int64_t a = findArg(ap, ap.resultNames[r], BufferRole::Accumulator);
      if (a < 0 || !sameType(ap.buffers[ap.arguments[size_t(a)]], ap.buffers[ap.results[r]]))
        return Status::invalid("@accumulate_grad has no accumulator argument '" +
                               ap.resultNames[r] + "' of its result's type");
      I.accumulators.emplace_back(r, size_t(a)); // laid out below (layOutByReadiness)
    }
    if (I.accumulators.size() != 1 + I.paramCount)
      return Status::invalid("@accumulate_grad accumulates " +
                             std::to_string(I.accumulators.size()) +
                             " values; @apply_update takes " + std::to_string(I.paramCount) +
                             " params (and the loss is the first)");
    I.lossSumArg = I.accumulators.front().second;
    trainer_detail::layOutByReadiness(I, *programs.accumulate);
    // A loss-scaled @accumulate_grad reads the scaler's scale (a copy of
    // the holder's, made before each step's micro-batches).
    I.accScaleArg = findArg(ap, kLossScaleName, BufferRole::OptState);
    if ((I.accScaleArg >= 0) != I.scaling())
      return Status::invalid(I.scaling()
                                 ? "@apply_update scales the loss but @accumulate_grad takes no " +
                                       std::string(kLossScaleName)
                                 : "@accumulate_grad takes a " + std::string(kLossScaleName) +
                                       " but @apply_update does not scale the loss");
    std::vector<size_t> applyGrads;
    for (size_t a = 0; a < hp.arguments.size(); ++a) {
      BufferRole r = hp.buffers[hp.arguments[a]].role;
      if (r != BufferRole::Param && r != BufferRole::OptState && r != BufferRole::Scalar)
        applyGrads.push_back(a);
    }
    if (applyGrads.size() != I.paramCount)
      return Status::invalid("@apply_update takes " + std::to_string(applyGrads.size()) +
                             " gradients for " + std::to_string(I.paramCount) + " params");
    for (size_t k = 0; k < I.paramCount; ++k) {
      Impl::Slot &s = I.slots[k];
      const Buffer &pb = hp.buffers[hp.arguments[s.holderArg]];
      s.accArg = findArg(ap, s.name, BufferRole::Param);
      s.sumArg = findArg(ap, s.name, BufferRole::Accumulator);
      if (s.accArg < 0 || !sameType(ap.buffers[ap.arguments[size_t(s.accArg)]], pb) ||
          s.sumArg < 0 || !sameType(ap.buffers[ap.arguments[size_t(s.sumArg)]], pb))
        return Status::invalid("@accumulate_grad has no param '" + s.name +
                               "' and accumulator of type " + dtypeName(pb.dtype) +
                               shapeText(pb.shape));
      // The apply's gradients follow its params' order.
      s.applyGradArg = int64_t(applyGrads[k]);
      const Buffer &ag = hp.buffers[hp.arguments[size_t(s.applyGradArg)]];
      if (!sameType(ag, pb))
        return Status::invalid("the gradient of '" + s.name + "' has shape " + shapeText(ag.shape) +
                               " in @apply_update; the param is " + shapeText(pb.shape));
    }
  }

  if (programs.forward && val && c.evalEvery > 0) {
    const Program &fp = programs.forward->program();
    for (size_t k = 0; k < I.paramCount; ++k) {
      Impl::Slot &s = I.slots[k];
      s.forwardArg = findArg(fp, s.name, BufferRole::Param);
      if (s.forwardArg < 0 || !sameType(fp.buffers[fp.arguments[size_t(s.forwardArg)]],
                                        hp.buffers[hp.arguments[s.holderArg]]))
        return Status::invalid("@forward has no param '" + s.name + "' of the same type");
    }
    if (fp.results.empty())
      return Status::invalid("@forward returns nothing");
    Expected<WindowLayout> evalLayout = windowLayout(fp, c.mapping);
    if (!evalLayout.ok())
      return evalLayout.takeStatus();
    I.evalLayout = *evalLayout;
    // The same batches at every evaluation: rewound before each.
    Expected<WindowSampler> valSampler =
        WindowSampler::create(*val, *I.evalLayout, c.seed ^ 0x76616C6964617465ull, c.vocab);
    if (!valSampler.ok())
      return valSampler.takeStatus();
    t->valSampler = valSampler.take();
  }

  if (c.shardOptimizer && ranks > 1)
    EINRT_TRY(t->prepareShards());

  ProgressOptions po = c.progress;
  po.totalSteps = c.steps;
  I.progress = std::make_unique<Progress>(po);
  return std::move(t);
}

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
      return Status::invalid(step + "the loss is not finite (" + num(loss) +
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
    return Status::invalid(step +
                           (!std::isfinite(loss)
                                ? "the loss is not finite (" + num(loss) + ")"
                                : "the gradient norm is not finite (" + num(gradNorm) + ")") +
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

Expected<double> Trainer::evaluate() {
  Impl &I = *impl;
  if (!progs.forward || !valSampler)
    return Status::invalid("evaluation needs @forward, a validation file and eval_every > 0");
  Executor &f = *progs.forward;
  for (size_t k = 0; k < I.paramCount; ++k)
    EINRT_TRY(f.copyFrom(size_t(f.program().arguments[size_t(I.slots[k].forwardArg)]), *I.holder,
                         I.holderBuf(I.slots[k])));
  valSampler->rewind();
  double sum = 0;
  for (int64_t i = 0; i < cfg.evalSteps; ++i) {
    EINRT_TRY(valSampler->feed(f));
    EINRT_TRY(f.run().withContext("evaluation at step " + std::to_string(curStep) + ": "));
    Expected<double> batchLoss = f.readScalar(0);
    if (!batchLoss.ok())
      return batchLoss.takeStatus();
    sum += *batchLoss;
  }
  return sum / double(cfg.evalSteps);
}

Status Trainer::run(TrainResult &result) {
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
    Status saved = saveCheckpoint(path);
    if (saved.ok())
      return saved;
    return Status(saved.code(),
                  saved.message() + (existed ? "; the previous checkpoint is intact"
                                     : path == last
                                         ? "; there is no earlier checkpoint to resume from"
                                         : "; there is no earlier best checkpoint"));
  };

  if (cfg.resume) {
    if (last.empty())
      return Status::invalid("resume needs a checkpoint directory");
    if (!fileExists(last))
      return Status(StatusCode::NotFound,
                    "nothing to resume: " + einrt::quoted(last) + " does not exist");
    EINRT_TRY(resumeFrom(last));
    I.progress->message("resumed from " + einrt::terminalSafe(last) + " at step " +
                        std::to_string(curStep) +
                        (cfg.resetOptimizer ? " (optimizer state reset)" : ""));
  } else {
    if (!last.empty() && !cfg.overwrite)
      if (std::string inTheWay = checkpointInTheWay(cfg.checkpointDir); !inTheWay.empty())
        return Status::invalid(inTheWay);
    // --init-from: read before --overwrite removes `last`, which it may be.
    std::optional<Checkpoint> init;
    if (!cfg.initFrom.empty()) {
      Expected<Checkpoint> read = readCheckpoint(cfg.initFrom);
      if (!read.ok())
        return read.takeStatus();
      init = read.take();
    }
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
        EINRT_TRY(initParams(*I.holder, cfg.seed));
      } else {
        EINRT_TRY(initParams(*progs.accumulate, cfg.seed));
        for (size_t k = 0; k < I.paramCount; ++k)
          EINRT_TRY(I.holder->copyFrom(
              I.holderBuf(I.slots[k]), *progs.accumulate,
              size_t(progs.accumulate->program().arguments[size_t(I.slots[k].accArg)])));
      }
    }
    for (size_t k = I.paramCount; k < I.slots.size(); ++k)
      EINRT_TRY(I.holder->zeroBuffer(I.holderBuf(I.slots[k])));
    if (init)
      EINRT_TRY(startFrom(*init, cfg.initFrom));
    if (writes) { // the run can start: --overwrite keeps no best of the old run
      std::remove(last.c_str());
      std::remove(best.c_str());
    }
    EINRT_TRY(syncParamsToGrad(I, progs.accumulate));
  }
  result.startStep = curStep;
  result.lastStep = curStep;
  result.bestValLoss = bestVal;
  result.lastValLoss = lastVal;

  if (writes) {
    std::error_code ec;
    std::filesystem::create_directories(cfg.checkpointDir, ec);
    if (ec)
      return Status(StatusCode::Io, "cannot create the checkpoint directory " +
                                        einrt::quoted(cfg.checkpointDir) + ": " + ec.message());
    for (const std::string &f : removeStaleTemporaries(cfg.checkpointDir))
      I.progress->message("removed " + einrt::quoted(f) +
                          ", left by a checkpoint writer that was killed");
  }
  if (leader() && !cfg.logPath.empty())
    EINRT_TRY(cfg.resume ? I.log.openResumed(cfg.logPath, curStep)
                         : I.log.open(cfg.logPath, /*append=*/false));
  if (curStep >= cfg.steps) {
    I.progress->message("already at step " + std::to_string(curStep) + " (steps " +
                        std::to_string(cfg.steps) + "): nothing to do");
    return Status::success();
  }

  double secondsSinceReport = 0;
  int64_t stepsSinceReport = 0;
  const double tokens = double(tokensPerStep());
  while (curStep < cfg.steps) {
    const int64_t t = curStep + 1;
    double loss = 0, gradNorm = 0;
    auto start = Clock::now();
    Status stepped = trainStep(loss, gradNorm);
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (!stepped.ok()) {
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
      return stepped;
    }
    // A stop asked for (a signal) ends the run after this step, saved.
    Expected<bool> stopAsked = stopAgreed();
    if (!stopAsked.ok())
      return stopAsked.takeStatus();
    const bool stopping = *stopAsked;
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
      Expected<double> evaluation = evaluate();
      if (!evaluation.ok())
        return evaluation.takeStatus();
      const double v = *evaluation;
      if (!std::isfinite(v)) {
        result.stoppedNonFinite = true;
        return Status::invalid("step " + std::to_string(curStep) +
                               ": the validation loss is not finite (" + num(v) +
                               "); stopping, the last good checkpoint is kept");
      }
      evaluated = true;
      lastVal = v;
      m.valLoss = v;
      result.lastValLoss = v;
      if (!bestVal || v < *bestVal) {
        bestVal = v;
        result.bestValLoss = v;
        improved = true;
        if (!sharded() && !best.empty())
          EINRT_TRY(saveOrSay(best));
      }
    }
    // ZeRO-1: the state is gathered from every rank, so each takes part in
    // every save (rank 0 says whether `best` improved).
    if (sharded() && evalDue) {
      uint8_t flag = improved;
      EINRT_TRY(cfg.comm->broadcast(&flag, 1, 0));
      if (flag && !last.empty())
        EINRT_TRY(saveOrSay(cfg.checkpointDir + "/best.safetensors"));
    }
    bool save = final || evalDue || stopping ||
                (cfg.checkpointEvery > 0 && curStep % cfg.checkpointEvery == 0);
    if (save && (writes || (sharded() && !last.empty())))
      EINRT_TRY(saveOrSay(last));

    if (final || evaluated || stopping || curStep % cfg.logEvery == 0) {
      m.stepSeconds = secondsSinceReport / double(stepsSinceReport);
      m.tokensPerSecond = m.stepSeconds > 0 ? tokens / m.stepSeconds : 0;
      secondsSinceReport = 0;
      stepsSinceReport = 0;
      EINRT_TRY(I.log.write(m));
      I.progress->report(m);
    }
    if (stopping && !final) {
      // No rank leaves before rank 0 has written the step: a launcher may
      // end the job when the first rank exits.
      if (ranks() > 1)
        EINRT_TRY(cfg.comm->barrier());
      result.stopped = true;
      break;
    }
  }
  I.progress->finish();
  I.log.close();
  return Status::success();
}

} // namespace einrt
