//===- TrainerImpl.h - The trainer's argument plumbing (private) -*- C++ -*-===//
//
// Trainer::Impl, shared by TrainerCreate.cpp (building it), TrainerStep.cpp
// (the step), Trainer.cpp (the loop), TrainerCheckpoint.cpp (saving and
// resuming), TrainerDistributed.cpp and TrainerShard.cpp. Not installed;
// only they and the trainer's unit tests include it.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_TRAINERIMPL_H
#define EINC_RUNTIME_TRAINERIMPL_H

#include "runtime/train/Trainer.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace einrt {

/// The argument plumbing between the Programs.
struct Trainer::Impl {
  /// A param or optimizer-state tensor, held in the holder's argument.
  struct Slot {
    std::string name;
    bool opt = false;
    bool scaler = false;       // the loss scaler's state (runtime/base/LossScaleState.h)
    size_t holderArg = 0;      // argument index in the holder (train_step/apply)
    size_t result = 0;         // the holder's result with the new value
    int64_t accArg = -1;       // params: argument index in @accumulate_grad
    int64_t sumArg = -1;       // params: its gradient's accumulator there
    int64_t sumResult = -1;    // params: the accumulator's next value
    int64_t applyGradArg = -1; // params: @apply_update's gradient argument
    int64_t forwardArg = -1;   // params: argument index in @forward
    /// ZeRO-1: whether this rank updates the param (and keeps its state),
    /// and which rank does. A param of another rank has no result: its new
    /// value arrives from the owner.
    bool owned = true;
    int owner = 0;
  };
  Executor *holder = nullptr;
  std::vector<Slot> slots; // params (argument order), then opt state
  size_t paramCount = 0;
  size_t stepArg = 0, lrArg = 0;
  int64_t seedArg = -1;  // the dropout masks' seed (@train_step has it when the model drops out)
  size_t lossResult = 0; // in the executor producing the loss
  /// @accumulate_grad: (result, argument) of each accumulator, the loss's
  /// first; the loss accumulator's argument.
  std::vector<std::pair<size_t, size_t>> accumulators;
  size_t lossSumArg = 0;
  /// Where each accumulator's values start in the flat gradient sum of a
  /// distributed step (parallel to `accumulators`), and its length. The
  /// accumulators lie in the order @accumulate_grad finishes them
  /// (layOutByReadiness), so the sum can start on the first while the
  /// backward computes the rest.
  std::vector<int64_t> accOffsets;
  int64_t accCount = 0;
  /// Per step of @accumulate_grad: the accumulators whose result it
  /// finishes (the last step writing their memory), and how many leading
  /// elements of the flat sum are final once it has run.
  std::vector<std::vector<size_t>> finishedBy;
  std::vector<int64_t> finalPrefix;
  size_t gradNormResult = 0; // in the holder
  /// Loss scaling: the slots of loss_scale, good_steps, skipped_steps (-1:
  /// none), and @accumulate_grad's loss_scale argument (-1: none).
  int64_t scalerSlots[3] = {-1, -1, -1};
  int64_t accScaleArg = -1;
  std::optional<WindowLayout> trainLayout, evalLayout;
  /// ZeRO-1: the holder's arguments as one process's unsharded
  /// @apply_update has them ("name:dtype[shape],..."; the config hash).
  std::string unshardedArgs;
  /// ZeRO-1: the optimizer-state slots of each param (indices into slots).
  std::vector<std::vector<size_t>> paramState;
  MetricsLog log;
  std::unique_ptr<Progress> progress;

  Slot *param(size_t k) { return &slots[k]; }
  bool scaling() const { return scalerSlots[0] >= 0; }
  /// The holder's buffer of a slot.
  size_t holderBuf(const Slot &s) const { return size_t(holder->program().arguments[s.holderArg]); }
};

namespace trainer_detail {
/// A loss or a norm in a message: "%.9g".
std::string shortNumber(double v);
/// Copies the holder's params (and the loss scale) into @accumulate_grad's
/// arguments; a no-op when the holder computes the gradient itself.
Status syncParamsToGrad(Trainer::Impl &I, Executor *grad);
/// "name:dtype[shape]," of a holder argument (the config hash's words).
std::string argText(const Buffer &b);
/// Buffer `buffer` of `ex` into `out` (f32 storage, else Invalid; a host
/// device's memory directly, another's through the host as doubles, exact
/// for f32).
Status gather(const Executor &ex, size_t buffer, float *out);
/// @accumulate_grad's accumulators (in `g`) := 0.
Status zeroAccumulators(const Trainer::Impl &I, Executor &g);
/// "" when `c.collectives` (if any) are the run's ranks on the programs'
/// device; else why not.
std::string collectivesProblem(const TrainConfig &c, const TrainPrograms &programs, int64_t global);
/// Sets accOffsets, accCount, finishedBy and finalPrefix from the steps of `g`
/// (@accumulate_grad): which step last writes each result's memory.
void layOutByReadiness(Trainer::Impl &I, const Executor &g);
} // namespace trainer_detail

} // namespace einrt

#endif // EINC_RUNTIME_TRAINERIMPL_H
