//===- Stages.h - The compilation stages einc runs after the front end -*- C++ -*-===//
//
// `grad`: ein-autodiff (+ canonicalize, CSE). `step`: the ein-build-train-step
// pipeline with its options taken from the model's train settings (its
// `train { }` section with `--set` applied). `fusion`: ein-fuse-elementwise,
// unless the settings say `fusion = off`. `remat`: ein-remat with the remat
// setting, after fusion.
//
// A library (EincStages) so that tests run exactly einc's stages: the
// pipeline fuzzer (test/fuzz-pipeline) passes a hook that instruments each
// stage's PassManager (a verifier after every pass, naming the pass).
// Without one, a stage verifies its result once, at its end.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_DRIVER_STAGES_H
#define EINC_TOOLS_DRIVER_STAGES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LogicalResult.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include "runtime/base/TrainSettings.h"

#include <string>
#include <vector>

namespace einc {

/// Called on the PassManager of a stage after its passes are added and
/// before it runs (null: nothing).
using PassManagerHook = llvm::function_ref<void(mlir::PassManager &)>;

/// Adds @grad to the module.
mlir::LogicalResult buildGrad(mlir::ModuleOp module, PassManagerHook hook = nullptr);
/// The `precision` setting: ein-mixed-precision on @forward (nothing for
/// fp32, or for a @forward it already rewrote), then the `fp8` setting's
/// ein-fp8-contractions (nothing for none; a contraction already quantised
/// is left alone). buildTrainStep runs both first.
mlir::LogicalResult applyPrecision(mlir::ModuleOp module, const einrt::TrainSettings &settings,
                                   PassManagerHook hook = nullptr);
/// ZeRO-1: @apply_update keeps only rank `rank`'s (of `ranks`) params'
/// updates and optimizer state (ein-shard-optimizer).
mlir::LogicalResult shardOptimizer(mlir::ModuleOp module, int64_t rank, int64_t ranks,
                                   PassManagerHook hook = nullptr);
/// Adds @grad and @train_step to the module (after the precision policy).
/// `lossScaling` false: none even where the precision policy has it (the
/// step then trains without it: for `einc run --mode grad`, whose @grad is
/// the loss's plain gradient).
mlir::LogicalResult buildTrainStep(mlir::ModuleOp module, const einrt::TrainSettings &settings,
                                   PassManagerHook hook = nullptr, bool lossScaling = true);

/// The `remat` setting (runtime/base/RematPolicy.h): ein-remat on @grad,
/// @train_step and @accumulate_grad, last, after fusion when fusion runs
/// (the plan then sees the kernels the backend compiles: a clone goes
/// before a whole kernel, clones of one group form a kernel of their own);
/// nothing for `none`, or for a function it already rewrote.
/// The device recompute time is predicted on (its profile's rates for f32
/// — tf32's under that setting — bf16 and f16, its launch latency: what
/// `budget:` minimises) and `budget:N%` takes N% of.
struct RematDevice {
  double memoryBytes = 0;
  double matrixFlops = 0, vectorFlops = 0, bandwidth = 0;
  double kernelLatency = 0; // seconds per kernel launch (a clone kernel pays one)
  /// The rates of 16-bit floats (0: the f32 ones above).
  double bf16MatrixFlops = 0, bf16VectorFlops = 0, f16MatrixFlops = 0, f16VectorFlops = 0;
};
/// Without `device`, time is predicted on the built-in h100 and a
/// percentage is an error (at `train { remat = ... }` when the file sets it). `mustFit` (for
/// `budget:`): the functions that will run, which a plan must fit (empty: all); the others take the
/// plan of least peak when none fits.
mlir::LogicalResult applyRemat(mlir::ModuleOp module, const einrt::TrainSettings &settings,
                               const RematDevice *device = nullptr,
                               const std::vector<std::string> &mustFit = {},
                               PassManagerHook hook = nullptr);

/// The `fusion` setting (on unless `fusion = off`).
bool fusionEnabled(const einrt::TrainSettings &settings);
/// With fusion on, runs ein-fuse-elementwise on every function (the CPU
/// backend then compiles each group as one kernel); else does nothing.
mlir::LogicalResult applyFusion(mlir::ModuleOp module, const einrt::TrainSettings &settings,
                                PassManagerHook hook = nullptr);

} // namespace einc

#endif // EINC_TOOLS_DRIVER_STAGES_H
