//===- Stages.h - The compilation stages einc runs after the front end -*- C++ -*-===//
//
// `grad`: ein-autodiff (+ canonicalize, CSE). `step`: the ein-build-train-step
// pipeline with its options taken from the model's `train { }` settings
// (module attribute `ein.train`, where `--set` already applied). `fusion`:
// ein-fuse-elementwise, unless the settings say `fusion = off`.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_EINC_STAGES_H
#define EINC_TOOLS_EINC_STAGES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

namespace einc {

/// The learning rate `einc run --step` uses: the model's `lr`, else 1e-3.
double learningRate(mlir::ModuleOp module);

/// Adds @grad to the module.
mlir::LogicalResult buildGrad(mlir::ModuleOp module);
/// Adds @grad and @train_step to the module.
mlir::LogicalResult buildTrainStep(mlir::ModuleOp module);

/// The `fusion` setting (on unless `fusion = off`).
bool fusionEnabled(mlir::ModuleOp module);
/// With fusion on, runs ein-fuse-elementwise on every function (the CPU
/// backend then compiles each group as one kernel); else does nothing.
mlir::LogicalResult applyFusion(mlir::ModuleOp module);

} // namespace einc

#endif // EINC_TOOLS_EINC_STAGES_H
