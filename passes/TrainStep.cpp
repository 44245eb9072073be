//===- TrainStep.cpp - @grad + clipping + optimizer -> @train_step --------===//
//
// Builds
//   @train_step(inputs..., params..., opt_state..., step, lr)
//       -> (loss, grad_norm, new params..., new opt_state...)
// and
//   @apply_update(params..., grads..., opt_state..., step, lr)
//       -> (grad_norm, new params..., new opt_state...)
// from `@grad(inputs..., params...) -> (loss, grads...)`: @grad's body is
// cloned, the gradients are clipped by their global L2 norm
// (torch.nn.utils.clip_grad_norm_), then the optimizer rule
// (passes/Optimizers.h) emits each param's update. @apply_update does the
// same clipping and update on gradients given as arguments (the runtime
// accumulates them over micro-batches with @grad). docs/train-step.md has
// the signature and the equations.
//
// Tags: the cloned @grad ops keep their `ein.phase` ("forward"/"backward")
// and `ein.layer`; every op this pass adds (clipping, optimizer) gets
// `ein.phase = "optimizer"`, and the ops of one param's clipping and update
// (constants aside) get the param's layer: its name up to the last '.'
// ("layer.3" for "layer.3.w_qkv"; none for a top-level param).
//
// Locations: the ops of one param's clipping and update are located at the
// param (its @grad argument's location: its declaration in the model file).
// The shared ones are located where the model asks for them, as the front
// end records it in the module's location (debug info, like every location):
// fused[FILE:1:1, "clip"(FILE:L:C), "optimizer"(FILE:L:C), ...], one named
// part per `train { }` entry. The global norm and clipping scalars go to
// `clip`, the optimizer's shared scalars and constants to `optimizer`; where
// the section sets no such key, to @grad's return (the `minimize`).
//
//===----------------------------------------------------------------------===//
#include "passes/Analysis.h"
#include "passes/Dropout.h"
#include "passes/LossScale.h"
#include "passes/Optimizers.h"
#include "passes/TrainEntryLoc.h"
#include "runtime/base/LossScaleState.h"
#include "runtime/base/ParamGroups.h"
#include "runtime/base/TrainSettings.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "passes/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <map>

namespace mlir::ein {
#define GEN_PASS_DEF_EINTRAINSTEP
#include "passes/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein::train;

namespace {

/// A double as diagnostics print it: "1", "-0.5", "1e-08".
std::string fmtNumber(double v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%g", v);
  return os.str();
}

/// One param of @grad.
struct Param {
  unsigned argIndex; // in @grad's arguments
  Location loc;      // its @grad argument's: the declaration
  StringAttr name;
  RankedTensorType type;
  ArrayAttr axes; // its `ein.axes`, when it names every dim; else null
  bool decays = false;
  double lrScale = 1;  // the lr_scale setting's factor (runtime/base/ParamGroups.h)
  bool unused = false; // the loss does not depend on it (kUnusedGradient)
};

/// The layer of a param: its name up to the last '.', or "" (top level).
StringRef paramLayer(StringRef name) {
  size_t dot = name.rfind('.');
  return dot == StringRef::npos ? StringRef() : name.take_front(dot);
}

/// Tags the ops of `block` after `after` (from the front when null) with
/// `ein.layer = layer`, constants (shared by all params) aside.
void tagLayer(Block &block, Operation *after, StringRef layer) {
  if (layer.empty())
    return;
  auto attr = StringAttr::get(block.getParentOp()->getContext(), layer);
  Operation *op = after ? after->getNextNode() : &block.front();
  for (; op; op = op->getNextNode())
    if (!isa<ein::ConstantOp>(op) && !op->hasAttr("ein.layer"))
      op->setAttr("ein.layer", attr);
}

/// Where the ops shared by all params go (see the file comment).
struct SharedLocs {
  Location norm;      // the global gradient norm and the clipping scalars
  Location optimizer; // the optimizer's shared scalars and every constant
};

/// `type` with f32 elements: the type of a param's update and state.
RankedTensorType f32Like(RankedTensorType type) {
  return RankedTensorType::get(type.getShape(), Float32Type::get(type.getContext()));
}

/// A new param value computed in f32, stored into the param's narrow type
/// `type`: rounded stochastically with the rank-0 i32 `seed`, or to nearest
/// when `seed` is null.
Value storeNarrow(Emitter &e, Value x, RankedTensorType type, Value seed, ArrayAttr axes) {
  if (!seed)
    return e.castTo(x, type.getElementType(), axes);
  Value seeds = e.broadcastTo(seed, type.getShape(), axes);
  return e.stochasticRound(x, seeds, type.getElementType(), axes);
}

/// What emitUpdate produces.
struct Updated {
  Value gradNorm;
  SmallVector<Value> newParams, newState;
  ScalerState newScaler; // loss scaling only

  /// The update's results in the order @train_step and @apply_update
  /// return them: grad_norm, params'..., opt_state'..., [scaler'...].
  void appendTo(SmallVectorImpl<Value> &results, bool scaling) const {
    results.push_back(gradNorm);
    results.append(newParams);
    results.append(newState);
    if (scaling)
      results.append({newScaler.scale, newScaler.goodSteps, newScaler.skippedSteps});
  }
};

/// The step's inputs to emitUpdate besides the params and gradients.
struct StepInputs {
  ArrayRef<Value> state; // `slotCount` values per param, param-major
  Value step, lr;
  const ScalerState *scaler = nullptr; // loss scaling: the scale in use and the counts
};

/// The update's options.
struct UpdateOptions {
  const OptimizerRule &rule;
  const Hyper &hyper;
  size_t slotCount;
  double clip;
  bool stochastic;                    // narrow params: stochastic rounding of the new value
  const LossScaleConfig *lossScaling; // null: none
};

/// Emits, at the end of `entry`, global-norm clipping of `grads` (the
/// gradients of `params`, whose current values are `paramValues`) and the
/// optimizer's update of every param: the part @train_step and
/// @apply_update share. Everything is computed in f32: the gradients (and
/// narrow params) are cast up, a narrow param's new value rounded back.
/// With loss scaling the gradients are first unscaled, and a step whose
/// gradients are not all finite keeps the params and the state.
Updated emitUpdate(OpBuilder &ob, const SharedLocs &locs, Block &block, ArrayRef<Param> params,
                   ArrayRef<Value> paramValues, ArrayRef<Value> grads, const StepInputs &in,
                   const UpdateOptions &o) {
  Block *entry = &block;
  Builder b(ob.getContext());
  Type f32 = b.getF32Type();
  Emitter e(ob, locs.optimizer);
  ArrayAttr none = e.noAxes();
  Updated out;

  // Unscaling: g · (1 / scale), in f32 (GradScaler multiplies by the
  // reciprocal too).
  Value inverseScale;
  if (in.scaler) {
    e.setLoc(locs.optimizer);
    inverseScale = e.div(e.constant(1.0), in.scaler->scale, none);
  }

  // Clipping: total = sqrt(Σ_g Σ g²) in f32; g *= min(clip / (total + 1e-6), 1).
  SmallVector<Value> g32;
  Value sumSquares;
  for (auto [k, g] : llvm::enumerate(grads)) {
    Operation *before = entry->empty() ? nullptr : &entry->back();
    e.setLoc(params[k].loc);
    RankedTensorType type = f32Like(params[k].type);
    Value v = e.castTo(g, f32, params[k].axes);
    if (inverseScale)
      v = e.mul(v, e.splat(inverseScale, type, params[k].axes), params[k].axes);
    g32.push_back(v);
    Value s = e.sumAll(e.mul(v, v, params[k].axes));
    tagLayer(*entry, before, paramLayer(params[k].name.getValue()));
    e.setLoc(locs.norm);
    sumSquares = sumSquares ? e.add(sumSquares, s, none) : s;
  }
  e.setLoc(locs.norm);
  out.gradNorm = sumSquares ? e.sqrt(sumSquares, none) : e.constant(0.0);
  // Loss scaling: one check over all gradients. Σ g² is finite exactly
  // when every gradient is (short of an f32 overflow of the sum itself, a
  // norm above 1.8e19), and NaN < inf is false.
  Value finite;
  if (in.scaler)
    finite = e.cmp(ein::CmpPredicate::lt, sumSquares ? sumSquares : e.constant(0.0),
                   e.constant(INFINITY), none);
  if (o.clip != 0 && !grads.empty()) {
    Value maxNorm = e.constant(o.clip);
    Value padded = e.add(out.gradNorm, e.constant(1e-6), none);
    Value coef = e.div(maxNorm, padded, none);
    Value clamped = e.min(coef, e.constant(1.0), none);
    for (size_t k = 0; k < grads.size(); ++k) {
      Operation *before = &entry->back();
      e.setLoc(params[k].loc);
      RankedTensorType type = f32Like(params[k].type);
      g32[k] = e.mul(g32[k], e.splat(clamped, type, params[k].axes), params[k].axes);
      tagLayer(*entry, before, paramLayer(params[k].name.getValue()));
    }
  }

  // The optimizer: its shared scalars once per learning rate (the lr_scale
  // setting's groups; one group, the step's lr, without it).
  e.setLoc(locs.optimizer);
  std::map<double, std::pair<StepScalars, SmallVector<Value>>> byScale;
  for (const Param &p : params) {
    if (p.unused || byScale.count(p.lrScale))
      continue;
    StepScalars scalars;
    scalars.step = in.step;
    scalars.lr = p.lrScale == 1 ? in.lr : e.mul(in.lr, e.constant(p.lrScale), none);
    scalars.anyDecays = llvm::any_of(
        params, [&](const Param &q) { return q.decays && !q.unused && q.lrScale == p.lrScale; });
    SmallVector<Value> shared = o.rule.prepare(e, o.hyper, scalars);
    byScale.emplace(p.lrScale, std::pair{scalars, std::move(shared)});
  }
  // Stochastic rounding's seed: t · P + k for the k-th of P params, in i32
  // (a fresh draw per step and param; it wraps after 2^31 / P steps).
  Value stepI32;
  bool anyNarrow =
      llvm::any_of(params, [&](const Param &p) { return p.type.getElementType() != f32; });
  if (o.stochastic && anyNarrow)
    stepI32 =
        e.mul(e.castTo(in.step, b.getI32Type(), none), e.constantI32(int32_t(params.size())), none);

  for (auto [k, p] : llvm::enumerate(params)) {
    if (p.unused) { // as PyTorch's optimizers skip a param whose .grad is None
      out.newParams.push_back(paramValues[k]);
      for (size_t s = 0; s < o.slotCount; ++s)
        out.newState.push_back(in.state[k * o.slotCount + s]);
      continue;
    }
    ParamUpdate u;
    Operation *before = entry->empty() ? nullptr : &entry->back();
    e.setLoc(p.loc);
    RankedTensorType type = f32Like(p.type);
    u.param = e.castTo(paramValues[k], f32, p.axes);
    u.grad = g32[k];
    for (size_t s = 0; s < o.slotCount; ++s)
      u.state.push_back(in.state[k * o.slotCount + s]);
    u.decays = p.decays;
    ParamEmitter pe{e, type, p.axes};
    const auto &[scalars, shared] = byScale.at(p.lrScale);
    o.rule.update(pe, o.hyper, scalars, shared, u);
    assert(u.newParam && u.newState.size() == o.slotCount && "incomplete update");
    Value newParam = u.newParam;
    if (p.type.getElementType() != f32) {
      Value seed = stepI32 ? e.add(stepI32, e.constantI32(int32_t(k)), none) : Value();
      newParam = storeNarrow(e, newParam, p.type, seed, p.axes);
    }
    // A skipped step (loss scaling): the param and its state as they were.
    if (finite) {
      Value keep = e.broadcastTo(finite, p.type.getShape(), p.axes);
      newParam = e.select(keep, newParam, paramValues[k], p.axes);
      for (size_t s = 0; s < o.slotCount; ++s)
        u.newState[s] = e.select(keep, u.newState[s], u.state[s], p.axes);
    }
    tagLayer(*entry, before, paramLayer(p.name.getValue()));
    out.newParams.push_back(newParam);
    out.newState.append(u.newState.begin(), u.newState.end());
  }

  if (in.scaler) {
    e.setLoc(locs.optimizer);
    out.newScaler = nextScalerState(e, *o.lossScaling, finite, *in.scaler);
  }
  return out;
}

struct EinTrainStepPass : public mlir::ein::impl::EinTrainStepBase<EinTrainStepPass> {
  using EinTrainStepBase::EinTrainStepBase;

  void runOnOperation() override;

private:
  /// Checks the options and resolves them into `hyper`; emits a diagnostic
  /// on `module` for the first bad one.
  LogicalResult checkOptions(ModuleOp module, const OptimizerRule *&rule, Hyper &hyper);
};

LogicalResult EinTrainStepPass::checkOptions(ModuleOp module, const OptimizerRule *&rule,
                                             Hyper &hyper) {
  rule = findOptimizer(optimizer);
  if (!rule) {
    SmallVector<StringRef> names;
    for (const OptimizerRule &r : optimizerRules())
      names.push_back(r.name);
    return module.emitError("ein-train-step: unknown optimizer '")
           << optimizer << "' (valid: " << llvm::join(names, ", ") << ")";
  }
  // -1 (the default): torch's value for the optimizer (docs/train-step.md).
  hyper = Hyper{beta1, beta2, eps, weightDecay, momentum};
  if (const einrt::OptimizerDefaults *d = einrt::findOptimizerDefaults(optimizer)) {
    if (hyper.eps == -1)
      hyper.eps = d->eps;
    if (hyper.weightDecay == -1)
      hyper.weightDecay = d->weightDecay;
  }
  auto inUnit = [](double v) { return v >= 0 && v < 1; };
  auto nonNegative = [](double v) { return v >= 0; }; // false for NaN
  if (!inUnit(beta1))
    return module.emitError("ein-train-step: beta1 must be in [0, 1), got ") << fmtNumber(beta1);
  if (!inUnit(beta2))
    return module.emitError("ein-train-step: beta2 must be in [0, 1), got ") << fmtNumber(beta2);
  if (!nonNegative(hyper.eps))
    return module.emitError("ein-train-step: eps must be >= 0, got ") << fmtNumber(hyper.eps);
  if (!nonNegative(hyper.weightDecay))
    return module.emitError("ein-train-step: weight-decay must be >= 0, got ")
           << fmtNumber(hyper.weightDecay);
  if (!nonNegative(momentum))
    return module.emitError("ein-train-step: momentum must be >= 0, got ") << fmtNumber(momentum);
  if (!nonNegative(clip) || std::isinf(clip))
    return module.emitError("ein-train-step: clip must be a finite number >= 0, got ")
           << fmtNumber(clip);
  if (decay != "matrices" && decay != "all")
    return module.emitError("ein-train-step: decay must be 'matrices' or 'all', got '")
           << decay << "'";
  if (narrowUpdate != "stochastic" && narrowUpdate != "nearest")
    return module.emitError(
               "ein-train-step: narrow-update must be 'stochastic' or 'nearest', got '")
           << narrowUpdate << "'";
  if (lossScaling != "none" && lossScaling != "dynamic" && lossScaling != "static")
    return module.emitError(
               "ein-train-step: loss-scaling must be 'none', 'dynamic' or 'static', got '")
           << lossScaling << "'";
  if (!(lossScaleInit > 0) || std::isinf(lossScaleInit))
    return module.emitError("ein-train-step: loss-scale-init must be a finite number > 0, got ")
           << fmtNumber(lossScaleInit);
  if (!(lossScaleGrowth >= 1) || std::isinf(lossScaleGrowth))
    return module.emitError("ein-train-step: loss-scale-growth must be a finite number >= 1, got ")
           << fmtNumber(lossScaleGrowth);
  if (!(lossScaleBackoff > 0 && lossScaleBackoff <= 1))
    return module.emitError("ein-train-step: loss-scale-backoff must be in (0, 1], got ")
           << fmtNumber(lossScaleBackoff);
  if (lossScaleInterval < 1)
    return module.emitError("ein-train-step: loss-scale-interval must be >= 1, got ")
           << int64_t(lossScaleInterval);
  return success();
}

void EinTrainStepPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  const OptimizerRule *rule = nullptr;
  Hyper hyper;
  if (failed(checkOptions(module, rule, hyper)))
    return signalPassFailure();

  auto grad = module.lookupSymbol<func::FuncOp>(gradName);
  if (!grad || grad.isExternal()) {
    module.emitError("ein-train-step: no function @")
        << gradName << " to build @" << stepName << " from";
    return signalPassFailure();
  }
  if (!applyName.empty() && (applyName == stepName || module.lookupSymbol(applyName))) {
    grad.emitError("ein-train-step: a symbol @") << applyName << " already exists";
    return signalPassFailure();
  }
  if (module.lookupSymbol(stepName)) {
    grad.emitError("ein-train-step: a symbol @") << stepName << " already exists";
    return signalPassFailure();
  }
  if (!grad.getBody().hasOneBlock()) {
    grad.emitError("ein-train-step: @") << gradName << " must have a single block";
    return signalPassFailure();
  }

  // The params, in argument order; a loss-scaled @grad's last argument is
  // the scale it seeds the backward with (ein-autodiff loss-scale).
  FunctionType gradType = grad.getFunctionType();
  Block &gradBody = grad.getBody().front();
  const bool scaling = lossScaling != "none";
  unsigned modelArgs = gradType.getNumInputs();
  auto seedKind =
      modelArgs ? grad.getArgAttrOfType<StringAttr>(modelArgs - 1, "ein.kind") : StringAttr();
  bool seeded = seedKind && seedKind.getValue() == "loss_scale";
  if (seeded != scaling) {
    grad.emitError("ein-train-step: ")
        << (scaling ? "loss-scaling needs @" + gradName.getValue() +
                          " seeded with a loss_scale argument (ein-autodiff loss-scale)"
                    : "@" + gradName.getValue() +
                          " takes a loss_scale argument: give loss-scaling=dynamic or static");
    return signalPassFailure();
  }
  if (seeded)
    --modelArgs;
  SmallVector<Param> params;
  SmallVector<unsigned> frozenArgs; // never trained (ein.frozen): returned as they came
  for (unsigned i = 0; i < modelArgs; ++i) {
    auto kind = grad.getArgAttrOfType<StringAttr>(i, "ein.kind");
    if (!kind || kind.getValue() != "param")
      continue;
    if (grad.getArgAttr(i, mlir::ein::kFrozenParam)) {
      frozenArgs.push_back(i);
      continue;
    }
    Param p{i, gradBody.getArgument(i).getLoc()};
    p.name = grad.getArgAttrOfType<StringAttr>(i, "ein.name");
    p.type = dyn_cast<RankedTensorType>(gradType.getInput(i));
    if (!p.name || !p.type) {
      grad.emitError("ein-train-step: param argument ")
          << i << " of @" << gradName << " needs an ein.name and a ranked tensor type";
      return signalPassFailure();
    }
    if (auto axes = grad.getArgAttrOfType<ArrayAttr>(i, "ein.axes"))
      if (static_cast<int64_t>(axes.size()) == p.type.getRank() &&
          llvm::all_of(axes, [](Attribute a) { return isa<StringAttr>(a); }))
        p.axes = axes;
    p.decays = decay == "all" || p.type.getRank() >= 2;
    unsigned gradResult = unsigned(params.size()) + 1;
    p.unused = gradResult < grad.getNumResults() &&
               grad.getResultAttr(gradResult, mlir::ein::kUnusedGradient) != nullptr;
    if (scaling && einrt::isLossScaleState(p.name.str())) {
      grad.emitError("ein-train-step: the param '")
          << p.name.getValue() << "' has the name of the loss scaler's state; rename it";
      return signalPassFailure();
    }
    params.push_back(p);
  }
  if (params.empty() && !frozenArgs.empty()) {
    grad.emitError("ein-train-step: every param is frozen or a buffer: nothing is left to train");
    return signalPassFailure();
  }
  // Param groups: which params never decay, which train at a multiple of lr.
  {
    std::vector<std::string> names;
    for (const Param &p : params)
      names.push_back(p.name.str());
    // A pattern that names only frozen params still names a param (no typo);
    // their groups are not used.
    for (unsigned i : frozenArgs)
      names.push_back(grad.getArgAttrOfType<StringAttr>(i, "ein.name").str());
    einrt::Expected<std::vector<einrt::ParamGroup>> groups =
        einrt::paramGroups(names, noDecay, lrScale);
    if (!groups.ok()) {
      // At the setting the message names, when the model file sets it.
      StringRef key = llvm::StringRef(groups.status().message()).starts_with("lr_scale")
                          ? "lr_scale"
                          : "no_decay";
      emitError(ein::trainEntryLoc(module, key, grad.getLoc()), "ein-train-step: ")
          << groups.status().message();
      return signalPassFailure();
    }
    for (auto [p, g] : llvm::zip(params, *groups)) {
      p.decays = p.decays && !g.noDecay;
      p.lrScale = g.lrScale;
    }
  }
  if (gradType.getNumResults() != params.size() + 1) {
    grad.emitError("ein-train-step: @")
        << gradName << " returns " << gradType.getNumResults() << " values, expected "
        << params.size() + 1 << " (the loss and one gradient per param)";
    return signalPassFailure();
  }
  for (auto [k, p] : llvm::enumerate(params))
    if (gradType.getResult(k + 1) != p.type) {
      grad.emitError("ein-train-step: the gradient of '")
          << p.name.getValue() << "' has type " << gradType.getResult(k + 1)
          << ", expected the param's type " << p.type;
      return signalPassFailure();
    }

  SmallVector<StringRef> slots = rule->slots(hyper);
  LossScaleConfig scaleConfig{lossScaling == "dynamic", lossScaleInit, lossScaleGrowth,
                              lossScaleBackoff, lossScaleInterval};
  UpdateOptions options{*rule,
                        hyper,
                        slots.size(),
                        clip,
                        narrowUpdate == "stochastic",
                        scaling ? &scaleConfig : nullptr};

  // The signature.
  Builder b(ctx);
  auto scalarType = RankedTensorType::get({}, b.getF32Type());
  auto named = [&](StringRef name, StringRef kind) {
    SmallVector<NamedAttribute> attrs;
    if (!kind.empty())
      attrs.push_back(b.getNamedAttr("ein.kind", b.getStringAttr(kind)));
    attrs.push_back(b.getNamedAttr("ein.name", b.getStringAttr(name)));
    return attrs;
  };
  SmallVector<Type> argTypes(gradType.getInputs().take_front(modelArgs));
  SmallVector<DictionaryAttr> argAttrs;
  for (unsigned i = 0; i < modelArgs; ++i)
    argAttrs.push_back(grad.getArgAttrDict(i) ? grad.getArgAttrDict(i) : b.getDictionaryAttr({}));
  // Optimizer state is f32 whatever the param's type.
  SmallVector<std::string> stateNames;
  SmallVector<Type> stateTypes;
  for (const Param &p : params)
    for (StringRef slot : slots) {
      stateNames.push_back((p.name.getValue() + "." + slot).str());
      stateTypes.push_back(f32Like(p.type));
      argTypes.push_back(stateTypes.back());
      auto attrs = named(stateNames.back(), "opt_state");
      if (auto axes = grad.getArgAttr(p.argIndex, "ein.axes"))
        attrs.push_back(b.getNamedAttr("ein.axes", axes));
      argAttrs.push_back(b.getDictionaryAttr(attrs));
    }
  // The loss scaler's state: rank-0 f32 opt_state (runtime/base/LossScaleState.h).
  const char *const scalerNames[] = {einrt::kLossScaleName, einrt::kGoodStepsName,
                                     einrt::kSkippedStepsName};
  unsigned firstScaler = argTypes.size();
  unsigned scalerCount = scaling ? 3 : 0;
  for (unsigned s = 0; s < scalerCount; ++s) {
    argTypes.push_back(scalarType);
    auto attrs = named(scalerNames[s], "opt_state");
    attrs.push_back(b.getNamedAttr("ein.axes", b.getStrArrayAttr({})));
    argAttrs.push_back(b.getDictionaryAttr(attrs));
  }
  unsigned stepArg = argTypes.size();
  argTypes.push_back(scalarType);
  argAttrs.push_back(b.getDictionaryAttr(named("step", "step")));
  argTypes.push_back(scalarType);
  argAttrs.push_back(b.getDictionaryAttr(named("lr", "lr")));
  // The run's seed (i32), keying the dropout masks: only where there are any.
  const bool dropout = mlir::ein::hasDropout(grad);
  if (dropout) {
    argTypes.push_back(RankedTensorType::get({}, b.getI32Type()));
    argAttrs.push_back(b.getDictionaryAttr(named("seed", "seed")));
  }

  SmallVector<Type> resultTypes{gradType.getResult(0), scalarType};
  SmallVector<DictionaryAttr> resultAttrs{b.getDictionaryAttr(named("loss", "")),
                                          b.getDictionaryAttr(named("grad_norm", ""))};
  for (const Param &p : params) {
    resultTypes.push_back(p.type);
    resultAttrs.push_back(b.getDictionaryAttr(named(p.name.getValue(), "param")));
  }
  // A frozen param is carried to the next step unchanged (the runtime keeps
  // every param a step takes; it is saved and loaded like the others).
  for (unsigned i : frozenArgs) {
    resultTypes.push_back(gradType.getInput(i));
    resultAttrs.push_back(b.getDictionaryAttr(
        named(grad.getArgAttrOfType<StringAttr>(i, "ein.name").getValue(), "param")));
  }
  for (auto [k, name] : llvm::enumerate(stateNames)) {
    resultTypes.push_back(stateTypes[k]);
    resultAttrs.push_back(b.getDictionaryAttr(named(name, "opt_state")));
  }
  for (unsigned s = 0; s < scalerCount; ++s) {
    resultTypes.push_back(scalarType);
    resultAttrs.push_back(b.getDictionaryAttr(named(scalerNames[s], "opt_state")));
  }

  OpBuilder mb(ctx);
  mb.setInsertionPointAfter(grad);
  Location loc = grad.getLoc();
  auto fn = mb.create<func::FuncOp>(loc, stepName, b.getFunctionType(argTypes, resultTypes));
  fn.setAllArgAttrs(argAttrs);
  fn.setAllResultAttrs(resultAttrs);
  Block *entry = fn.addEntryBlock();
  Operation *terminator = gradBody.getTerminator();
  Location minimize = terminator->getLoc();
  SharedLocs locs{ein::trainEntryLoc(module, "clip", minimize),
                  ein::trainEntryLoc(module, "optimizer", minimize)};

  // The arguments' locations: @grad's, each state slot at its param, the
  // scaler, step and lr at the optimizer.
  for (unsigned i = 0; i < modelArgs; ++i)
    entry->getArgument(i).setLoc(gradBody.getArgument(i).getLoc());
  for (unsigned s = 0; s < stateNames.size(); ++s)
    entry->getArgument(modelArgs + s).setLoc(params[s / slots.size()].loc);
  for (unsigned a = firstScaler; a < entry->getNumArguments(); ++a)
    entry->getArgument(a).setLoc(locs.optimizer);

  OpBuilder ob = OpBuilder::atBlockEnd(entry);
  // The scale in use, first: @grad's body is seeded with it.
  ScalerState scaler;
  if (scaling) {
    Emitter se(ob, locs.optimizer);
    scaler.scale = lossScaleInUse(se, entry->getArgument(firstScaler), lossScaleInit);
    scaler.goodSteps = entry->getArgument(firstScaler + 1);
    scaler.skippedSteps = entry->getArgument(firstScaler + 2);
  }
  Operation *firstGradOp = entry->empty() ? nullptr : &entry->back();

  // @grad's body.
  IRMapping map;
  for (unsigned i = 0; i < modelArgs; ++i)
    map.map(gradBody.getArgument(i), entry->getArgument(i));
  if (scaling)
    map.map(gradBody.getArgument(modelArgs), scaler.scale);
  for (Operation &op : gradBody.without_terminator())
    ob.clone(op, map);
  Value loss = map.lookupOrDefault(terminator->getOperand(0));
  SmallVector<Value> grads;
  for (unsigned k = 0; k < params.size(); ++k)
    grads.push_back(map.lookupOrDefault(terminator->getOperand(k + 1)));
  if (dropout) { // masked here; the identity everywhere else
    grads.push_back(loss);
    mlir::ein::expandDropouts(*entry, entry->getArgument(stepArg), entry->getArgument(stepArg + 2),
                              grads);
    loss = grads.pop_back_val();
  }

  Operation *lastGradOp = entry->empty() ? nullptr : &entry->back();
  SmallVector<Value> paramValues, stateValues;
  for (const Param &p : params)
    paramValues.push_back(entry->getArgument(p.argIndex));
  unsigned firstState = modelArgs;
  for (unsigned s = 0; s < stateNames.size(); ++s)
    stateValues.push_back(entry->getArgument(firstState + s));
  StepInputs in{stateValues, entry->getArgument(stepArg), entry->getArgument(stepArg + 1),
                scaling ? &scaler : nullptr};
  Updated updated = emitUpdate(ob, locs, *entry, params, paramValues, grads, in, options);

  // Everything after @grad's body (and the scale before it) is clipping,
  // optimizer or scaler.
  auto optimizerPhase = StringAttr::get(ctx, "optimizer");
  for (Operation *op = lastGradOp ? lastGradOp->getNextNode()
                                  : (entry->empty() ? nullptr : &entry->front());
       op; op = op->getNextNode())
    op->setAttr(mlir::ein::kPhaseAttr, optimizerPhase);
  if (firstGradOp)
    for (Operation *op = &entry->front(); op != firstGradOp->getNextNode(); op = op->getNextNode())
      op->setAttr(mlir::ein::kPhaseAttr, optimizerPhase);

  SmallVector<Value> results{loss};
  updated.appendTo(results, scaling);
  // The frozen params, after the trained ones (resultAttrs' order).
  results.insert(results.begin() + 2 + params.size(), frozenArgs.size(), Value());
  for (auto [k, i] : llvm::enumerate(frozenArgs))
    results[2 + params.size() + k] = entry->getArgument(i);
  ob.create<func::ReturnOp>(minimize, results);
  mlir::ein::eraseDropouts(module); // @forward's and @grad's: no mask outside @train_step

  if (applyName.empty())
    return;

  // @apply_update(params..., grads..., opt_state..., [scaler...], step, lr)
  //     -> (grad_norm, params'..., opt_state'..., [scaler'...]): the same
  // clipping and update on gradients the caller provides (accumulated over
  // micro-batches; with loss scaling, of the scaled loss).
  SmallVector<Type> applyArgTypes;
  SmallVector<DictionaryAttr> applyArgAttrs;
  for (const Param &p : params) {
    applyArgTypes.push_back(p.type);
    applyArgAttrs.push_back(argAttrs[p.argIndex]);
  }
  for (const Param &p : params) {
    applyArgTypes.push_back(p.type);
    auto attrs = named(p.name.getValue(), "grad");
    if (p.axes)
      attrs.push_back(b.getNamedAttr("ein.axes", p.axes));
    applyArgAttrs.push_back(b.getDictionaryAttr(attrs));
  }
  for (unsigned a = firstState; a < stepArg + 2; ++a) { // not the seed
    applyArgTypes.push_back(argTypes[a]);
    applyArgAttrs.push_back(argAttrs[a]);
  }
  // (Frozen params are not its business: it takes the trained ones.)
  SmallVector<Type> applyResultTypes(resultTypes.begin() + 1, resultTypes.end());
  SmallVector<DictionaryAttr> applyResultAttrs(resultAttrs.begin() + 1, resultAttrs.end());
  applyResultTypes.erase(applyResultTypes.begin() + 1 + params.size(),
                         applyResultTypes.begin() + 1 + params.size() + frozenArgs.size());
  applyResultAttrs.erase(applyResultAttrs.begin() + 1 + params.size(),
                         applyResultAttrs.begin() + 1 + params.size() + frozenArgs.size());

  mb.setInsertionPointAfter(fn);
  auto apply =
      mb.create<func::FuncOp>(loc, applyName, b.getFunctionType(applyArgTypes, applyResultTypes));
  apply.setAllArgAttrs(applyArgAttrs);
  apply.setAllResultAttrs(applyResultAttrs);
  Block *applyEntry = apply.addEntryBlock();
  OpBuilder ab = OpBuilder::atBlockEnd(applyEntry);
  unsigned n = params.size();
  for (unsigned k = 0; k < n; ++k) {
    applyEntry->getArgument(k).setLoc(params[k].loc);
    applyEntry->getArgument(n + k).setLoc(params[k].loc);
  }
  for (unsigned s = 0; s < stateNames.size(); ++s)
    applyEntry->getArgument(2 * n + s).setLoc(params[s / slots.size()].loc);
  unsigned applyScaler = 2 * n + stateNames.size();
  for (unsigned a = applyScaler; a < applyEntry->getNumArguments(); ++a)
    applyEntry->getArgument(a).setLoc(locs.optimizer);
  SmallVector<Value> applyParams, applyGrads, applyState;
  for (unsigned k = 0; k < n; ++k) {
    applyParams.push_back(applyEntry->getArgument(k));
    applyGrads.push_back(applyEntry->getArgument(n + k));
  }
  for (unsigned s = 0; s < stateNames.size(); ++s)
    applyState.push_back(applyEntry->getArgument(2 * n + s));
  ScalerState applyScalerState;
  if (scaling) {
    Emitter se(ab, locs.optimizer);
    applyScalerState.scale =
        lossScaleInUse(se, applyEntry->getArgument(applyScaler), lossScaleInit);
    applyScalerState.goodSteps = applyEntry->getArgument(applyScaler + 1);
    applyScalerState.skippedSteps = applyEntry->getArgument(applyScaler + 2);
  }
  unsigned applyStep = applyScaler + scalerCount;
  StepInputs applyIn{applyState, applyEntry->getArgument(applyStep),
                     applyEntry->getArgument(applyStep + 1), scaling ? &applyScalerState : nullptr};
  Updated applied =
      emitUpdate(ab, locs, *applyEntry, params, applyParams, applyGrads, applyIn, options);
  for (Operation &op : *applyEntry)
    op.setAttr(mlir::ein::kPhaseAttr, optimizerPhase);
  SmallVector<Value> applyResults;
  applied.appendTo(applyResults, scaling);
  ab.create<func::ReturnOp>(minimize, applyResults);
}

} // namespace
