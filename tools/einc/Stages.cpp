//===- Stages.cpp - The compilation stages einc runs after the front end --===//
#include "Stages.h"

#include "passes/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace einc {

LogicalResult buildGrad(ModuleOp module) {
  PassManager pm(module.getContext());
  pm.addPass(ein::createEinAutodiff());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  return pm.run(module);
}

bool fusionEnabled(const einrt::TrainSettings &settings) { return settings.fusion != "off"; }

LogicalResult applyFusion(ModuleOp module, const einrt::TrainSettings &settings) {
  if (!fusionEnabled(settings))
    return success();
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(ein::createEinFuseElementwise());
  return pm.run(module);
}

LogicalResult buildTrainStep(ModuleOp module, const einrt::TrainSettings &settings) {
  // The settings become pass options here, in tools/: passes know no flags.
  ein::TrainStepPipelineOptions options;
  options.optimizer = settings.optimizer;
  options.beta1 = settings.beta1;
  options.beta2 = settings.beta2;
  options.eps = settings.eps;
  options.weightDecay = settings.weightDecay;
  options.decay = settings.decay;
  options.momentum = settings.momentum;
  options.clip = settings.clip;
  PassManager pm(module.getContext());
  ein::buildTrainStepPipeline(pm, options);
  return pm.run(module);
}

} // namespace einc
