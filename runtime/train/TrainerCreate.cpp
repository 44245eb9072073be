//===- TrainerCreate.cpp - The argument plumbing between the Programs -----===//
//
// Trainer::create: the holder of params and optimizer state (@train_step,
// or @apply_update when steps accumulate), each param's and accumulator's
// argument in the other Programs, the loss scaler's slots, the data's
// window layouts and samplers, checked against each other before a step
// runs. The step: TrainerStep.cpp; the loop: Trainer.cpp.
//
//===----------------------------------------------------------------------===//
#include "runtime/base/LossScaleState.h"
#include "runtime/base/Memory.h"
#include "runtime/base/TerminalText.h"
#include "runtime/dist/DeviceOrderedSum.h"
#include "runtime/train/TrainerImpl.h"

namespace einrt {

namespace {

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
  I.seedArg = findArg(hp, "seed", BufferRole::Scalar);
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
    // A frozen param (or buffer) has no gradient, so @apply_update does not
    // take it: nothing here would hold, save or restore it.
    for (size_t a = 0; a < ap.arguments.size(); ++a) {
      const Buffer &b = ap.buffers[ap.arguments[a]];
      if (b.role == BufferRole::Param && findArg(hp, b.name, BufferRole::Param) < 0)
        return Status::invalid("'" + b.name +
                               "' is frozen or a buffer: a model with one trains with one "
                               "micro-batch per step on one rank (accumulate = 1)");
    }
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

} // namespace einrt
