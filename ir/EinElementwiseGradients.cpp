//===- EinElementwiseGradients.cpp - Gradients of elementwise math --------===//
//
// The reverse-mode rules of the unary and binary elementwise ops (x the
// input, y the result; the conventions are EinGradients.cpp's). One rule
// per op; the table is in docs/autodiff.md.
//
//===----------------------------------------------------------------------===//

#include "ir/GradientRules.h"

using namespace mlir;
using namespace mlir::ein;
using namespace mlir::ein::gradient_rules;

//===----------------------------------------------------------------------===//
// Unary elementwise ops (x the input, y the result)
//===----------------------------------------------------------------------===//

// neg → -dY.
LogicalResult NegOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                   SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (need[0])
    grads[0] = e.unary<NegOp>(dY, getAxesAttr());
  return success();
}

// exp → dY · y (the forward result, reused).
LogicalResult ExpOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                   SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (need[0])
    grads[0] = e.binary<MulOp>(dY, getResult(), getAxesAttr());
  return success();
}

// log → dY / x.
LogicalResult LogOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                   SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (need[0])
    grads[0] = e.binary<DivOp>(dY, getInput(), getAxesAttr());
  return success();
}

// tanh → dY · (1 − y²).
LogicalResult TanhOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                    SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (!need[0])
    return success();
  ArrayAttr ax = getAxesAttr();
  Value y = getResult();
  Value y2 = e.binary<MulOp>(y, y, ax);
  Value oneMinusY2 = e.binary<SubOp>(e.splat(1.0, y.getType(), ax), y2, ax);
  grads[0] = e.binary<MulOp>(dY, oneMinusY2, ax);
  return success();
}

// sqrt → dY / (2y).
LogicalResult SqrtOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                    SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (!need[0])
    return success();
  ArrayAttr ax = getAxesAttr();
  Value y = getResult();
  Value twoY = e.binary<MulOp>(e.splat(2.0, y.getType(), ax), y, ax);
  grads[0] = e.binary<DivOp>(dY, twoY, ax);
  return success();
}

// rsqrt (y = x^-1/2) → dY · (−½ · y³).
LogicalResult RsqrtOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                     SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (!need[0])
    return success();
  ArrayAttr ax = getAxesAttr();
  Value y = getResult();
  Value y3 = e.binary<MulOp>(e.binary<MulOp>(y, y, ax), y, ax);
  Value slope = e.binary<MulOp>(e.splat(-0.5, y.getType(), ax), y3, ax);
  grads[0] = e.binary<MulOp>(dY, slope, ax);
  return success();
}

// abs → dY · sign(x), sign(0) = 0 (built with cmp + select).
LogicalResult AbsOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                   SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (!need[0])
    return success();
  ArrayAttr ax = getAxesAttr();
  Value x = getInput();
  Type type = x.getType();
  Value zero = e.zeros(type, ax);
  Value negative =
      e.select(e.cmp(CmpPredicate::lt, x, zero, ax), e.splat(-1.0, type, ax), zero, ax);
  Value sign = e.select(e.cmp(CmpPredicate::gt, x, zero, ax), e.splat(1.0, type, ax), negative, ax);
  grads[0] = e.binary<MulOp>(dY, sign, ax);
  return success();
}

// softplus → dY · sigmoid(x), sigmoid(x) = 1 / (1 + e^-x) (0 where e^-x
// overflows, as it should).
LogicalResult SoftplusOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                        SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (!need[0])
    return success();
  ArrayAttr ax = getAxesAttr();
  Value x = getInput();
  Value one = e.splat(1.0, x.getType(), ax);
  Value expNeg = e.unary<ExpOp>(e.unary<NegOp>(x, ax), ax);
  Value sigmoid = e.binary<DivOp>(one, e.binary<AddOp>(one, expNeg, ax), ax);
  grads[0] = e.binary<MulOp>(dY, sigmoid, ax);
  return success();
}

// sin → dY · cos(x).
LogicalResult SinOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                   SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (need[0])
    grads[0] = e.binary<MulOp>(dY, e.unary<CosOp>(getInput(), getAxesAttr()), getAxesAttr());
  return success();
}

// cos → −(dY · sin(x)).
LogicalResult CosOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                   SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (!need[0])
    return success();
  ArrayAttr ax = getAxesAttr();
  grads[0] = e.unary<NegOp>(e.binary<MulOp>(dY, e.unary<SinOp>(getInput(), ax), ax), ax);
  return success();
}

// erf → dY · 2/√π · exp(−x²).
LogicalResult ErfOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                   SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (!need[0])
    return success();
  ArrayAttr ax = getAxesAttr();
  Value x = getInput();
  Value gauss = e.unary<ExpOp>(e.unary<NegOp>(e.binary<MulOp>(x, x, ax), ax), ax);
  Value scale = e.splat(2.0 / std::sqrt(M_PI), x.getType(), ax);
  grads[0] = e.binary<MulOp>(dY, e.binary<MulOp>(scale, gauss, ax), ax);
  return success();
}

//===----------------------------------------------------------------------===//
// Binary elementwise ops (a = lhs, b = rhs, y the result)
//===----------------------------------------------------------------------===//

// add → dY, dY.
LogicalResult AddOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                   SmallVectorImpl<Value> &grads) {
  begin(*this, b, grads);
  if (need[0])
    grads[0] = dY;
  if (need[1])
    grads[1] = dY;
  return success();
}

// sub → dY, −dY.
LogicalResult SubOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                   SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (need[0])
    grads[0] = dY;
  if (need[1])
    grads[1] = e.unary<NegOp>(dY, getAxesAttr());
  return success();
}

// mul → dY · b, dY · a.
LogicalResult MulOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                   SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (need[0])
    grads[0] = e.binary<MulOp>(dY, getRhs(), getAxesAttr());
  if (need[1])
    grads[1] = e.binary<MulOp>(dY, getLhs(), getAxesAttr());
  return success();
}

// div → da = dY / b, db = −dY · a / b² = −da · y (reusing y = a / b).
LogicalResult DivOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                   SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (!need[0] && !need[1])
    return success();
  ArrayAttr ax = getAxesAttr();
  Value da = e.binary<DivOp>(dY, getRhs(), ax);
  if (need[0])
    grads[0] = da;
  if (need[1])
    grads[1] = e.unary<NegOp>(e.binary<MulOp>(da, getResult(), ax), ax);
  return success();
}

/// max/min (torch.maximum / torch.minimum): dY to the operand that wins
/// (a `wins` b, or b `wins` a), half to each on a tie.
/// A constant, or a broadcast / reshape of one: known without running the
/// forward.
static bool isConstantSplat(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<ConstantOp>(def))
    return true;
  if (isa<BroadcastOp, ReshapeOp>(def))
    return isConstantSplat(def->getOperand(0));
  return false;
}

static void extremumGrads(Emitter &e, Operation *op, CmpPredicate wins, Value dY,
                          ArrayRef<bool> need, SmallVectorImpl<Value> &grads) {
  if (!need[0] && !need[1])
    return;
  ArrayAttr ax = op->getAttrOfType<ArrayAttr>("axes");
  Value a = op->getOperand(0), b = op->getOperand(1);
  Type type = dY.getType();
  // Against a constant (relu is max(x, 0)) the op is a clamp: the gradient
  // flows where the result passes the constant, 0 at the kink (as
  // torch.relu). Reading the result instead of the input means the backward
  // keeps only what the next layer saves anyway: an L-layer linear+ReLU net
  // saves L activations plus its input, as the lecture counts.
  Value y = op->getResult(0);
  if (isConstantSplat(b) && !need[1]) {
    grads[0] = e.select(e.cmp(wins, y, b, ax), dY, e.zeros(type, ax), ax);
    return;
  }
  if (isConstantSplat(a) && !need[0]) {
    grads[1] = e.select(e.cmp(wins, y, a, ax), dY, e.zeros(type, ax), ax);
    return;
  }
  Value tie = e.cmp(CmpPredicate::eq, a, b, ax);
  Value half = e.binary<MulOp>(dY, e.splat(0.5, type, ax), ax);
  Value tieShare = e.select(tie, half, e.zeros(type, ax), ax);
  if (need[0])
    grads[0] = e.select(e.cmp(wins, a, b, ax), dY, tieShare, ax);
  if (need[1])
    grads[1] = e.select(e.cmp(wins, b, a, ax), dY, tieShare, ax);
}

// max → dY to the larger, half each on a tie (against a constant: a clamp).
LogicalResult MaxOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                   SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  extremumGrads(e, *this, CmpPredicate::gt, dY, need, grads);
  return success();
}

// min → dY to the smaller, half each on a tie (against a constant: a clamp).
LogicalResult MinOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                   SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  extremumGrads(e, *this, CmpPredicate::lt, dY, need, grads);
  return success();
}

// pow → da = dY · b · a^(b−1), db = dY · y · log(a) (y = a^b reused).
LogicalResult PowOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                   SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  ArrayAttr ax = getAxesAttr();
  Value base = getLhs(), exponent = getRhs();
  if (need[0]) {
    Value expMinusOne = e.binary<SubOp>(exponent, e.splat(1.0, exponent.getType(), ax), ax);
    Value slope = e.binary<MulOp>(exponent, e.binary<PowOp>(base, expMinusOne, ax), ax);
    grads[0] = e.binary<MulOp>(dY, slope, ax);
  }
  if (need[1]) {
    Value slope = e.binary<MulOp>(getResult(), e.unary<LogOp>(base, ax), ax);
    grads[1] = e.binary<MulOp>(dY, slope, ax);
  }
  return success();
}
