//===- LossScaleState.h - The loss scaler's state buffers -------*- C++ -*-===//
//
// Dynamic loss scaling (docs/train-step.md, "Loss scaling") carries three
// rank-0 f32 values from step to step: arguments and results of
// @train_step / @apply_update of `ein.kind = "opt_state"` (Program role
// OptState), so the trainer carries, checkpoints and restores them as it
// does the optimizer's moments. Their names are fixed; the pass that creates
// them (passes/LossScale.cpp) and the trainer, the checkpoint check and the
// log read them from here.
//
//   loss_scale     the scale; 0 means "not started": the step uses the
//                  initial scale compiled into it (the runtime zeroes state)
//   good_steps     finite steps since the scale last changed
//   skipped_steps  steps skipped because a gradient was not finite (total)
//
// Plain C++17, no MLIR: passes/ and runtime/ both include it.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_LOSSSCALESTATE_H
#define EINC_RUNTIME_LOSSSCALESTATE_H

#include <string>

namespace einrt {

inline constexpr const char kLossScaleName[] = "loss_scale";
inline constexpr const char kGoodStepsName[] = "good_steps";
inline constexpr const char kSkippedStepsName[] = "skipped_steps";

/// True for the names of the three loss-scaler buffers.
inline bool isLossScaleState(const std::string &name) {
  return name == kLossScaleName || name == kGoodStepsName || name == kSkippedStepsName;
}

} // namespace einrt

#endif // EINC_RUNTIME_LOSSSCALESTATE_H
