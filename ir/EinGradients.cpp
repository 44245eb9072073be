//===- EinGradients.cpp - GradientOpInterface for the ein ops -------------===//
//
// One reverse-mode rule per op (the vector-Jacobian product), called by the
// `ein-autodiff` pass (passes/Autodiff.cpp) in reverse program order. A rule
// gets dY, the gradient of the op's result (same type as the result), and a
// flag per operand saying whether that operand's gradient is needed; it emits
// ops only for the flagged operands and returns one Value (or null) per
// operand. Forward values are reused, never recomputed. Every op a rule
// creates is named with `axes` derived from the forward values' names.
// The table of rules is in docs/autodiff.md.
//
//===----------------------------------------------------------------------===//

#include "ir/EinBuilders.h"
#include "ir/EinOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::ein;

//===----------------------------------------------------------------------===//
// Axis names
//===----------------------------------------------------------------------===//

ArrayAttr GradientOpInterface::getAxisNames(Value value) {
  ArrayAttr names;
  if (Operation *def = value.getDefiningOp()) {
    names = def->getAttrOfType<ArrayAttr>("axes");
  } else if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (auto fn = dyn_cast_or_null<FunctionOpInterface>(arg.getOwner()->getParentOp()))
      names = fn.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), "ein.axes");
  }
  auto type = dyn_cast<ShapedType>(value.getType());
  if (!names || !type || static_cast<int64_t>(names.size()) != type.getRank())
    return nullptr;
  return names;
}

static ArrayAttr namesOf(Value value) { return GradientOpInterface::getAxisNames(value); }

/// names[order[0]], names[order[1]], ...: the names of a value whose dim i
/// is dim order[i] of the named one. Null if `names` is.
static ArrayAttr pickNames(ArrayAttr names, ArrayRef<int64_t> order) {
  if (!names)
    return nullptr;
  SmallVector<Attribute> picked;
  for (int64_t d : order)
    picked.push_back(names[d]);
  return ArrayAttr::get(names.getContext(), picked);
}

/// `names` without the entries at `dims`. Null if `names` is.
static ArrayAttr dropNames(ArrayAttr names, ArrayRef<int64_t> dims) {
  if (!names)
    return nullptr;
  SmallVector<Attribute> kept;
  for (auto [i, name] : llvm::enumerate(names))
    if (!llvm::is_contained(dims, static_cast<int64_t>(i)))
      kept.push_back(name);
  return ArrayAttr::get(names.getContext(), kept);
}

//===----------------------------------------------------------------------===//
// Building blocks
//===----------------------------------------------------------------------===//

namespace {
/// Creates the ops of one rule at the builder's insertion point, at the
/// forward op's location. Each helper takes the `axes` of what it creates.
struct Emitter {
  OpBuilder &b;
  Location loc;

  /// A tensor of `type` filled with `value`: a scalar ein.constant, then an
  /// ein.broadcast (none for a scalar type).
  Value splat(double value, Type type, ArrayAttr axes) {
    return buildSplat(b, loc, type, value, axes);
  }
  Value zeros(Type type, ArrayAttr axes) { return splat(0.0, type, axes); }

  template <typename OpTy> Value unary(Value x, ArrayAttr axes) {
    return b.create<OpTy>(loc, x.getType(), x, axes);
  }
  template <typename OpTy> Value binary(Value lhs, Value rhs, ArrayAttr axes) {
    return b.create<OpTy>(loc, lhs.getType(), lhs, rhs, axes);
  }
  Value cmp(CmpPredicate predicate, Value lhs, Value rhs, ArrayAttr axes) {
    auto type = cast<RankedTensorType>(lhs.getType()).clone(b.getI1Type());
    return b.create<CmpOp>(loc, type, predicate, lhs, rhs, axes);
  }
  Value select(Value cond, Value onTrue, Value onFalse, ArrayAttr axes) {
    return b.create<SelectOp>(loc, onTrue.getType(), cond, onTrue, onFalse, axes);
  }
  Value broadcast(Value x, Type type, ArrayRef<int64_t> dims, ArrayAttr axes) {
    return b.create<BroadcastOp>(loc, type, x, dims, axes);
  }
  /// Sum over `dims` (the result drops them), accumulated in f32 for a
  /// narrow float: `x` widened, summed, and the sum rounded once to `x`'s
  /// type. A narrow `sum` rounds after every addition (ir/EinOps.td), and
  /// the sums a rule makes add up many terms (a gain's gradient, one per
  /// row); the gradient keeps the type of its value (docs/autodiff.md).
  Value reduceSum(Value x, ArrayRef<int64_t> dims, ArrayAttr axes) {
    auto type = cast<RankedTensorType>(x.getType());
    Type element = type.getElementType();
    Value wide = castTo(x, accumulatorOf(element), namesOf(x));
    SmallVector<int64_t> shape;
    for (auto [i, size] : llvm::enumerate(type.getShape()))
      if (!llvm::is_contained(dims, static_cast<int64_t>(i)))
        shape.push_back(size);
    auto sumType = cast<RankedTensorType>(wide.getType()).clone(shape);
    Value sum = b.create<ReduceOp>(loc, sumType, wide, ReduceKind::sum, dims, axes);
    return castTo(sum, element, axes);
  }
  /// Rows of `updates` summed into a zero table of `type` at `indices`
  /// (the gradient of a gather), accumulated in f32 for a narrow float as
  /// reduceSum is.
  Value scatterAdd(Value updates, Value indices, Type type, ArrayAttr axes) {
    Type element = cast<RankedTensorType>(type).getElementType();
    Value wide = castTo(updates, accumulatorOf(element), namesOf(updates));
    auto tableType = cast<RankedTensorType>(type).clone(accumulatorOf(element));
    Value sum = b.create<ScatterAddOp>(loc, tableType, wide, indices, axes);
    return castTo(sum, element, axes);
  }
  /// The type a rule's sums of `element` accumulate in: f32 for a float
  /// narrower than 32 bits, else `element` itself.
  Type accumulatorOf(Type element) {
    auto f = dyn_cast<FloatType>(element);
    return f && f.getWidth() < 32 ? Type(b.getF32Type()) : element;
  }
  /// Result dim i = x dim perm[i]; no op for the identity.
  Value transpose(Value x, ArrayRef<int64_t> perm, ArrayAttr axes) {
    if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
      return x;
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape;
    for (int64_t d : perm)
      shape.push_back(type.getDimSize(d));
    return b.create<TransposeOp>(loc, type.clone(shape), x, perm, axes);
  }
  /// No op when `x` already has `type`.
  Value reshape(Value x, Type type, ArrayAttr axes) {
    if (x.getType() == type)
      return x;
    return b.create<ReshapeOp>(loc, type, x, axes);
  }
  /// No op when `x` already has element type `elt`.
  Value castTo(Value x, Type elt, ArrayAttr axes) {
    auto type = cast<RankedTensorType>(x.getType());
    if (type.getElementType() == elt)
      return x;
    return b.create<CastOp>(loc, type.clone(elt), x, axes);
  }
};
} // namespace

/// Starts a rule: one null gradient per operand.
static Emitter begin(Operation *op, OpBuilder &b, SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(op->getNumOperands(), Value());
  return Emitter{b, op->getLoc()};
}

//===----------------------------------------------------------------------===//
// Structural ops
//===----------------------------------------------------------------------===//

/// Gradient of one operand `x` of a contraction, the other being `other`.
/// With Y = [batch, lhs free, rhs free], dX contracts dY with `other` over
/// other's free dims (batch dims stay paired): contract(dY, other) has the
/// layout [batch, x free, x contracted], contract(other, dY) has
/// [batch, x contracted, x free] (x's contracted dims ordered like their
/// partners in `other`). The order that yields x's own layout is chosen
/// (x @ w: dx = dY·wᵀ, dw = xᵀ·dY); otherwise dY goes on x's side and a
/// transpose restores x's layout.
static Value contractOperandGrad(Emitter &e, ContractOp op, Value dY, bool isLhs) {
  Value x = isLhs ? op.getLhs() : op.getRhs();
  Value other = isLhs ? op.getRhs() : op.getLhs();
  ArrayRef<int64_t> xBatch = isLhs ? op.getLhsBatch() : op.getRhsBatch();
  ArrayRef<int64_t> xContract = isLhs ? op.getLhsContract() : op.getRhsContract();
  ArrayRef<int64_t> oBatch = isLhs ? op.getRhsBatch() : op.getLhsBatch();
  ArrayRef<int64_t> oContract = isLhs ? op.getRhsContract() : op.getLhsContract();
  auto xType = cast<RankedTensorType>(x.getType());
  auto oType = cast<RankedTensorType>(other.getType());

  auto freeDims = [](int64_t rank, ArrayRef<int64_t> batch, ArrayRef<int64_t> contract) {
    SmallVector<int64_t> free;
    for (int64_t d = 0; d < rank; ++d)
      if (!llvm::is_contained(batch, d) && !llvm::is_contained(contract, d))
        free.push_back(d);
    return free;
  };
  SmallVector<int64_t> xFree = freeDims(xType.getRank(), xBatch, xContract);
  SmallVector<int64_t> oFree = freeDims(oType.getRank(), oBatch, oContract);
  int64_t nb = xBatch.size();

  // Positions in dY of the batch dims and of other's free dims.
  SmallVector<int64_t> dYBatch = llvm::to_vector(llvm::seq<int64_t>(0, nb));
  int64_t oFreeStart = isLhs ? nb + (int64_t)xFree.size() : nb;
  SmallVector<int64_t> dYOtherFree =
      llvm::to_vector(llvm::seq<int64_t>(oFreeStart, oFreeStart + oFree.size()));

  // x's contracted dims, ordered like their partners in `other`.
  SmallVector<int64_t> pairs = llvm::to_vector(llvm::seq<int64_t>(0, xContract.size()));
  llvm::sort(pairs, [&](int64_t a, int64_t b) { return oContract[a] < oContract[b]; });
  SmallVector<int64_t> xContractByOther;
  for (int64_t k : pairs)
    xContractByOther.push_back(xContract[k]);

  // layout[i] = the dim of x held by dim i of the new contraction's result.
  SmallVector<int64_t> dYFirstLayout(xBatch), otherFirstLayout(xBatch);
  llvm::append_range(dYFirstLayout, xFree);
  llvm::append_range(dYFirstLayout, xContractByOther);
  llvm::append_range(otherFirstLayout, xContractByOther);
  llvm::append_range(otherFirstLayout, xFree);
  auto isIdentity = [](ArrayRef<int64_t> layout) {
    return llvm::equal(layout, llvm::seq<int64_t>(0, layout.size()));
  };
  bool dYFirst = isIdentity(dYFirstLayout) || (!isIdentity(otherFirstLayout) && isLhs);
  ArrayRef<int64_t> layout = dYFirst ? dYFirstLayout : otherFirstLayout;

  SmallVector<int64_t> shape;
  for (int64_t d : layout)
    shape.push_back(xType.getDimSize(d));
  ArrayAttr xNames = namesOf(x);
  Type cType = xType.clone(shape);
  ArrayAttr cNames = pickNames(xNames, layout);

  // Operands share x's element type; dY may be wider (f32 accumulation).
  Value g = e.castTo(dY, xType.getElementType(), namesOf(op.getResult()));
  Value c = dYFirst ? e.b.create<ContractOp>(e.loc, cType, g, other, dYBatch, oBatch, dYOtherFree,
                                             oFree, cNames)
                    : e.b.create<ContractOp>(e.loc, cType, other, g, oBatch, dYBatch, oFree,
                                             dYOtherFree, cNames);

  // dX dim d is dim (position of d in layout) of c.
  SmallVector<int64_t> perm(layout.size());
  for (auto [pos, d] : llvm::enumerate(layout))
    perm[d] = pos;
  return e.transpose(c, perm, xNames);
}

// contract → two contracts (each only if needed), each with a transpose
// back into the operand's layout when that is not the identity.
LogicalResult ContractOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                        SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (need[0])
    grads[0] = contractOperandGrad(e, *this, dY, /*isLhs=*/true);
  if (need[1])
    grads[1] = contractOperandGrad(e, *this, dY, /*isLhs=*/false);
  return success();
}

// transpose → the inverse transpose.
LogicalResult TransposeOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                         SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (!need[0])
    return success();
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  grads[0] = e.transpose(dY, inverse, namesOf(getInput()));
  return success();
}

// reshape → reshape back.
LogicalResult ReshapeOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                       SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (need[0])
    grads[0] = e.reshape(dY, getInput().getType(), namesOf(getInput()));
  return success();
}

// broadcast → sum over the new dims and the expanded size-1 dims, then a
// reshape to restore those size-1 dims.
LogicalResult BroadcastOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                         SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (!need[0])
    return success();
  ArrayRef<int64_t> inShape = getInput().getType().getShape();
  ArrayRef<int64_t> outShape = getResult().getType().getShape();
  ArrayRef<int64_t> dims = getDimensions();
  SmallVector<int64_t> summed;
  for (int64_t d = 0; d < (int64_t)outShape.size(); ++d) {
    const auto *it = llvm::find(dims, d);
    bool isNew = it == dims.end();
    bool expanded = !isNew && inShape[it - dims.begin()] != outShape[d];
    if (isNew || expanded)
      summed.push_back(d);
  }
  Value g = dY;
  if (!summed.empty())
    g = e.reduceSum(dY, summed, dropNames(getAxesAttr(), summed));
  grads[0] = e.reshape(g, getInput().getType(), namesOf(getInput()));
  return success();
}

// reduce sum → broadcast back; reduce max/min → dY to the positions equal
// to the result, split evenly among ties (torch.amax / torch.amin).
LogicalResult ReduceOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                      SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (!need[0])
    return success();
  Value x = getInput();
  Type xType = x.getType();
  ArrayAttr xNames = namesOf(x);
  ArrayAttr yNames = getAxesAttr();
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < getInput().getType().getRank(); ++d)
    if (!llvm::is_contained(getDimensions(), d))
      kept.push_back(d);

  if (getKind() == ReduceKind::sum) {
    grads[0] = e.broadcast(dY, xType, kept, xNames);
    return success();
  }
  // max/min: mask of the extrema, count of ties, dY / count to each.
  Value y = e.broadcast(getResult(), xType, kept, xNames);
  Value mask = e.cmp(CmpPredicate::eq, x, y, xNames);
  Value zero = e.zeros(xType, xNames);
  Value hits = e.select(mask, e.splat(1.0, xType, xNames), zero, xNames);
  Value count = e.reduceSum(hits, getDimensions(), yNames);
  Value share = e.binary<DivOp>(dY, count, yNames);
  grads[0] = e.select(mask, e.broadcast(share, xType, kept, xNames), zero, xNames);
  return success();
}

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

//===----------------------------------------------------------------------===//
// Comparison, selection, conversion, sources
//===----------------------------------------------------------------------===//

// cmp → none (its result is i1).
LogicalResult CmpOp::buildGradient(OpBuilder &b, Value, ArrayRef<bool>,
                                   SmallVectorImpl<Value> &grads) {
  begin(*this, b, grads);
  return success();
}

// select → select(cond, dY, 0) to on_true, select(cond, 0, dY) to on_false;
// none to cond.
LogicalResult SelectOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                      SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (!need[1] && !need[2])
    return success();
  ArrayAttr ax = getAxesAttr();
  Value zero = e.zeros(dY.getType(), ax);
  if (need[1])
    grads[1] = e.select(getCond(), dY, zero, ax);
  if (need[2])
    grads[2] = e.select(getCond(), zero, dY, ax);
  return success();
}

// cast → cast back to the input's element type.
LogicalResult CastOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                    SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (need[0])
    grads[0] = e.castTo(dY, getInput().getType().getElementType(), getAxesAttr());
  return success();
}

// stochastic_round → straight through: the gradient cast back to f32; none
// for the seed.
LogicalResult StochasticRoundOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                               SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (need[0])
    grads[0] = e.castTo(dY, getInput().getType().getElementType(), getAxesAttr());
  return success();
}

// constant, iota → no operands.
LogicalResult ConstantOp::buildGradient(OpBuilder &b, Value, ArrayRef<bool>,
                                        SmallVectorImpl<Value> &grads) {
  begin(*this, b, grads);
  return success();
}

LogicalResult IotaOp::buildGradient(OpBuilder &b, Value, ArrayRef<bool>,
                                    SmallVectorImpl<Value> &grads) {
  begin(*this, b, grads);
  return success();
}

//===----------------------------------------------------------------------===//
// Slices
//===----------------------------------------------------------------------===//

// slice → dY written into its rows of zeros: concat(zeros, dY, zeros), the
// empty parts left out. ein-autodiff merges the concats of disjoint slices
// of one tensor into one (buildGradientSum, ir/EinBuilders.h).
LogicalResult SliceOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                     SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (!need[0])
    return success();
  RankedTensorType in = getInput().getType();
  ArrayAttr names = namesOf(getInput());
  int64_t rows = getResult().getType().getDimSize(0), offset = getOffset();
  auto zeros = [&](int64_t n) {
    SmallVector<int64_t> shape(in.getShape());
    shape[0] = n;
    return e.zeros(in.clone(shape), names);
  };
  SmallVector<Value> parts;
  if (offset > 0)
    parts.push_back(zeros(offset));
  parts.push_back(dY);
  if (int64_t after = in.getDimSize(0) - offset - rows; after > 0)
    parts.push_back(zeros(after));
  grads[0] = parts.size() == 1 ? dY : b.create<ConcatOp>(e.loc, in, parts, names).getResult();
  return success();
}

// concat → each input's rows of dY (a slice each).
LogicalResult ConcatOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                      SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  int64_t offset = 0;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    if (need[i])
      grads[i] = type == dY.getType()
                     ? dY
                     : b.create<SliceOp>(e.loc, type, dY, offset, namesOf(input)).getResult();
    offset += type.getDimSize(0);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

// gather → scatter_add of dY into the table (repeated ids accumulate);
// none to the indices.
LogicalResult GatherOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                      SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (need[0])
    grads[0] = e.scatterAdd(dY, getIndices(), getTable().getType(), namesOf(getTable()));
  return success();
}

// scatter_add → gather of dY at the indices; none to the indices.
LogicalResult ScatterAddOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                          SmallVectorImpl<Value> &grads) {
  Emitter e = begin(*this, b, grads);
  if (need[0])
    grads[0] =
        b.create<GatherOp>(e.loc, getUpdates().getType(), dY, getIndices(), namesOf(getUpdates()));
  return success();
}

// stop_gradient → none: its result is a constant to the backward (what
// jax.lax.stop_gradient and torch's .detach() do).
LogicalResult StopGradientOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                            SmallVectorImpl<Value> &grads) {
  grads.assign(getOperation()->getNumOperands(), Value());
  return success();
}

// dropout → a dropout of dY with the same p and site: dY · keep / (1 − p),
// the forward's mask, drawn again from the same key when it is expanded.
LogicalResult DropoutOp::buildGradient(OpBuilder &b, Value dY, ArrayRef<bool> need,
                                       SmallVectorImpl<Value> &grads) {
  grads.assign(1, Value());
  if (need[0])
    grads[0] =
        b.create<DropoutOp>(getLoc(), dY.getType(), dY, getPAttr(), getSiteAttr(), getAxesAttr());
  return success();
}
