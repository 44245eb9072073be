//===- EinOps.h - Operations of the ein dialect -----------------*- C++ -*-===//
//
// Everything a user of the dialect needs: the dialect, enums (ReduceKind,
// CmpPredicate), interfaces, traits and the op classes.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_IR_EINOPS_H
#define EIN_IR_EINOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ir/EinDialect.h"
#include "ir/EinInterfaces.h"
#include "ir/EinTraits.h"

#include "ir/EinEnums.h.inc"

#define GET_OP_CLASSES
#include "ir/EinOps.h.inc"

namespace mlir::ein {
/// Replaces every `ein.stop_gradient` under `root` by its input: what
/// ein-autodiff does once the backward is built, and a compile of @forward
/// alone (no backward) before lowering.
void eraseStopGradients(Operation *root);
/// Replaces every `ein.dropout` under `root` by its input: dropout is the
/// identity outside @train_step (evaluation, sampling, `einc run` of
/// @forward or @grad), where ein-train-step has expanded its own.
void eraseDropouts(Operation *root);
} // namespace mlir::ein

#endif // EIN_IR_EINOPS_H
