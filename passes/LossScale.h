//===- LossScale.h - Dynamic loss scaling as ein ops ------------*- C++ -*-===//
//
// The loss scaler of a compiled training step (torch.cuda.amp.GradScaler's
// rules), emitted as scalar `ein` ops by ein-train-step (@train_step,
// @apply_update) and ein-accumulate-grad (@accumulate_grad). Its state is
// three rank-0 f32 buffers named in runtime/base/LossScaleState.h; the equations
// are in docs/train-step.md ("Loss scaling").
//
//===----------------------------------------------------------------------===//
#ifndef EINC_PASSES_LOSSSCALE_H
#define EINC_PASSES_LOSSSCALE_H

#include "passes/Optimizers.h"

namespace mlir::ein::train {

/// ein-train-step's loss-scale options.
struct LossScaleConfig {
  bool dynamic = true; ///< false: a static scale, always `init`
  double init = 65536.0, growth = 2.0, backoff = 0.5;
  int64_t interval = 2000; ///< good steps before the scale grows
};

/// The scale a step multiplies the loss by: the state `raw`, or `init` while
/// it is not started (0, as the runtime zeroes state):
/// select(raw > 0, raw, init).
Value lossScaleInUse(Emitter &e, Value raw, double init);

/// The scaler's state: the scale (in use), good and skipped steps.
struct ScalerState {
  Value scale, goodSteps, skippedSteps;
};

/// The state after a step; `finite` (tensor<i1>) says every gradient was
/// finite. Finite: good + 1, and at `interval` good steps the scale times
/// `growth` (kept when that is not finite) and good = 0. Not finite: the
/// scale times `backoff`, good = 0, skipped + 1. Static: the scale stays.
ScalerState nextScalerState(Emitter &e, const LossScaleConfig &config, Value finite,
                            const ScalerState &now);

} // namespace mlir::ein::train

#endif // EINC_PASSES_LOSSSCALE_H
