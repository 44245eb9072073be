//===- Trainer.h - The training loop --------------------------------------===//
//
// Drives compiled Programs through a training run:
//
//   for step t = start+1 .. steps:
//     lr = schedule.at(t)
//     accumulate == 1:  draw a batch → @train_step(inputs, params, opt_state,
//                       t_opt, lr) → (loss, grad_norm, params', opt_state')
//     accumulate == k:  zero the accumulators, k × (draw a micro-batch →
//                       @accumulate_grad(inputs, params, sums) → sums'
//                       (each result fed back into its accumulator; the
//                       compiled code adds loss/k and grads/k)), then
//                       @apply_update(params, mean grads, opt_state, t_opt,
//                       lr) → (grad_norm, params', opt_state')
//     a non-finite loss or grad_norm stops the run (error names the step;
//       params' are not taken, no checkpoint is written) — except, with
//       loss scaling, a step the program skipped (its skipped_steps grew:
//       a gradient was not finite): its params' are the params, and the
//       optimizer's update count t does not advance
//     (loss scaling: @accumulate_grad gets a copy of the holder's
//       loss_scale before the micro-batches)
//     every eval_every steps and at the last step: mean @forward loss over
//       eval_steps batches of the validation file (the same batches every
//       time), `best` kept
//     every checkpoint_every steps, at each evaluation and at the end:
//       `last` written (a failed write stops the run; the previous file
//       is intact)
//     stopRequested (a signal, runtime/train/StopSignals.h) after a step: that
//       step is saved to `last` and logged, and run() returns with
//       result.stopped; with N > 1 ranks the ranks agree first (a sum over
//       them), so all stop after the same step
//
// On start, temporaries of checkpoint writers that were killed
// (`last.safetensors.tmp.PID` of a dead PID) are removed; on resume the log
// is cut back to the resumed step (MetricsLog::openResumed).
//
// Params and optimizer state live in the argument buffers of @train_step
// (or @apply_update); @accumulate_grad and @forward get copies of the params
// by name.
// Params start from their initialisers (initParams with the seed) unless
// resuming or `initialize` is off (the caller has set them).
//
// The loss scaler's state (runtime/base/LossScaleState.h) is carried, saved and
// restored as optimizer state, but reset_optimizer keeps it and a checkpoint
// without it starts it fresh (0: the program's initial scale).
//
// Data parallelism (`comm` with N > 1 ranks): the Programs accumulate over
// the global N·accumulate micro-batches (@accumulate_grad compiled with that
// count), of which this rank runs `accumulate` — interleaved, micro-batch
// j·N + rank in round j, drawing the others' windows without reading them
// (WindowSampler::skip), so all ranks see the one data stream of one
// process. Each round's contributions (@accumulate_grad run on zeroed
// accumulators: 0 + g/(N·k), exactly the addend one process adds) are
// summed by OrderedSum in one process's order, so the parameters are bit
// for bit those of one process with accumulate = N·k; `fastSum` sums each
// rank's own micro-batches in compiled code and then with the engine's
// all-reduce instead (fewer messages, not reproducible across N). Every
// rank then applies the same update; rank 0 alone evaluates, logs, prints
// and writes checkpoints, which are those of the single process, so a run
// resumes with any number of ranks.
//
// With the device's own collectives (`collectives`: NCCL) the contributions
// never leave the device: DeviceOrderedSum sums them there in the same
// order, to the same bits.
//
// Determinism: the same seed, settings and Programs give the same run bit
// for bit (the data stream is Rng::forStream(seed, "data"); nothing depends
// on time). Resume restores params, optimizer state, step and the sampler,
// so N steps in one run equal k + resume + (N − k) bit for bit.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_TRAINER_H
#define EINC_RUNTIME_TRAINER_H

#include "runtime/core/Executor.h"
#include "runtime/dist/Collectives.h"
#include "runtime/dist/Communicator.h"
#include "runtime/io/Checkpoint.h"
#include "runtime/io/TokenData.h"
#include "runtime/train/Progress.h"
#include "runtime/train/Schedule.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace einrt {

class DeviceOrderedSum;

struct TrainConfig {
  int64_t steps = 0;      // where this run stops: a total, not an increment
  int64_t accumulate = 1; // micro-batches per step
  int64_t evalEvery = 0;  // 0: no evaluation
  int64_t evalSteps = 1;  // batches per evaluation
  uint64_t seed = 0;
  Schedule schedule;
  WindowMapping mapping = WindowMapping::NextToken;
  int32_t vocab = 0;      // token ids must be < vocab (0: unchecked)
  bool initialize = true; // initParams(seed) when not resuming

  std::string checkpointDir;   // "" : no checkpoints
  int64_t checkpointEvery = 0; // also every N steps (0: only at each
                               // evaluation and at the end)
  bool resume = false;         // continue from checkpointDir/last.safetensors
  /// A fresh run into a checkpointDir that holds last.safetensors is refused
  /// (checkpointInTheWay) unless `overwrite`, which removes last and best.
  bool overwrite = false;
  /// Resume with the optimizer state zeroed and its update count restarted
  /// at 1; required when the checkpoint has no optimizer state.
  bool resetOptimizer = false;
  /// The caller's settings a resume must keep (the model's dims and train
  /// settings), recorded in the checkpoint with the trainer's own (seed,
  /// accumulate, window shape, schedule, every argument's type); a resume
  /// whose settings differ is refused, naming each change, unless
  /// allowConfigChange.
  SettingsRecord settings;
  bool allowConfigChange = false;
  /// A fresh run's params from this checkpoint instead of the initialisers
  /// (fine-tuning: step 0, this config's schedule, settings and data
  /// stream); its tensors must be the model's params with their shapes
  /// (optimizer state of any optimizer aside). With keepOptimizer also its
  /// optimizer state (all of this optimizer's, or refused) and update
  /// count, else the state starts at zero.
  std::string initFrom;
  bool keepOptimizer = false;

  /// Asked after each step whether this rank was told to stop (null: never).
  /// With N > 1 ranks, every rank or none must have it: the answers are
  /// summed across the ranks (a one-float sum per step), so any rank's yes
  /// stops them all after the same step.
  std::function<bool()> stopRequested;

  std::string logPath; // JSON lines ("" : none); on resume cut back to the
                       // checkpoint's step, then appended to
  int64_t logEvery = 1;
  ProgressOptions progress; // totalSteps is filled from `steps`

  /// Data parallelism (see above): null, or a group of ranks.
  Communicator *comm = nullptr;
  bool fastSum = false;          // the engine's all-reduce, not the ordered sum
  int64_t bucketBytes = 4 << 20; // the ordered sum moves in buckets of this size
  /// ZeRO-1: @apply_update was compiled for this rank's share
  /// (runtime/base/ShardPlan.h); the other params arrive from their owners.
  bool shardOptimizer = false;
  /// The device's own collectives (`--distributed nccl`), or null: the
  /// gradient sum then stays in the executors' device memory
  /// (runtime/dist/DeviceOrderedSum.h: the same bits as OrderedSum) and ZeRO-1
  /// broadcasts params there; `comm` (the same ranks) still carries the
  /// rest: flags, optimizer-state sizes, the checkpoint's gather. Used at
  /// any rank count, one included, whenever steps accumulate.
  Collectives *collectives = nullptr;
};

/// The Programs to drive; the executors must outlive the Trainer.
struct TrainPrograms {
  Executor *trainStep = nullptr;  // @train_step, for accumulate == 1
  Executor *accumulate = nullptr; // @accumulate_grad, for accumulate > 1
  Executor *apply = nullptr;      // @apply_update, for accumulate > 1
  Executor *forward = nullptr;    // @forward, for evaluation (optional)
};

struct TrainResult {
  int64_t startStep = 0; // the step resumed from (0: fresh)
  int64_t lastStep = 0;  // the last completed step
  double lastLoss = 0;
  double lastGradNorm = 0;
  std::optional<double> lastValLoss;
  std::vector<std::pair<std::string, double>> lastValMetrics; // at lastValLoss
  std::optional<double> bestValLoss;
  bool stoppedNonFinite = false;
  bool stopped = false;            // stopRequested: ended after lastStep, `last` holds it
  std::optional<double> lossScale; // loss scaling: the scale after the last step
  int64_t skippedSteps = 0;        // loss scaling: steps skipped so far (all runs)
};

class Trainer {
public:
  /// Checks the Programs against each other and the data (argument names,
  /// roles, shapes; the windows fit the files), opens the log. `val` may be
  /// null (no evaluation). The files must outlive the Trainer. Invalid for a
  /// setting or Programs that do not fit; OutOfMemory when the checkpoint
  /// staging does not fit the memory left.
  static Expected<std::unique_ptr<Trainer>> create(const TrainConfig &config,
                                                   const TrainPrograms &programs,
                                                   const TokenFile &train, const TokenFile *val);
  ~Trainer();

  /// Initialises or resumes, then trains to `config.steps`. Fails on any
  /// error, including a non-finite loss (`result` says how far it got).
  Status run(TrainResult &result);

  /// Single pieces, for tests and tools:
  /// Resume from a checkpoint file (as run() does with `resume`): the
  /// checkpoint's failure (readCheckpoint), or Invalid when it does not
  /// fit this run (other settings, a param or optimizer state missing).
  Status resumeFrom(const std::string &path);
  /// A fresh run's state from checkpoint `ck`, read from `path` (as run()
  /// does with `initFrom`): params, and with keepOptimizer optimizer state.
  Status startFrom(const Checkpoint &ck, const std::string &path);
  /// One optimizer step (step() + 1); fills loss, grad_norm (also when a
  /// non-finite one fails the step).
  Status trainStep(double &loss, double &gradNorm);
  /// An evaluation: the mean @forward loss over evalSteps batches of the
  /// validation file, and the mean of every other scalar float result.
  struct Evaluation {
    double loss = 0;
    std::vector<std::pair<std::string, double>> metrics; // result order
    /// The named metric, if @forward has it.
    std::optional<double> metric(const std::string &name) const;
  };
  Expected<Evaluation> evaluate();
  /// Writes params + optimizer state with the current metadata.
  Status saveCheckpoint(const std::string &path);
  /// Params and optimizer state as tensors, argument order, Program dtypes.
  Expected<std::vector<TensorData>> stateTensors() const;
  /// The mean gradients of the last accumulated step (accumulate > 1),
  /// indexed like the params: the accumulators of @accumulate_grad.
  Expected<std::vector<std::vector<double>>> lastGradients() const;

  int64_t step() const { return curStep; }
  /// The optimizer's update count t of the last step (skipped steps aside).
  int64_t optimizerStep() const { return optStep; }
  /// Loss scaling: the scaler's state after the last step (none before the
  /// first step of this process, or without loss scaling).
  const std::optional<StepMetrics::Scaler> &lossScaler() const { return lastScaler; }
  const WindowSampler &sampler() const { return *trainSampler; }
  /// Predicted tokens per optimizer step (targets × accumulate × ranks).
  int64_t tokensPerStep() const;
  /// The ranks of the run (1 without `comm`), and micro-batches per
  /// optimizer step over all of them.
  int64_t ranks() const { return cfg.comm ? cfg.comm->size() : 1; }
  int64_t globalMicroBatches() const { return cfg.accumulate * ranks(); }
  /// Rank 0 (or no distribution): evaluates, logs, writes checkpoints.
  bool leader() const { return !cfg.comm || cfg.comm->rank() == 0; }
  /// N > 1 ranks: seconds this rank waited for the cross-rank gradient sum
  /// (the ring's rounds not hidden behind the next micro-batch, the
  /// broadcast or the all-reduce), and the steps they cover.
  double gradientSumSeconds() const { return sumSeconds; }
  int64_t gradientSumSteps() const { return sumSteps; }
  const TrainConfig &config() const { return cfg; }

  struct Impl; // argument plumbing (TrainerImpl.h, built in TrainerCreate.cpp)

private:
  Trainer() = default;
  /// The accumulated step of N > 1 ranks (the micro-batches, the sum): the
  /// loss; with `collectives`, on the device (TrainerDistributed.cpp).
  Expected<double> distributedMicroBatches();
  Expected<double> deviceMicroBatches();
  /// Whether any rank's stopRequested says stop (collective with N > 1
  /// ranks and stopRequested set; TrainerDistributed.cpp).
  Expected<bool> stopAgreed();
  /// Round j's micro-batch of this rank through @accumulate_grad (with
  /// fastSum, added into the accumulators).
  Status microBatch(int64_t j, const std::function<void(size_t)> &afterStep = {});
  /// ZeRO-1 (TrainerShard.cpp): checks the holder against the shard plan
  /// and learns the other ranks' state (collective, at create).
  Status prepareShards();
  /// Every param to every rank from its owner, after the update.
  Status allGatherParams();
  /// Params and all ranks' optimizer state on rank 0 (collective; the
  /// other ranks get none).
  Expected<std::vector<TensorData>> gatherState() const;
  bool sharded() const { return cfg.shardOptimizer && ranks() > 1; }

public:
  /// Bytes of optimizer state (the loss scaler's aside) each rank holds,
  /// rank order (collective with N > 1 ranks: every rank must call it).
  Expected<std::vector<int64_t>> optimizerStateBytes() const;

private:
  TrainConfig cfg;
  TrainPrograms progs;
  const TokenFile *trainFile = nullptr;
  const TokenFile *valFile = nullptr;
  std::optional<WindowSampler> trainSampler;
  std::optional<WindowSampler> valSampler;
  std::unique_ptr<Impl> impl;
  int64_t curStep = 0;
  int64_t optStep = 0; // the optimizer's update count (t of AdamW)
  bool nonFinite = false;
  std::optional<double> lastVal, bestVal;
  std::optional<StepMetrics::Scaler> lastScaler;
  std::vector<float> gradientSum;              // N > 1 ranks: the last step's sum (loss first)
  std::unique_ptr<DeviceOrderedSum> deviceSum; // with `collectives`: the sum on the device
  double sumSeconds = 0;
  int64_t sumSteps = 0;
};

} // namespace einrt

#endif // EINC_RUNTIME_TRAINER_H
