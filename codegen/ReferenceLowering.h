//===- ReferenceLowering.h - An `ein` function as a runtime Program -*- C++ -*-===//
//
// Lowers a func.func of `ein` ops, op by op, to an einrt::Program whose
// steps the runtime's reference kernels execute: the oracle every later
// backend and pass is checked against.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_REFERENCELOWERING_H
#define EINC_CODEGEN_REFERENCELOWERING_H

#include "runtime/core/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LogicalResult.h"

#include <string>
#include <vector>

namespace ein::codegen {

/// "ein.add at file.ein:3:7": an op's name and source location, the `note`
/// of the steps lowered from it.
std::string describeOp(mlir::Operation *op);

/// The value each buffer of `fn`'s lowering holds, by buffer index: the
/// arguments in order, then one result per op in body order (constants
/// included). lowerToProgram creates its buffers so, and lowerToCpuProgram
/// keeps them (its transposes and views come after these, holding no value
/// of `fn`).
std::vector<mlir::Value> loweredValues(mlir::func::FuncOp fn);

/// Lowers `fn`; unsupported ops or types are reported on the op (as MLIR
/// diagnostics) and yield failure.
mlir::FailureOr<einrt::Program> lowerToProgram(mlir::func::FuncOp fn);

} // namespace ein::codegen

#endif // EINC_CODEGEN_REFERENCELOWERING_H
