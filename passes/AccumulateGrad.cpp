//===- AccumulateGrad.cpp - @grad -> @accumulate_grad ---------------------===//
//
// Gradient accumulation in compiled code. From
//   @grad(inputs..., params...) -> (loss, grads...)
// builds
//   @accumulate_grad(inputs..., params..., loss_sum, grad_sums...)
//       -> (loss_sum', grad_sums'...)
// with x' = x + v / k for each of @grad's results v (k = micro-batches): the
// runtime zeroes the sums, runs it once per micro-batch feeding each result
// back into its argument, and hands the means to @apply_update. The sums are
// arguments of ein.kind "accumulator" named as @grad's results (the loss,
// then each param's name). @grad's body is cloned with its tags; the added
// scaling and additions are "backward" ops located at @grad's return.
// A loss-scaled @grad's last argument (ein.kind "loss_scale", the seed of
// its backward) becomes the loss scaler's state `loss_scale` (opt_state,
// read only: the trainer copies @apply_update's), the scale in use taken
// from it as ein-train-step does (passes/LossScale.h): the sums are of the
// scaled gradients, which @apply_update unscales and checks.
//
//===----------------------------------------------------------------------===//
#include "ir/EinBuilders.h"
#include "ir/EinOps.h"
#include "passes/Analysis.h"
#include "passes/LossScale.h"
#include "passes/Passes.h"
#include "runtime/base/LossScaleState.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>

namespace mlir::ein {
#define GEN_PASS_DEF_EINACCUMULATEGRAD
#include "passes/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;

namespace {

struct EinAccumulateGrad : mlir::ein::impl::EinAccumulateGradBase<EinAccumulateGrad> {
  using EinAccumulateGradBase::EinAccumulateGradBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto grad = module.lookupSymbol<func::FuncOp>(gradName);
    if (!grad || grad.isExternal()) {
      module.emitError("ein-accumulate-grad: no @") << gradName << " to accumulate";
      return signalPassFailure();
    }
    if (module.lookupSymbol(accumulateName)) {
      grad.emitError("ein-accumulate-grad: a symbol @") << accumulateName << " already exists";
      return signalPassFailure();
    }
    if (microBatches < 1) {
      grad.emitError("ein-accumulate-grad: micro-batches must be >= 1, got ")
          << int64_t(microBatches);
      return signalPassFailure();
    }
    if (!grad.getBody().hasOneBlock()) {
      grad.emitError("ein-accumulate-grad: @") << gradName << " must have a single block";
      return signalPassFailure();
    }
    FunctionType gradType = grad.getFunctionType();
    OpBuilder b(module.getContext());

    // Arguments: @grad's, then one accumulator per result, named after it.
    SmallVector<Type> argTypes(gradType.getInputs());
    SmallVector<DictionaryAttr> argAttrs, resultAttrs;
    for (unsigned i = 0; i < gradType.getNumInputs(); ++i)
      argAttrs.push_back(grad.getArgAttrDict(i) ? grad.getArgAttrDict(i) : b.getDictionaryAttr({}));
    unsigned last = gradType.getNumInputs() - 1;
    auto lastKind = gradType.getNumInputs() ? grad.getArgAttrOfType<StringAttr>(last, "ein.kind")
                                            : StringAttr();
    const bool seeded = lastKind && lastKind.getValue() == "loss_scale";
    if (seeded && !(lossScaleInit > 0 && lossScaleInit < INFINITY)) {
      grad.emitError("ein-accumulate-grad: loss-scale-init must be a finite number > 0");
      return signalPassFailure();
    }
    if (seeded)
      argAttrs[last] =
          b.getDictionaryAttr({b.getNamedAttr("ein.kind", b.getStringAttr("opt_state")),
                               b.getNamedAttr("ein.name", b.getStringAttr(einrt::kLossScaleName)),
                               b.getNamedAttr("ein.axes", b.getStrArrayAttr({}))});
    for (unsigned r = 0; r < gradType.getNumResults(); ++r) {
      auto type = dyn_cast<RankedTensorType>(gradType.getResult(r));
      if (!type || !isa<FloatType>(type.getElementType())) {
        grad.emitError("ein-accumulate-grad: result ")
            << r << " of @" << gradName << " is not a float tensor";
        return signalPassFailure();
      }
      argTypes.push_back(type);
      StringAttr name = grad.getResultAttrOfType<StringAttr>(r, "ein.name");
      SmallVector<NamedAttribute> attrs{
          b.getNamedAttr("ein.name", name ? name : b.getStringAttr("result" + std::to_string(r))),
          b.getNamedAttr("ein.kind", b.getStringAttr("accumulator"))};
      argAttrs.push_back(b.getDictionaryAttr(attrs));
      resultAttrs.push_back(grad.getResultAttrDict(r) ? grad.getResultAttrDict(r)
                                                      : b.getDictionaryAttr({}));
    }

    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    mb.setInsertionPointAfter(grad);
    auto fn = mb.create<func::FuncOp>(grad.getLoc(), accumulateName,
                                      b.getFunctionType(argTypes, gradType.getResults()));
    fn.setAllArgAttrs(argAttrs);
    fn.setAllResultAttrs(resultAttrs);
    Block *entry = fn.addEntryBlock();
    Block &gradBody = grad.getBody().front();
    IRMapping map;
    for (unsigned i = 0; i < gradType.getNumInputs(); ++i) {
      entry->getArgument(i).setLoc(gradBody.getArgument(i).getLoc());
      map.map(gradBody.getArgument(i), entry->getArgument(i));
    }
    OpBuilder fb = OpBuilder::atBlockEnd(entry);
    if (seeded) {
      mlir::ein::train::Emitter e(fb, gradBody.getArgument(last).getLoc());
      Value scale = mlir::ein::train::lossScaleInUse(e, entry->getArgument(last), lossScaleInit);
      for (Operation &op : *entry)
        op.setAttr(mlir::ein::kPhaseAttr,
                   b.getStringAttr("optimizer")); // the scaler's, as in @train_step
      map.map(gradBody.getArgument(last), scale);
    }
    for (Operation &op : gradBody.without_terminator())
      fb.clone(op, map);
    auto ret = cast<func::ReturnOp>(gradBody.getTerminator());
    Location at = ret.getLoc();
    auto backward = b.getStringAttr("backward");
    SmallVector<Value> results;
    for (auto [r, value] : llvm::enumerate(ret.getOperands())) {
      Value v = map.lookupOrDefault(value);
      BlockArgument sum = entry->getArgument(gradType.getNumInputs() + r);
      sum.setLoc(at);
      auto type = cast<RankedTensorType>(v.getType());
      ArrayAttr axes = grad.getResultAttrOfType<ArrayAttr>(r, "ein.axes");
      Operation *before = entry->empty() ? nullptr : &entry->back();
      if (microBatches > 1) {
        // v / k as v * (1/k): one rounding, as the mean of the micro-batches.
        Value scale = mlir::ein::buildSplat(fb, at, type, 1.0 / double(microBatches), axes);
        v = fb.create<mlir::ein::MulOp>(at, type, v, scale, axes);
      }
      Value next = fb.create<mlir::ein::AddOp>(at, type, sum, v, axes);
      for (Operation *op = before ? before->getNextNode() : &entry->front(); op;
           op = op->getNextNode())
        op->setAttr(mlir::ein::kPhaseAttr, backward);
      results.push_back(next);
    }
    fb.create<func::ReturnOp>(at, results);
  }
};

} // namespace
