//===- LossScale.cpp - Dynamic loss scaling as ein ops --------------------===//
//
// GradScaler.update() (torch's _amp_update_scale_) on scalars, with
// selects instead of branches so the step stays one program.
//
//===----------------------------------------------------------------------===//
#include "passes/LossScale.h"

#include <cmath>

namespace mlir::ein::train {

Value lossScaleInUse(Emitter &e, Value raw, double init) {
  ArrayAttr none = e.noAxes();
  Value started = e.cmp(CmpPredicate::gt, raw, e.constant(0.0), none);
  return e.select(started, raw, e.constant(init), none);
}

ScalerState nextScalerState(Emitter &e, const LossScaleConfig &config, Value finite,
                            const ScalerState &now) {
  ArrayAttr none = e.noAxes();
  Value zero = e.constant(0.0), one = e.constant(1.0);
  ScalerState next;
  Value good = e.add(now.goodSteps, one, none);
  if (config.dynamic) {
    Value grown = e.mul(now.scale, e.constant(config.growth), none);
    Value grownFinite = e.cmp(CmpPredicate::lt, grown, e.constant(INFINITY), none);
    grown = e.select(grownFinite, grown, now.scale, none);
    Value due = e.cmp(CmpPredicate::ge, good, e.constant(double(config.interval)), none);
    Value scaleIfFinite = e.select(due, grown, now.scale, none);
    Value goodIfFinite = e.select(due, zero, good, none);
    Value backedOff = e.mul(now.scale, e.constant(config.backoff), none);
    next.scale = e.select(finite, scaleIfFinite, backedOff, none);
    next.goodSteps = e.select(finite, goodIfFinite, zero, none);
  } else {
    next.scale = now.scale;
    next.goodSteps = e.select(finite, good, zero, none);
  }
  Value skipped = e.add(now.skippedSteps, one, none);
  next.skippedSteps = e.select(finite, now.skippedSteps, skipped, none);
  return next;
}

} // namespace mlir::ein::train
