//===- Trainer.cpp - The training loop ------------------------------------===//
//
// run(): a fresh start (initialisers, --init-from) or a resume, then the
// steps with their evaluations, checkpoints, log lines and the agreed stop.
// Building the trainer: TrainerCreate.cpp; one step: TrainerStep.cpp;
// checkpoints: TrainerCheckpoint.cpp.
//
//===----------------------------------------------------------------------===//
#include "runtime/base/TerminalText.h"
#include "runtime/core/Init.h"
#include "runtime/dist/DeviceOrderedSum.h"
#include "runtime/io/CheckpointDir.h"
#include "runtime/train/TrainerImpl.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sys/stat.h>

namespace einrt {

using trainer_detail::shortNumber;
using trainer_detail::syncParamsToGrad;

namespace {

bool fileExists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

} // namespace

Trainer::~Trainer() = default;

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
      Expected<Evaluation> evaluation = evaluate();
      if (!evaluation.ok())
        return evaluation.takeStatus();
      const double v = evaluation->loss;
      if (!std::isfinite(v)) {
        result.stoppedNonFinite = true;
        return Status::invalid("step " + std::to_string(curStep) +
                               ": the validation loss is not finite (" + shortNumber(v) +
                               "); stopping, the last good checkpoint is kept");
      }
      evaluated = true;
      lastVal = v;
      m.valLoss = v;
      m.valMetrics = evaluation->metrics;
      result.lastValLoss = v;
      result.lastValMetrics = evaluation->metrics;
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
    // The step's log line before its checkpoint: a run killed in between
    // resumes from the previous checkpoint, which cuts the log back to it
    // (MetricsLog::openResumed); the other order lost the line for good.
    const bool reported = final || evaluated || stopping || curStep % cfg.logEvery == 0;
    if (reported) {
      m.stepSeconds = secondsSinceReport / double(stepsSinceReport);
      m.tokensPerSecond = m.stepSeconds > 0 ? tokens / m.stepSeconds : 0;
      secondsSinceReport = 0;
      stepsSinceReport = 0;
      EINRT_TRY(I.log.write(m));
    }
    bool save = final || evalDue || stopping ||
                (cfg.checkpointEvery > 0 && curStep % cfg.checkpointEvery == 0);
    if (save && (writes || (sharded() && !last.empty())))
      EINRT_TRY(saveOrSay(last));
    if (reported)
      I.progress->report(m);
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
