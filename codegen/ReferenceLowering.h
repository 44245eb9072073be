//===- ReferenceLowering.h - An `ein` function as a runtime Program -*- C++ -*-===//
//
// Lowers a func.func of `ein` ops, op by op, to an einrt::Program whose
// steps the runtime's reference kernels execute: the oracle every later
// backend and pass is checked against.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_REFERENCELOWERING_H
#define EINC_CODEGEN_REFERENCELOWERING_H

#include "runtime/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LogicalResult.h"

namespace ein::codegen {

/// Lowers `fn`; unsupported ops or types are reported on the op (as MLIR
/// diagnostics) and yield failure.
mlir::FailureOr<einrt::Program> lowerToProgram(mlir::func::FuncOp fn);

} // namespace ein::codegen

#endif // EINC_CODEGEN_REFERENCELOWERING_H
