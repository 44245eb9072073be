//===- Emitter.cpp - Builds `ein` ops for the elaborator ------------------===//
#include "dsl/Emitter.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace ein::dsl {

RankedTensorType Emitter::tensorType(llvm::ArrayRef<Axis> axes, Type elementType) const {
  llvm::SmallVector<int64_t> shape;
  for (const Axis &a : axes)
    shape.push_back(a.size);
  return RankedTensorType::get(shape, elementType);
}

ArrayAttr Emitter::axesAttr(llvm::ArrayRef<Axis> axes) {
  llvm::SmallVector<Attribute> names;
  for (const Axis &a : axes)
    names.push_back(b_.getStringAttr(a.name));
  return b_.getArrayAttr(names);
}

Tensor Emitter::constant(double value, Type elementType, const Axes &axes) {
  auto scalarType = RankedTensorType::get({}, elementType);
  DenseElementsAttr attr;
  if (auto ft = dyn_cast<FloatType>(elementType)) {
    attr = DenseElementsAttr::get(scalarType, b_.getFloatAttr(ft, value));
  } else if (elementType.isInteger(1)) {
    attr = DenseElementsAttr::get(scalarType, value != 0);
  } else {
    attr = DenseElementsAttr::get(scalarType,
                                  b_.getIntegerAttr(elementType, static_cast<int64_t>(value)));
  }
  auto op = b_.create<mlir::ein::ConstantOp>(loc(), scalarType, attr, axesAttr({}));
  Tensor scalar{op.getResult(), {}};
  if (axes.empty())
    return scalar;
  return broadcast(scalar, axes, {});
}

Tensor Emitter::broadcast(const Tensor &x, const Axes &to, llvm::ArrayRef<int64_t> dims) {
  if (x.axes == to)
    return x;
  auto op = b_.create<mlir::ein::BroadcastOp>(loc(), tensorType(to, x.elementType()), x.value, dims,
                                              axesAttr(to));
  return {op.getResult(), to};
}

Tensor Emitter::transpose(const Tensor &x, llvm::ArrayRef<int64_t> perm) {
  bool identity = true;
  Axes axes;
  for (size_t i = 0; i < perm.size(); ++i) {
    identity &= perm[i] == static_cast<int64_t>(i);
    axes.push_back(x.axes[perm[i]]);
  }
  if (identity)
    return x;
  auto op = b_.create<mlir::ein::TransposeOp>(loc(), tensorType(axes, x.elementType()), x.value,
                                              perm, axesAttr(axes));
  return {op.getResult(), axes};
}

Tensor Emitter::reshape(const Tensor &x, const Axes &to) {
  bool sameShape = to.size() == x.axes.size();
  for (size_t i = 0; sameShape && i < to.size(); ++i)
    sameShape = to[i].size == x.axes[i].size;
  if (sameShape)
    return {x.value, to};
  auto op = b_.create<mlir::ein::ReshapeOp>(loc(), tensorType(to, x.elementType()), x.value,
                                            axesAttr(to));
  return {op.getResult(), to};
}

Tensor Emitter::reduce(const Tensor &x, mlir::ein::ReduceKind kind, llvm::ArrayRef<int64_t> dims) {
  if (dims.empty())
    return x;
  Axes axes;
  for (int64_t i = 0; i < x.rank(); ++i)
    if (!llvm::is_contained(dims, i))
      axes.push_back(x.axes[i]);
  auto op = b_.create<mlir::ein::ReduceOp>(loc(), tensorType(axes, x.elementType()), x.value, kind,
                                           dims, axesAttr(axes));
  return {op.getResult(), axes};
}

Tensor Emitter::contract(const Tensor &lhs, const Tensor &rhs, llvm::ArrayRef<int64_t> lhsBatch,
                         llvm::ArrayRef<int64_t> rhsBatch, llvm::ArrayRef<int64_t> lhsContract,
                         llvm::ArrayRef<int64_t> rhsContract, const Axes &resultAxes) {
  auto op = b_.create<mlir::ein::ContractOp>(loc(), tensorType(resultAxes, lhs.elementType()),
                                             lhs.value, rhs.value, lhsBatch, rhsBatch, lhsContract,
                                             rhsContract, axesAttr(resultAxes));
  return {op.getResult(), resultAxes};
}

Tensor Emitter::cmp(mlir::ein::CmpPredicate predicate, const Tensor &lhs, const Tensor &rhs) {
  auto op = b_.create<mlir::ein::CmpOp>(loc(), tensorType(lhs.axes, b_.getI1Type()), predicate,
                                        lhs.value, rhs.value, axesAttr(lhs.axes));
  return {op.getResult(), lhs.axes};
}

Tensor Emitter::select(const Tensor &cond, const Tensor &onTrue, const Tensor &onFalse) {
  auto op = b_.create<mlir::ein::SelectOp>(loc(), onTrue.value.getType(), cond.value, onTrue.value,
                                           onFalse.value, axesAttr(onTrue.axes));
  return {op.getResult(), onTrue.axes};
}

Tensor Emitter::cast(const Tensor &x, Type elementType) {
  if (x.elementType() == elementType)
    return x;
  auto op = b_.create<mlir::ein::CastOp>(loc(), tensorType(x.axes, elementType), x.value,
                                         axesAttr(x.axes));
  return {op.getResult(), x.axes};
}

Tensor Emitter::iota(const Axes &axes, int64_t dimension, Type elementType) {
  auto op =
      b_.create<mlir::ein::IotaOp>(loc(), tensorType(axes, elementType), dimension, axesAttr(axes));
  return {op.getResult(), axes};
}

Tensor Emitter::gather(const Tensor &table, const Tensor &indices, const Axes &resultAxes) {
  auto op = b_.create<mlir::ein::GatherOp>(loc(), tensorType(resultAxes, table.elementType()),
                                           table.value, indices.value, axesAttr(resultAxes));
  return {op.getResult(), resultAxes};
}

Tensor Emitter::slice(const Tensor &x, int64_t offset, int64_t rows) {
  Axes axes = x.axes;
  axes.front().size = rows;
  auto op = b_.create<mlir::ein::SliceOp>(loc(), tensorType(axes, x.elementType()), x.value, offset,
                                          axesAttr(axes));
  return {op.getResult(), axes};
}

Tensor Emitter::concat(llvm::ArrayRef<Tensor> parts, const Axis &first) {
  Axes axes = parts.front().axes;
  axes.front() = first;
  llvm::SmallVector<mlir::Value> values;
  for (const Tensor &p : parts)
    values.push_back(p.value);
  auto op = b_.create<mlir::ein::ConcatOp>(loc(), tensorType(axes, parts.front().elementType()),
                                           values, axesAttr(axes));
  return {op.getResult(), axes};
}

} // namespace ein::dsl
