//===- Stages.h - The compilation stages einc runs after the front end -*- C++ -*-===//
//
// `grad`: ein-autodiff (+ canonicalize, CSE). `step`: the ein-build-train-step
// pipeline with its options taken from the model's train settings (its
// `train { }` section with `--set` applied). `fusion`: ein-fuse-elementwise,
// unless the settings say `fusion = off`.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_EINC_STAGES_H
#define EINC_TOOLS_EINC_STAGES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include "runtime/TrainSettings.h"

namespace einc {

/// Adds @grad to the module.
mlir::LogicalResult buildGrad(mlir::ModuleOp module);
/// Adds @grad and @train_step to the module.
mlir::LogicalResult buildTrainStep(mlir::ModuleOp module, const einrt::TrainSettings &settings);

/// The `fusion` setting (on unless `fusion = off`).
bool fusionEnabled(const einrt::TrainSettings &settings);
/// With fusion on, runs ein-fuse-elementwise on every function (the CPU
/// backend then compiles each group as one kernel); else does nothing.
mlir::LogicalResult applyFusion(mlir::ModuleOp module, const einrt::TrainSettings &settings);

} // namespace einc

#endif // EINC_TOOLS_EINC_STAGES_H
