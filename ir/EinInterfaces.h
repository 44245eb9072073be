//===- EinInterfaces.h - Op interfaces of the ein dialect -------*- C++ -*-===//
//
// CostOpInterface (static FLOPs and bytes of an op) and GradientOpInterface
// (reverse-mode differentiation of an op).
//
//===----------------------------------------------------------------------===//

#ifndef EIN_IR_EININTERFACES_H
#define EIN_IR_EININTERFACES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/TypeRange.h"

namespace mlir::ein {
/// Bytes of a statically shaped tensor: element count times element width
/// (f32/i32: 4, bf16/f16: 2, i1: 1). 0 for any other type.
int64_t getTensorBytes(Type type);
/// Sum of getTensorBytes over `types`.
int64_t getTotalBytes(TypeRange types);
/// Transcendental evaluations of `op` (CostOpInterface::getTranscendentals'
/// default): result elements of the ops with the EinTranscendental trait
/// (exp, log, tanh, sqrt, rsqrt, pow); else 0. Defined in ir/EinCost.cpp.
int64_t getTranscendentalCount(Operation *op);
/// An elementwise op's FLOPs: result elements times `flopsPerElement`.
int64_t elementwiseFlops(Operation *op, int64_t flopsPerElement);
} // namespace mlir::ein

#include "ir/EinInterfaces.h.inc"

#endif // EIN_IR_EININTERFACES_H
