//===- Stages.cpp - The compilation stages einc runs after the front end --===//
#include "Stages.h"

#include "passes/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace einc {
namespace {

DictionaryAttr trainSettings(ModuleOp module) {
  return module->getAttrOfType<DictionaryAttr>("ein.train");
}

/// The train settings become pass options here, in tools/: passes know no flags.
void readOptions(ModuleOp module, ein::TrainStepPipelineOptions &o) {
  DictionaryAttr d = trainSettings(module);
  if (!d)
    return;
  auto real = [&](llvm::StringRef key, auto &option) {
    if (auto f = d.getAs<FloatAttr>(key))
      option = f.getValueAsDouble();
  };
  auto word = [&](llvm::StringRef key, auto &option) {
    if (auto s = d.getAs<StringAttr>(key))
      option = s.str();
  };
  word("optimizer", o.optimizer);
  real("beta1", o.beta1);
  real("beta2", o.beta2);
  real("eps", o.eps);
  real("weight_decay", o.weightDecay);
  word("decay", o.decay);
  real("momentum", o.momentum);
  real("clip", o.clip);
}


} // namespace

double learningRate(ModuleOp module) {
  if (DictionaryAttr d = trainSettings(module))
    if (auto f = d.getAs<FloatAttr>("lr"))
      return f.getValueAsDouble();
  return 1e-3;
}

LogicalResult buildGrad(ModuleOp module) {
  PassManager pm(module.getContext());
  pm.addPass(ein::createEinAutodiff());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  return pm.run(module);
}

bool fusionEnabled(ModuleOp module) {
  if (DictionaryAttr d = trainSettings(module))
    if (auto s = d.getAs<StringAttr>("fusion"))
      return s.getValue() != "off";
  return true;
}

LogicalResult applyFusion(ModuleOp module) {
  if (!fusionEnabled(module))
    return success();
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(ein::createEinFuseElementwise());
  return pm.run(module);
}

LogicalResult buildTrainStep(ModuleOp module) {
  ein::TrainStepPipelineOptions options;
  readOptions(module, options);
  PassManager pm(module.getContext());
  ein::buildTrainStepPipeline(pm, options);
  return pm.run(module);
}

} // namespace einc
