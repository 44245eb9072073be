//===- EinGradients.cpp - GradientOpInterface for the ein ops -------------===//
//
// One reverse-mode rule per op (the vector-Jacobian product), called by the
// `ein-autodiff` pass (passes/Autodiff.cpp) in reverse program order. A rule
// gets dY, the gradient of the op's result (same type as the result), and a
// flag per operand saying whether that operand's gradient is needed; it emits
// ops only for the flagged operands and returns one Value (or null) per
// operand. Forward values are reused, never recomputed. Every op a rule
// creates is named with `axes` derived from the forward values' names.
// The table of rules is in docs/autodiff.md. Here: the structural ops,
// sources, selection and conversion; elementwise math is in
// EinElementwiseGradients.cpp.
//
//===----------------------------------------------------------------------===//

#include "ir/GradientRules.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::ein;
using namespace mlir::ein::gradient_rules;

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
