//===- EinCost.cpp - CostOpInterface for the ein ops ----------------------===//
//
// One getFlops() per op. Bytes read/written default to the sizes of all
// operands/results (CostOpInterface in EinInterfaces.td); only the views
// (reshape, slice) override them. FLOPs per element of the elementwise ops (also in
// docs/ir.md):
//
//   the unary and binary ops (Ein_UnaryOp,      1
//   Ein_BinaryOp in ir/EinOps.td), cmp, select
//   cast                                          0
//   stochastic_round (hash, compare, round)        1
//   dropout: its expansion (passes/Dropout.cpp):   4
//     stochastic_round 1, the keep factor's sub and mul 2, x · factor 1
//
// Transcendentals (getTranscendentals, counted apart as XLA does; also
// included in the FLOPs above): one per result element of the ops with the
// EinTranscendental trait (exp, log, tanh, sqrt, rsqrt, pow, ...); 0 for
// every other op.
//
//===----------------------------------------------------------------------===//

#include "ir/EinOps.h"

using namespace mlir;
using namespace mlir::ein;

static int64_t numElements(Value value) {
  return cast<ShapedType>(value.getType()).getNumElements();
}

/// Cost of an elementwise op: result elements times `flopsPerElement`.
int64_t mlir::ein::elementwiseFlops(Operation *op, int64_t flopsPerElement) {
  return numElements(op->getResult(0)) * flopsPerElement;
}

// 2 · ∏batch · ∏lhs free · ∏contracted · ∏rhs free = 2 · |result| · ∏contracted.
int64_t ContractOp::getFlops() {
  ArrayRef<int64_t> lhsShape = getLhs().getType().getShape();
  int64_t contracted = 1;
  for (int64_t d : getLhsContract())
    contracted *= lhsShape[d];
  return 2 * numElements(getResult()) * contracted;
}

// One combine per input element, whatever the kind.
int64_t ReduceOp::getFlops() { return numElements(getInput()); }
// One add per update element.
int64_t ScatterAddOp::getFlops() { return numElements(getUpdates()); }

// Data movement only.
int64_t TransposeOp::getFlops() { return 0; }
int64_t ReshapeOp::getFlops() { return 0; }
int64_t BroadcastOp::getFlops() { return 0; }
int64_t CastOp::getFlops() { return 0; }
int64_t ConstantOp::getFlops() { return 0; }
int64_t IotaOp::getFlops() { return 0; }
int64_t GatherOp::getFlops() { return 0; }
int64_t SliceOp::getFlops() { return 0; }
int64_t ConcatOp::getFlops() { return 0; }

// A reshape is a view: it moves no data.
int64_t ReshapeOp::getBytesRead() { return 0; }
int64_t ReshapeOp::getBytesWritten() { return 0; }
// So is a slice (rows of its input's buffer). A concat copies what its
// inputs' producers do not write in place: counted as all of it (the
// default: its inputs read, its result written).
int64_t SliceOp::getBytesRead() { return 0; }
int64_t SliceOp::getBytesWritten() { return 0; }

// Elementwise ops (the table above): the unary and binary ones define
// getFlops in their ODS base classes (Ein_UnaryOp, Ein_BinaryOp).
int64_t CmpOp::getFlops() { return elementwiseFlops(*this, 1); }
int64_t SelectOp::getFlops() { return elementwiseFlops(*this, 1); }
int64_t StochasticRoundOp::getFlops() { return elementwiseFlops(*this, 1); }

// Transcendental ops (the EinTranscendental trait): one evaluation per
// result element.
int64_t mlir::ein::getTranscendentalCount(Operation *op) {
  if (!op->hasTrait<OpTrait::ein::EinTranscendental>())
    return 0;
  return numElements(op->getResult(0));
}

// stop_gradient is its input (erased after autodiff): free.
int64_t StopGradientOp::getFlops() { return 0; }
int64_t StopGradientOp::getBytesRead() { return 0; }
int64_t StopGradientOp::getBytesWritten() { return 0; }

// dropout: what ein-train-step expands it into, per element (see above).
int64_t DropoutOp::getFlops() { return elementwiseFlops(*this, 4); }
