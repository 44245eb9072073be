//===- Autodiff.cpp - Reverse-mode differentiation: @forward -> @grad -----===//
//
// `ein-autodiff` clones `@forward(inputs..., params...) -> (loss, outputs...)`
// into `@grad(inputs..., params...) -> (loss, d loss / d param...)` and
// appends the backward: the ops of the forward in reverse, each
// differentiated by its GradientOpInterface rule (ir/EinGradients.cpp,
// ir/EinElementwiseGradients.cpp); a
// softmax, decomposed by the front end, is differentiated whole from its
// output (passes/SoftmaxGradient.h).
//
// Activity analysis decides which gradients exist: a value is active when it
// is a float tensor that depends on a param ("varied") and the loss depends
// on it through float values ("useful"). A rule is asked only for the
// gradients of its active operands, so nothing flows into inputs and no op
// is emitted for a gradient nobody needs. Gradients of a value used several
// times are summed (ein.add; the gradients of disjoint slices of one value
// are one ein.concat: buildGradientSum, ir/EinBuilders.h). Params the loss
// does not depend on get zeros. Every op of @grad carries a discardable
// `ein.phase`: "forward" on the cloned forward ops, "backward" on every op
// the backward creates; the gradient ops of a forward op (and the adds that
// accumulate into its operands' gradients) copy its `ein.layer`. With
// `loss-scale` the backward is seeded with a last argument `loss_scale`
// (f32) instead of 1, so the gradients are those of loss * loss_scale (loss
// scaling: the scale moves small gradients of narrow values out of the
// subnormals; ein-train-step unscales them). See docs/autodiff.md and
// docs/analyses.md.
//
//===----------------------------------------------------------------------===//

#include "passes/Analysis.h"
#include "passes/Passes.h"

#include "ir/EinBuilders.h"
#include "passes/SoftmaxGradient.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINAUTODIFF
#include "passes/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {

constexpr StringLiteral kLayer = "ein.layer";

/// Tags the ops after `after` (the block's first op when null) up to, not
/// including, `end` with `layer` (when non-null) unless they have one.
void tagLayer(Block &block, Operation *after, Operation *end, Attribute layer) {
  if (!layer)
    return;
  Operation *op = after ? after->getNextNode() : &block.front();
  for (; op && op != end; op = op->getNextNode())
    if (!op->hasAttr(kLayer))
      op->setAttr(kLayer, layer);
}

bool isFloatTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

/// The values that get a gradient: float tensors that depend on a param and
/// on which the loss depends through float values.
DenseSet<Value> findActiveValues(func::FuncOp fn, ArrayRef<Value> params, Value loss) {
  DenseSet<Value> varied;
  for (Value param : params)
    if (isFloatTensor(param))
      varied.insert(param);
  Block &body = fn.front();
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getOperands(), [&](Value v) { return varied.contains(v); }))
      for (Value result : op.getResults())
        if (isFloatTensor(result))
          varied.insert(result);

  DenseSet<Value> useful;
  if (isFloatTensor(loss))
    useful.insert(loss);
  for (Operation &op : llvm::reverse(body.without_terminator()))
    if (llvm::any_of(op.getResults(), [&](Value v) { return useful.contains(v); }))
      for (Value operand : op.getOperands())
        if (isFloatTensor(operand))
          useful.insert(operand);

  DenseSet<Value> active;
  for (Value v : varied)
    if (useful.contains(v))
      active.insert(v);
  return active;
}

struct EinAutodiff : public ein::impl::EinAutodiffBase<EinAutodiff> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(run()))
      signalPassFailure();
  }

  LogicalResult run();
  /// Appends the backward of `grad`'s body before its terminator; fills
  /// `paramGrads` (one per param, null: zero gradient).
  LogicalResult buildBackward(func::FuncOp grad, ArrayRef<Value> params, Value loss, Value seed,
                              SmallVectorImpl<Value> &paramGrads);
};

LogicalResult EinAutodiff::run() {
  ModuleOp module = getOperation();
  auto forward = module.lookupSymbol<func::FuncOp>(forwardName);
  if (!forward || forward.isExternal())
    return module.emitError() << "ein-autodiff: no function @" << forwardName
                              << " to differentiate";
  auto lossType = forward.getNumResults() == 0
                      ? RankedTensorType()
                      : dyn_cast<RankedTensorType>(forward.getResultTypes()[0]);
  if (!lossType || lossType.getRank() != 0 || !isa<FloatType>(lossType.getElementType())) {
    InFlightDiagnostic diag = forward.emitError() << "ein-autodiff: result 0 of @" << forwardName
                                                  << " must be the loss, a scalar float tensor";
    if (forward.getNumResults() == 0)
      diag << ", but it has no results";
    else
      diag << ", got " << forward.getResultTypes()[0];
    return diag;
  }
  if (module.lookupSymbol(gradName))
    return forward.emitError() << "ein-autodiff: a symbol @" << gradName << " already exists";

  // @grad starts as a copy of @forward (argument attributes included).
  OpBuilder b(forward);
  b.setInsertionPointAfter(forward);
  auto grad = cast<func::FuncOp>(b.clone(*forward));
  grad.setSymName(gradName);
  Block &body = grad.front();
  Operation *oldReturn = body.getTerminator();
  Value loss = oldReturn->getOperand(0);
  MLIRContext *ctx = &getContext();
  auto forwardPhase = StringAttr::get(ctx, "forward");
  for (Operation &op : body.without_terminator())
    op.setAttr(kPhaseAttr, forwardPhase);

  SmallVector<Value> params;
  for (BlockArgument arg : grad.getArguments()) {
    auto kind = grad.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "ein.kind");
    // A frozen param (ein-freeze-params, a `buffer`) is a constant here.
    if (kind && kind.getValue() == "param" && !grad.getArgAttr(arg.getArgNumber(), kFrozenParam))
      params.push_back(arg);
  }

  // Loss scaling: d(loss · s)/d loss = s seeds the backward.
  Value seed;
  if (lossScale) {
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    NamedAttribute attrs[] = {b.getNamedAttr("ein.kind", b.getStringAttr("loss_scale")),
                              b.getNamedAttr("ein.name", b.getStringAttr("loss_scale"))};
    grad.insertArgument(grad.getNumArguments(), scalar, b.getDictionaryAttr(attrs),
                        oldReturn->getLoc());
    seed = grad.getArgument(grad.getNumArguments() - 1);
  }

  SmallVector<Value> paramGrads;
  if (failed(buildBackward(grad, params, loss, seed, paramGrads))) {
    grad.erase();
    return failure();
  }

  // The new results: (loss, one gradient per param); zeros where none flows.
  b.setInsertionPoint(oldReturn);
  SmallVector<Value> results{loss};
  SmallVector<DictionaryAttr> resultAttrs{
      DictionaryAttr::get(ctx, {b.getNamedAttr("ein.name", b.getStringAttr("loss"))})};
  for (auto [param, g] : llvm::zip_equal(params, paramGrads)) {
    unsigned argNo = cast<BlockArgument>(param).getArgNumber();
    SmallVector<NamedAttribute> attrs;
    if (!g) {
      // The loss does not depend on it: as PyTorch leaves such a param's
      // .grad None and its optimizers skip it, the optimizer step leaves it
      // (and its state) as it is, weight decay included (ein-train-step
      // reads `ein.unused`). Almost always a slip in the model: say so.
      g = buildSplat(b, oldReturn->getLoc(), param.getType(), 0.0,
                     GradientOpInterface::getAxisNames(param));
      attrs.push_back(b.getNamedAttr(kUnusedGradient, b.getUnitAttr()));
      auto name = grad.getArgAttrOfType<StringAttr>(argNo, "ein.name");
      emitWarning(param.getLoc())
          << "param '" << (name ? name.getValue() : StringRef("?"))
          << "' does not reach the loss: its gradient is zero, and training leaves it as "
             "initialised";
    }
    results.push_back(g);
    if (auto name = grad.getArgAttr(argNo, "ein.name"))
      attrs.push_back(b.getNamedAttr("ein.name", name));
    attrs.push_back(b.getNamedAttr("ein.kind", b.getStringAttr("grad")));
    resultAttrs.push_back(DictionaryAttr::get(ctx, attrs));
  }
  b.create<func::ReturnOp>(oldReturn->getLoc(), results);
  oldReturn->erase();
  grad.setFunctionType(
      FunctionType::get(ctx, grad.getArgumentTypes(), ValueRange(results).getTypes()));
  grad.setAllResultAttrs(resultAttrs);

  // Everything not cloned from @forward belongs to the backward.
  auto backwardPhase = StringAttr::get(ctx, "backward");
  for (Operation &op : body.without_terminator())
    if (!op.hasAttr(kPhaseAttr))
      op.setAttr(kPhaseAttr, backwardPhase);

  // The stop_gradients (their rule: no gradient) have done their job: each
  // is its input from here on (in @forward too), so nothing after autodiff
  // sees them.
  eraseStopGradients(module);

  // Drop what only the forward's extra outputs needed.
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
  return success();
}

LogicalResult EinAutodiff::buildBackward(func::FuncOp grad, ArrayRef<Value> params, Value loss,
                                         Value seed, SmallVectorImpl<Value> &paramGrads) {
  Block &body = grad.front();
  Operation *terminator = body.getTerminator();
  DenseSet<Value> active = findActiveValues(grad, params, loss);
  SmallVector<Operation *> forwardOps;
  for (Operation &op : body.without_terminator())
    forwardOps.push_back(&op);

  OpBuilder b(terminator);
  DenseMap<Value, Value> grads;
  if (active.contains(loss)) {
    if (!seed)
      grads[loss] = buildSplat(b, loss.getLoc(), loss.getType(), 1.0, b.getArrayAttr({}));
    else if (seed.getType() == loss.getType())
      grads[loss] = seed;
    else // a narrow loss: the scale rounded to its type
      grads[loss] = b.create<CastOp>(loss.getLoc(), loss.getType(), seed, b.getArrayAttr({}));
  }

  // d value += contribution (a second use adds).
  auto accumulate = [&](Value value, Value contribution) {
    Value &slot = grads[value];
    slot = slot ? buildGradientSum(b, contribution.getLoc(), slot, contribution,
                                   GradientOpInterface::getAxisNames(value))
                : contribution;
  };

  for (Operation *op : llvm::reverse(forwardOps)) {
    if (op->getNumResults() != 1)
      continue;
    Value dY = grads.lookup(op->getResult(0));
    if (!dY)
      continue;
    SmallVector<bool> need;
    for (Value operand : op->getOperands())
      need.push_back(active.contains(operand));
    if (!llvm::is_contained(need, true))
      continue;
    // A softmax is differentiated whole, from its output (SoftmaxGradient.h):
    // the ops inside it get no gradient, so their rules never run.
    if (std::optional<SoftmaxMatch> softmax = matchSoftmax(op)) {
      if (!active.contains(softmax->input))
        continue;
      Operation *before = terminator->getPrevNode();
      accumulate(softmax->input, buildSoftmaxGradient(b, op->getLoc(), *softmax, dY));
      tagLayer(body, before, terminator, op->getAttr(kLayer));
      continue;
    }
    auto rule = dyn_cast<GradientOpInterface>(op);
    if (!rule)
      return op->emitError() << "ein-autodiff: no gradient rule for '" << op->getName() << "'";
    SmallVector<Value> operandGrads;
    // The ops this forward op's gradient creates (rule and accumulation)
    // are those between `before` and the terminator; they get its layer.
    Operation *before = terminator->getPrevNode();
    auto tagNew =
        llvm::make_scope_exit([&] { tagLayer(body, before, terminator, op->getAttr(kLayer)); });
    if (failed(rule.buildGradient(b, dY, need, operandGrads)))
      return failure();
    if (operandGrads.size() != op->getNumOperands())
      return op->emitError() << "ein-autodiff: the gradient rule returned " << operandGrads.size()
                             << " gradients for " << op->getNumOperands() << " operands";
    for (auto [i, operand, g] : llvm::enumerate(op->getOperands(), operandGrads)) {
      if (!g || !need[i])
        continue;
      if (g.getType() != operand.getType())
        return op->emitError() << "ein-autodiff: the gradient of operand " << i << " has type "
                               << g.getType() << ", expected " << operand.getType();
      accumulate(operand, g);
    }
  }

  for (Value param : params)
    paramGrads.push_back(grads.lookup(param));
  return success();
}

} // namespace
