//===- Emitter.h - Builds `ein` ops for the elaborator -----------*- C++ -*-===//
//
// The one place where the front end creates IR. Each method takes and returns
// `Tensor`s (an SSA value plus its named axes), computes the result type, and
// stamps the result's axis names on the op as its `axes` attribute.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_DSL_EMITTER_H
#define EINC_DSL_EMITTER_H

#include "dsl/Shape.h"
#include "ir/EinOps.h"

#include "mlir/IR/Builders.h"

namespace ein::dsl {

/// A value of the language: an SSA tensor and its named axes.
struct Tensor {
  mlir::Value value;
  Axes axes;
  mlir::Type elementType() const {
    return mlir::cast<mlir::RankedTensorType>(value.getType()).getElementType();
  }
  int64_t rank() const { return static_cast<int64_t>(axes.size()); }
};

class Emitter {
public:
  explicit Emitter(mlir::OpBuilder &builder) : b_(builder) {}

  mlir::OpBuilder &builder() { return b_; }
  void setLoc(mlir::Location loc) { loc_ = loc; }
  mlir::Location loc() const { return *loc_; }

  mlir::RankedTensorType tensorType(llvm::ArrayRef<Axis> axes, mlir::Type elementType) const;
  mlir::ArrayAttr axesAttr(llvm::ArrayRef<Axis> axes);

  /// A scalar constant of `elementType`, broadcast to `axes` when not empty.
  Tensor constant(double value, mlir::Type elementType, const Axes &axes = {});
  /// Operand dim i goes to result dim dims[i].
  Tensor broadcast(const Tensor &x, const Axes &to, llvm::ArrayRef<int64_t> dims);
  /// Result dim i is operand dim perm[i]; identity permutations emit nothing.
  Tensor transpose(const Tensor &x, llvm::ArrayRef<int64_t> perm);
  /// Same element count, new axes; a no-op reshape emits nothing.
  Tensor reshape(const Tensor &x, const Axes &to);
  Tensor reduce(const Tensor &x, mlir::ein::ReduceKind kind, llvm::ArrayRef<int64_t> dims);
  Tensor contract(const Tensor &lhs, const Tensor &rhs, llvm::ArrayRef<int64_t> lhsBatch,
                  llvm::ArrayRef<int64_t> rhsBatch, llvm::ArrayRef<int64_t> lhsContract,
                  llvm::ArrayRef<int64_t> rhsContract, const Axes &resultAxes);
  Tensor cmp(mlir::ein::CmpPredicate predicate, const Tensor &lhs, const Tensor &rhs);
  Tensor select(const Tensor &cond, const Tensor &onTrue, const Tensor &onFalse);
  Tensor cast(const Tensor &x, mlir::Type elementType);
  Tensor iota(const Axes &axes, int64_t dimension, mlir::Type elementType);
  Tensor gather(const Tensor &table, const Tensor &indices, const Axes &resultAxes);
  /// Rows [offset, offset + rows) of dimension 0 (ein.slice, a view).
  Tensor slice(const Tensor &x, int64_t offset, int64_t rows);
  /// The parts one after the other along dimension 0 (ein.concat): one
  /// element type, the same axes after the first; the result's first axis is
  /// `first`, its size the sum of theirs.
  Tensor concat(llvm::ArrayRef<Tensor> parts, const Axis &first);

  template <typename OpT> Tensor unary(const Tensor &x) {
    auto op = b_.create<OpT>(loc(), x.value.getType(), x.value, axesAttr(x.axes));
    return {op.getResult(), x.axes};
  }
  /// Both operands must have the same type (broadcasting happens before).
  template <typename OpT> Tensor binary(const Tensor &lhs, const Tensor &rhs) {
    auto op = b_.create<OpT>(loc(), lhs.value.getType(), lhs.value, rhs.value, axesAttr(lhs.axes));
    return {op.getResult(), lhs.axes};
  }

private:
  mlir::OpBuilder &b_;
  std::optional<mlir::Location> loc_;
};

} // namespace ein::dsl

#endif // EINC_DSL_EMITTER_H
