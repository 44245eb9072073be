//===- Optimizers.cpp - Optimizer update rules for ein-train-step ---------===//
//
// Each rule emits its update in the order of operations of torch.optim's
// single-tensor implementation (maximize, amsgrad, nesterov off, dampening 0;
// Adagrad's lr_decay 0 and initial accumulator 0). Scalar hyper-parameters
// are rank-0 f32 constants: where torch computes one in Python (double) and
// passes it as a Scalar, the constant is that double rounded to f32 (e.g.
// `1 - beta2`), so the element-wise arithmetic matches torch's. Scalars
// derived from `step` and `lr` (bias corrections, step size) are computed in
// f32 in the IR (torch uses double); the bias corrections use a formula that
// keeps them accurate to a few f32 ulp (see oneMinusPower).
//
//===----------------------------------------------------------------------===//
#include "passes/Optimizers.h"

#include <cmath>

namespace mlir::ein::train {

//===----------------------------------------------------------------------===//
// Emitter
//===----------------------------------------------------------------------===//

Value Emitter::constant(double v) {
  float f = static_cast<float>(v);
  auto it = constants_.find(f);
  if (it != constants_.end())
    return it->second;
  auto type = RankedTensorType::get({}, b_.getF32Type());
  auto value = DenseElementsAttr::get(type, b_.getF32FloatAttr(f));
  Value c = b_.create<ConstantOp>(constantLoc_, type, value, noAxes());
  constants_[f] = c;
  return c;
}

Value Emitter::add(Value l, Value r, ArrayAttr axes) {
  return b_.create<AddOp>(loc_, l.getType(), l, r, axes);
}
Value Emitter::sub(Value l, Value r, ArrayAttr axes) {
  return b_.create<SubOp>(loc_, l.getType(), l, r, axes);
}
Value Emitter::mul(Value l, Value r, ArrayAttr axes) {
  return b_.create<MulOp>(loc_, l.getType(), l, r, axes);
}
Value Emitter::div(Value l, Value r, ArrayAttr axes) {
  return b_.create<DivOp>(loc_, l.getType(), l, r, axes);
}
Value Emitter::min(Value l, Value r, ArrayAttr axes) {
  return b_.create<MinOp>(loc_, l.getType(), l, r, axes);
}
Value Emitter::pow(Value l, Value r, ArrayAttr axes) {
  return b_.create<PowOp>(loc_, l.getType(), l, r, axes);
}
Value Emitter::sqrt(Value x, ArrayAttr axes) {
  return b_.create<SqrtOp>(loc_, x.getType(), x, axes);
}
Value Emitter::tanh(Value x, ArrayAttr axes) {
  return b_.create<TanhOp>(loc_, x.getType(), x, axes);
}

Value Emitter::cmp(CmpPredicate predicate, Value l, Value r, ArrayAttr axes) {
  auto type = cast<RankedTensorType>(l.getType()).clone(b_.getI1Type());
  return b_.create<CmpOp>(loc_, type, predicate, l, r, axes);
}
Value Emitter::select(Value cond, Value onTrue, Value onFalse, ArrayAttr axes) {
  return b_.create<SelectOp>(loc_, onTrue.getType(), cond, onTrue, onFalse, axes);
}

Value Emitter::constantI32(int32_t v) {
  auto it = constantsI32_.find(v);
  if (it != constantsI32_.end())
    return it->second;
  auto type = RankedTensorType::get({}, b_.getI32Type());
  auto value = DenseElementsAttr::get(type, b_.getI32IntegerAttr(v));
  Value c = b_.create<ConstantOp>(constantLoc_, type, value, noAxes());
  constantsI32_[v] = c;
  return c;
}

Value Emitter::stochasticRound(Value x, Value seed, Type to, ArrayAttr axes) {
  auto type = cast<RankedTensorType>(x.getType()).clone(to);
  return b_.create<StochasticRoundOp>(loc_, type, x, seed, axes);
}

Value Emitter::castTo(Value x, Type to, ArrayAttr axes) {
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getElementType() == to)
    return x;
  return b_.create<CastOp>(loc_, type.clone(to), x, axes);
}

Value Emitter::sumAll(Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getRank() == 0)
    return x;
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < type.getRank(); ++i)
    dims.push_back(i);
  return b_.create<ReduceOp>(loc_, RankedTensorType::get({}, type.getElementType()), x,
                             ReduceKind::sum, dims, noAxes());
}

Value Emitter::splat(Value scalar, RankedTensorType type, ArrayAttr axes) {
  Value s = castTo(scalar, type.getElementType(), noAxes());
  if (type.getRank() == 0)
    return s;
  return b_.create<BroadcastOp>(loc_, type, s, ArrayRef<int64_t>{}, axes);
}

Value Emitter::broadcastTo(Value scalar, ArrayRef<int64_t> shape, ArrayAttr axes) {
  if (shape.empty())
    return scalar;
  auto type =
      RankedTensorType::get(shape, cast<RankedTensorType>(scalar.getType()).getElementType());
  return b_.create<BroadcastOp>(loc_, type, scalar, ArrayRef<int64_t>{}, axes);
}

//===----------------------------------------------------------------------===//
// Shared pieces
//===----------------------------------------------------------------------===//

namespace {

/// L2 penalty: g + wd·p (torch: `grad.add(param, alpha=weight_decay)`), for
/// a param that decays when wd ≠ 0.
Value l2Penalty(ParamEmitter &e, const Hyper &h, const ParamUpdate &u) {
  if (!u.decays || h.weightDecay == 0)
    return u.grad;
  Value penalty = e.mul(e.splat(h.weightDecay), u.param);
  return e.add(u.grad, penalty);
}

/// torch's `exp_avg.lerp_(grad, 1 - beta1)`: with w = 1 - β1 (as f32),
/// m + w·(g − m) when |w| < 0.5, else g − (g − m)·(1 − w).
Value lerpMoment(ParamEmitter &e, const Hyper &h, Value m, Value g) {
  float w = static_cast<float>(1.0 - h.beta1);
  Value diff = e.sub(g, m);
  if (std::fabs(w) < 0.5f) {
    Value step = e.mul(diff, e.splat(w));
    return e.add(m, step);
  }
  Value step = e.mul(diff, e.splat(1.0f - w));
  return e.sub(g, step);
}

/// torch's `exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)`:
/// v·β2 + ((1 − β2)·g)·g.
Value secondMoment(ParamEmitter &e, const Hyper &h, Value v, Value g) {
  Value decayed = e.mul(v, e.splat(h.beta2));
  Value scaled = e.mul(e.splat(1.0 - h.beta2), g);
  return e.add(decayed, e.mul(scaled, g));
}

/// 1 − β^t, accurate in f32. The plain form 1 − pow(β, t) loses the
/// digits that matter (β = 0.999 is 0.99900001 in f32, so 1 − β is off by
/// 1e-5 relative); instead 1 − β^t = −expm1(t·ln β) with ln β taken in
/// double, and expm1(x) = 2·tanh(x/2) / (1 − tanh(x/2)), exact to a few ulp
/// for small x. β = 0 gives ln β = −∞, tanh = −1 and the right answer, 1.
Value oneMinusPower(Emitter &e, double beta, Value step) {
  ArrayAttr none = e.noAxes();
  Value halfX = e.mul(step, e.constant(0.5 * std::log(beta)), none);
  Value t = e.tanh(halfX, none);
  Value num = e.mul(e.constant(-2.0), t, none);
  return e.div(num, e.sub(e.constant(1.0), t, none), none);
}

/// Adam's shared scalars: {step_size = lr / (1 − β1^t), sqrt(1 − β2^t)}.
SmallVector<Value> adamScalars(Emitter &e, const Hyper &h, const StepScalars &s) {
  ArrayAttr none = e.noAxes();
  Value bc1 = oneMinusPower(e, h.beta1, s.step);
  Value bc2 = oneMinusPower(e, h.beta2, s.step);
  Value stepSize = e.div(s.lr, bc1, none);
  Value bc2Sqrt = e.sqrt(bc2, none);
  return {stepSize, bc2Sqrt};
}

/// The Adam step after the moments: denom = sqrt(v) / sqrt(bc2) + eps;
/// p − (step_size·m) / denom (torch: `param.addcdiv_(exp_avg, denom,
/// value=-step_size)`).
Value adamStep(ParamEmitter &e, const Hyper &h, Value p, Value m, Value v, Value stepSize,
               Value bc2Sqrt) {
  Value root = e.sqrt(v);
  Value scaled = e.div(root, e.splat(bc2Sqrt));
  Value denom = e.add(scaled, e.splat(h.eps));
  Value step = e.mul(e.splat(stepSize), m);
  return e.sub(p, e.div(step, denom));
}

SmallVector<StringRef> adamSlots(const Hyper &) { return {"m", "v"}; }

//===----------------------------------------------------------------------===//
// adamw
//===----------------------------------------------------------------------===//

SmallVector<Value> adamwPrepare(Emitter &e, const Hyper &h, const StepScalars &s) {
  // Decoupled decay factor 1 − lr·wd, first (torch computes it per param;
  // the value is the same for all).
  Value factor;
  if (s.anyDecays && h.weightDecay != 0) {
    ArrayAttr none = e.noAxes();
    Value one = e.constant(1.0);
    Value lrWd = e.mul(s.lr, e.constant(h.weightDecay), none);
    factor = e.sub(one, lrWd, none);
  }
  SmallVector<Value> shared = adamScalars(e, h, s);
  shared.push_back(factor);
  return shared;
}

void adamwUpdate(ParamEmitter &e, const Hyper &h, const StepScalars &, ArrayRef<Value> shared,
                 ParamUpdate &u) {
  Value p = u.param;
  if (u.decays && shared[2])
    p = e.mul(p, e.splat(shared[2]));
  Value m = lerpMoment(e, h, u.state[0], u.grad);
  Value v = secondMoment(e, h, u.state[1], u.grad);
  u.newParam = adamStep(e, h, p, m, v, shared[0], shared[1]);
  u.newState = {m, v};
}

//===----------------------------------------------------------------------===//
// adam
//===----------------------------------------------------------------------===//

SmallVector<Value> adamPrepare(Emitter &e, const Hyper &h, const StepScalars &s) {
  return adamScalars(e, h, s);
}

void adamUpdate(ParamEmitter &e, const Hyper &h, const StepScalars &, ArrayRef<Value> shared,
                ParamUpdate &u) {
  Value g = l2Penalty(e, h, u);
  Value m = lerpMoment(e, h, u.state[0], g);
  Value v = secondMoment(e, h, u.state[1], g);
  u.newParam = adamStep(e, h, u.param, m, v, shared[0], shared[1]);
  u.newState = {m, v};
}

//===----------------------------------------------------------------------===//
// sgd
//===----------------------------------------------------------------------===//

SmallVector<StringRef> sgdSlots(const Hyper &h) {
  if (h.momentum == 0)
    return {};
  return {"momentum"};
}

SmallVector<Value> noScalars(Emitter &, const Hyper &, const StepScalars &) { return {}; }

void sgdUpdate(ParamEmitter &e, const Hyper &h, const StepScalars &s, ArrayRef<Value>,
               ParamUpdate &u) {
  Value g = l2Penalty(e, h, u);
  Value direction = g;
  if (h.momentum != 0) {
    // torch: buf.mul_(momentum).add_(grad); the first step's `buf = grad`
    // is the same value from a zero buffer.
    Value decayed = e.mul(u.state[0], e.splat(h.momentum));
    Value buf = e.add(decayed, g);
    u.newState = {buf};
    direction = buf;
  }
  // torch: param.add_(direction, alpha=-lr).
  Value step = e.mul(e.splat(s.lr), direction);
  u.newParam = e.sub(u.param, step);
}

//===----------------------------------------------------------------------===//
// adagrad
//===----------------------------------------------------------------------===//

SmallVector<StringRef> adagradSlots(const Hyper &) { return {"sum"}; }

void adagradUpdate(ParamEmitter &e, const Hyper &h, const StepScalars &s, ArrayRef<Value>,
                   ParamUpdate &u) {
  Value g = l2Penalty(e, h, u);
  // torch: state_sum.addcmul_(grad, grad, value=1); std = sqrt(sum) + eps;
  // param.addcdiv_(grad, std, value=-clr) with clr = lr (lr_decay 0).
  Value sum = e.add(u.state[0], e.mul(g, g));
  Value root = e.sqrt(sum);
  Value std = e.add(root, e.splat(h.eps));
  Value step = e.mul(e.splat(s.lr), g);
  u.newParam = e.sub(u.param, e.div(step, std));
  u.newState = {sum};
}

const OptimizerRule kRules[] = {
    {"adamw", adamSlots, adamwPrepare, adamwUpdate},
    {"adam", adamSlots, adamPrepare, adamUpdate},
    {"sgd", sgdSlots, noScalars, sgdUpdate},
    {"adagrad", adagradSlots, noScalars, adagradUpdate},
};

} // namespace

ArrayRef<OptimizerRule> optimizerRules() { return kRules; }

const OptimizerRule *findOptimizer(StringRef name) {
  for (const OptimizerRule &rule : kRules)
    if (rule.name == name)
      return &rule;
  return nullptr;
}

} // namespace mlir::ein::train
