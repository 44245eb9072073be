//===- Stages.cpp - The compilation stages einc runs after the front end --===//
#include "Stages.h"

#include "passes/Fp8Contractions.h"
#include "passes/Passes.h"
#include "passes/TrainEntryLoc.h"
#include "runtime/base/RematPolicy.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace einc {
namespace {
/// The verifier runs once, on the stage's result, not after every pass (on
/// a large model it cost as much as the passes); a hook may turn the
/// per-pass verifier back on (the pipeline fuzzer's VerifyEachPass).
LogicalResult runWith(PassManager &pm, ModuleOp module, PassManagerHook hook) {
  pm.enableVerifier(false);
  if (hook)
    hook(pm);
  if (failed(pm.run(module)))
    return failure();
  return verify(module);
}
} // namespace

LogicalResult buildGrad(ModuleOp module, PassManagerHook hook) {
  PassManager pm(module.getContext());
  pm.addPass(ein::createEinAutodiff());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  return runWith(pm, module, hook);
}

LogicalResult applyPrecision(ModuleOp module, const einrt::TrainSettings &settings,
                             PassManagerHook hook) {
  if (settings.precision == "fp32" && settings.fp8 == "none")
    return success();
  PassManager pm(module.getContext());
  if (settings.precision != "fp32") {
    ein::EinMixedPrecisionOptions options;
    options.policy = settings.precision;
    pm.addPass(ein::createEinMixedPrecision(options));
  }
  if (settings.fp8 != "none") // as buildTrainStep's pipeline, after the policy
    pm.addPass(ein::createEinFp8Contractions(settings.fp8));
  return runWith(pm, module, hook);
}

bool fusionEnabled(const einrt::TrainSettings &settings) { return settings.fusion != "off"; }

LogicalResult applyFusion(ModuleOp module, const einrt::TrainSettings &settings,
                          PassManagerHook hook) {
  if (!fusionEnabled(settings))
    return success();
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(ein::createEinFuseElementwise());
  // `on`: the groups and GEMM epilogues; `all` (the default): and row
  // kernels; `elementwise`: the groups alone. Epilogues first: a row group never takes
  // a contraction's epilogue (docs/fusion.md).
  if (settings.fusion != "elementwise")
    pm.addNestedPass<func::FuncOp>(ein::createEinFuseEpilogues());
  if (settings.fusion == "all")
    pm.addNestedPass<func::FuncOp>(ein::createEinFuseRows());
  return runWith(pm, module, hook);
}

LogicalResult shardOptimizer(ModuleOp module, int64_t rank, int64_t ranks, PassManagerHook hook) {
  ein::EinShardOptimizerOptions options;
  options.rank = rank;
  options.ranks = ranks;
  PassManager pm(module.getContext());
  pm.addPass(ein::createEinShardOptimizer(options));
  return runWith(pm, module, hook);
}

LogicalResult buildTrainStep(ModuleOp module, const einrt::TrainSettings &settings,
                             PassManagerHook hook, bool lossScaling) {
  // The settings become pass options here, in tools/: passes know no flags.
  ein::TrainStepPipelineOptions options;
  options.optimizer = settings.optimizer;
  options.beta1 = settings.beta1;
  options.beta2 = settings.beta2;
  options.eps = settings.eps;
  options.weightDecay = settings.weightDecay;
  options.decay = settings.decay;
  options.noDecay = settings.noDecay;
  options.lrScale = settings.lrScale;
  options.freeze = settings.freeze;
  options.momentum = settings.momentum;
  options.clip = settings.clip;
  options.microBatches = settings.accumulate;
  options.fp8 = settings.fp8;
  options.precision = settings.precision;
  // fp16-mixed: dynamic loss scaling in the step (GradScaler's defaults).
  const einrt::PrecisionPolicy *policy = einrt::findPrecisionPolicy(settings.precision);
  if (policy && policy->lossScaling && lossScaling)
    options.lossScaling = "dynamic";
  PassManager pm(module.getContext());
  ein::buildTrainStepPipeline(pm, options);
  return runWith(pm, module, hook);
}

LogicalResult applyRemat(ModuleOp module, const einrt::TrainSettings &settings,
                         const RematDevice *device, const std::vector<std::string> &mustFit,
                         PassManagerHook hook) {
  // The remat setting (validated by the settings table) as ein-remat's
  // options; its errors point at `train { remat = ... }`, or name no line
  // when --set gave it.
  Location where = ein::trainEntryLoc(module, "remat", UnknownLoc::get(module.getContext()));
  einrt::Expected<einrt::RematPolicy> remat = einrt::parseRematPolicy(settings.remat);
  if (!remat.ok())
    return emitError(where) << "remat: " << remat.status().message();
  if (remat->kind == einrt::RematPolicy::Kind::None)
    return success();
  ein::EinRematOptions options;
  options.policy = remat->kindName();
  options.every = remat->every;
  options.namesToKeep = remat->names;
  options.mustFit = mustFit;
  if (remat->kind == einrt::RematPolicy::Kind::Budget) {
    if (remat->budgetPercent > 0 && !device)
      return emitError(where) << "remat: " << settings.remat
                              << " is a share of the device's memory, which is not known here: "
                                 "give the budget in bytes (budget:2GiB), or run it on the cpu "
                                 "backend (einc train, einc run: this machine's memory), or "
                                 "price it on a device (einc report --device h100)";
    options.budget = remat->budgetOn(device ? device->memoryBytes : 0);
  }
  // The recompute time every plan records, and budget: minimises (a device
  // without rates, as this machine's memory alone: the built-in h100's).
  if (device && device->matrixFlops > 0) {
    options.matrixFlops = device->matrixFlops;
    options.vectorFlops = device->vectorFlops;
    options.bandwidth = device->bandwidth;
    options.kernelLatency = device->kernelLatency;
    options.bf16MatrixFlops = device->bf16MatrixFlops;
    options.bf16VectorFlops = device->bf16VectorFlops;
    options.f16MatrixFlops = device->f16MatrixFlops;
    options.f16VectorFlops = device->f16VectorFlops;
  }
  PassManager pm(module.getContext());
  pm.addPass(ein::createEinRemat(options));
  return runWith(pm, module, hook);
}

} // namespace einc
