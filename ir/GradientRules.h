//===- GradientRules.h - Building blocks of the ein ops' gradients -*- C++ -*-===//
//
// What every gradient rule (EinGradients.cpp: structural ops, sources,
// selection; EinElementwiseGradients.cpp: elementwise math) builds with: the
// axis names of the values it creates and an Emitter of the ops, at the
// forward op's location. Only those two files include it.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_IR_GRADIENTRULES_H
#define EINC_IR_GRADIENTRULES_H

#include "ir/EinBuilders.h"
#include "ir/EinOps.h"

#include "llvm/ADT/STLExtras.h"

namespace mlir::ein::gradient_rules {

inline ArrayAttr namesOf(Value value) { return GradientOpInterface::getAxisNames(value); }

/// names[order[0]], names[order[1]], ...: the names of a value whose dim i
/// is dim order[i] of the named one. Null if `names` is.
inline ArrayAttr pickNames(ArrayAttr names, ArrayRef<int64_t> order) {
  if (!names)
    return nullptr;
  SmallVector<Attribute> picked;
  for (int64_t d : order)
    picked.push_back(names[d]);
  return ArrayAttr::get(names.getContext(), picked);
}

/// `names` without the entries at `dims`. Null if `names` is.
inline ArrayAttr dropNames(ArrayAttr names, ArrayRef<int64_t> dims) {
  if (!names)
    return nullptr;
  SmallVector<Attribute> kept;
  for (auto [i, name] : llvm::enumerate(names))
    if (!llvm::is_contained(dims, static_cast<int64_t>(i)))
      kept.push_back(name);
  return ArrayAttr::get(names.getContext(), kept);
}

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

/// Starts a rule: one null gradient per operand.
inline Emitter begin(Operation *op, OpBuilder &b, SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(op->getNumOperands(), Value());
  return Emitter{b, op->getLoc()};
}

} // namespace mlir::ein::gradient_rules

#endif // EINC_IR_GRADIENTRULES_H
