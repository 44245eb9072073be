//===- Pipelines.cpp - Named pass pipelines and registration --------------===//
//
// `ein-build-train-step`: the frozen params (ein-freeze-params), the precision
// policy on @forward (ein-mixed-precision),
// the fp8 setting's contractions (ein-fp8-contractions, passes/Fp8Contractions.h),
// the tables that depend only on dims as constants (ein-fold-constants),
// then @forward → @grad → @train_step (and, accumulating
// over micro-batches, @accumulate_grad), then canonicalize
// and CSE, then the remat policy (ein-remat). The one pipeline `einc` runs to build the training
// step; ein-opt runs it by name with the same options.
//
//===----------------------------------------------------------------------===//
#include "passes/Fp8Contractions.h"
#include "passes/Passes.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::ein {

void buildTrainStepPipeline(OpPassManager &pm, const TrainStepPipelineOptions &o) {
  // The frozen params first: no pass after trains them.
  if (!o.freeze.empty()) {
    EinFreezeParamsOptions freeze;
    freeze.freeze = o.freeze;
    pm.addPass(createEinFreezeParams(freeze));
  }
  // Then: the backward, the optimizer and remat see ordinary IR with casts.
  if (o.precision != "fp32") {
    EinMixedPrecisionOptions precision;
    precision.policy = o.precision;
    pm.addPass(createEinMixedPrecision(precision));
  }
  if (o.fp8 != "none") // fp8 contractions, on the policy's types
    pm.addPass(createEinFp8Contractions(o.fp8));
  // Tables that depend only on dims (RoPE's): constants, before the
  // backward reads them.
  pm.addNestedPass<func::FuncOp>(createEinFoldConstants());
  const bool scaling = o.lossScaling != "none";
  EinAutodiffOptions autodiff;
  autodiff.lossScale = scaling;
  pm.addPass(createEinAutodiff(autodiff));
  EinTrainStepOptions step;
  step.optimizer = o.optimizer;
  step.beta1 = o.beta1;
  step.beta2 = o.beta2;
  step.eps = o.eps;
  step.weightDecay = o.weightDecay;
  step.decay = o.decay;
  step.noDecay = o.noDecay;
  step.lrScale = o.lrScale;
  step.momentum = o.momentum;
  step.clip = o.clip;
  step.narrowUpdate = o.narrowUpdate;
  step.lossScaling = o.lossScaling;
  step.lossScaleInit = o.lossScaleInit;
  step.lossScaleGrowth = o.lossScaleGrowth;
  step.lossScaleBackoff = o.lossScaleBackoff;
  step.lossScaleInterval = o.lossScaleInterval;
  pm.addPass(createEinTrainStep(step));
  if (o.microBatches > 1) {
    EinAccumulateGradOptions accumulate;
    accumulate.microBatches = o.microBatches;
    accumulate.lossScaleInit = o.lossScaleInit;
    pm.addPass(createEinAccumulateGrad(accumulate));
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // The default plan: what the backward's own kernels can recompute is not
  // saved (before fusion, which gives the clones to those kernels).
  pm.addNestedPass<func::FuncOp>(createEinRecomputeInKernels());
  // Last: the plan is made on the IR the backends compile (fusion aside).
  if (o.remat != "none") {
    EinRematOptions remat;
    remat.policy = o.remat;
    remat.every = o.rematEvery;
    remat.namesToKeep = o.rematNames;
    pm.addPass(createEinRemat(remat));
  }
}

void registerEinPassesAndPipelines() {
  registerEinPasses();
  registerEinFp8ContractionsPass();
  PassPipelineRegistration<TrainStepPipelineOptions>(
      "ein-build-train-step",
      "autodiff, clipping and the optimizer update: @forward -> @grad -> @train_step",
      buildTrainStepPipeline);
}

} // namespace mlir::ein
