//===- Passes.h - einc's passes and pipelines -------------------*- C++ -*-===//
#ifndef EINC_PASSES_PASSES_H
#define EINC_PASSES_PASSES_H

#include "ir/EinOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <memory>

namespace mlir::ein {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// On a gradient result of @grad (ein-autodiff): the loss does not depend on
/// that param; ein-train-step leaves it and its optimizer state unchanged.
constexpr llvm::StringLiteral kUnusedGradient = "ein.unused";

/// On a param argument (ein-freeze-params; the front end's `buffer`): never
/// trained. ein-autodiff computes no gradient for it, ein-train-step gives
/// it no optimizer state and returns it unchanged.
constexpr llvm::StringLiteral kFrozenParam = "ein.frozen";

/// Options of the `ein-build-train-step` pipeline (those of ein-train-step).
struct TrainStepPipelineOptions : public PassPipelineOptions<TrainStepPipelineOptions> {
  Option<std::string> optimizer{*this, "optimizer", llvm::cl::desc("adamw | adam | sgd | adagrad"),
                                llvm::cl::init("adamw")};
  Option<double> beta1{*this, "beta1", llvm::cl::desc("first-moment decay"), llvm::cl::init(0.9)};
  Option<double> beta2{*this, "beta2", llvm::cl::desc("second-moment decay"),
                       llvm::cl::init(0.999)};
  Option<double> eps{*this, "eps", llvm::cl::desc("epsilon (-1: torch's for the optimizer)"),
                     llvm::cl::init(-1)};
  Option<double> weightDecay{*this, "weight-decay",
                             llvm::cl::desc("weight decay (-1: torch's for the optimizer)"),
                             llvm::cl::init(-1)};
  Option<std::string> decay{*this, "decay", llvm::cl::desc("matrices | all"),
                            llvm::cl::init("matrices")};
  Option<std::string> noDecay{*this, "no-decay",
                              llvm::cl::desc("params that never decay: name patterns"),
                              llvm::cl::init("")};
  Option<std::string> freeze{*this, "freeze", llvm::cl::desc("params never trained: name patterns"),
                             llvm::cl::init("")};
  Option<std::string> lrScale{*this, "lr-scale",
                              llvm::cl::desc("learning-rate multipliers: pattern:factor, ..."),
                              llvm::cl::init("")};
  Option<double> momentum{*this, "momentum", llvm::cl::desc("SGD momentum"), llvm::cl::init(0)};
  Option<double> clip{*this, "clip", llvm::cl::desc("max gradient norm (0: off)"),
                      llvm::cl::init(1.0)};
  Option<std::string> narrowUpdate{
      *this, "narrow-update",
      llvm::cl::desc("a bf16/f16 param's f32 update stored: stochastic | nearest"),
      llvm::cl::init("stochastic")};
  // Loss scaling (ein-autodiff loss-scale, ein-train-step, ein-accumulate-grad).
  Option<std::string> lossScaling{*this, "loss-scaling", llvm::cl::desc("none | dynamic | static"),
                                  llvm::cl::init("none")};
  Option<double> lossScaleInit{*this, "loss-scale-init", llvm::cl::desc("the initial loss scale"),
                               llvm::cl::init(65536.0)};
  Option<double> lossScaleGrowth{*this, "loss-scale-growth",
                                 llvm::cl::desc("the scale's factor after interval good steps"),
                                 llvm::cl::init(2.0)};
  Option<double> lossScaleBackoff{*this, "loss-scale-backoff",
                                  llvm::cl::desc("the scale's factor after a non-finite step"),
                                  llvm::cl::init(0.5)};
  Option<int64_t> lossScaleInterval{*this, "loss-scale-interval",
                                    llvm::cl::desc("good steps before the scale grows"),
                                    llvm::cl::init(2000)};
  Option<int64_t> microBatches{*this, "micro-batches",
                               llvm::cl::desc("micro-batches per step (> 1: @accumulate_grad)"),
                               llvm::cl::init(1)};
  // ein-mixed-precision's (run first, on @forward; fp32: not run).
  Option<std::string> precision{*this, "precision",
                                llvm::cl::desc("fp32 | bf16-mixed (mixed) | fp16-mixed | bf16"),
                                llvm::cl::init("fp32")};
  // ein-fp8-contractions' (on @forward, after the precision policy; none: not run).
  Option<std::string> fp8{*this, "fp8", llvm::cl::desc("none | block | tensor"),
                          llvm::cl::init("none")};
  // ein-remat's (run last, on every function it rewrites; none: not run).
  Option<std::string> remat{*this, "remat",
                            llvm::cl::desc("none | full | every | sqrt | selective | names"),
                            llvm::cl::init("none")};
  Option<int64_t> rematEvery{*this, "remat-every",
                             llvm::cl::desc("every: keep the inputs of every K-th iteration"),
                             llvm::cl::init(0)};
  ListOption<std::string> rematNames{*this, "remat-names",
                                     llvm::cl::desc("names: the let-bound values to keep")};
};

/// ein-mixed-precision with the precision policy (unless fp32), then
/// @forward → @grad → @train_step (+ @apply_update; with micro-batches > 1
/// also @accumulate_grad), then canonicalize and CSE, then ein-remat with
/// the remat options (unless `none`).
void buildTrainStepPipeline(OpPassManager &pm, const TrainStepPipelineOptions &options);

/// Registers every einc pass and pipeline (for ein-opt and einc).
void registerEinPassesAndPipelines();

} // namespace mlir::ein

#endif // EINC_PASSES_PASSES_H
