//===- CpuEpilogue.h - A GEMM epilogue's typed reading ----------*- C++ -*-===//
//
// Internal to the CPU lowering (codegen/CpuLowering.cpp): whether the ops
// of a contraction's epilogue group are exactly a matrix library's fused
// epilogue (einrt::GemmPost's typed fields). See CpuEpilogue.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_CPUEPILOGUE_H
#define EINC_CODEGEN_CPUEPILOGUE_H

#include "runtime/core/Program.h"

#include "mlir/IR/Operation.h"

#include <functional>

namespace ein::codegen {

/// The buffers of the values an epilogue reads and writes.
struct EpilogueBuffers {
  /// The buffer member `reader` reads for its operand `value` (through a
  /// broadcast read in place: the broadcast's input).
  std::function<int32_t(mlir::Operation *reader, mlir::Value value)> operand;
  /// The buffer holding a member's result.
  std::function<int32_t(mlir::Value result)> result;
};

/// Sets `matmul`'s GemmPost typed reading (library, alpha, residual, bias,
/// activation, aux, result) when `members` (its epilogue group, in order,
/// reading `product`) compute exactly that; else leaves it unset. The
/// kernel, operands and outputs must be set already.
void classifyEpilogue(einrt::Step &matmul, mlir::Value product,
                      llvm::ArrayRef<mlir::Operation *> members, const EpilogueBuffers &buffers);

} // namespace ein::codegen

#endif // EINC_CODEGEN_CPUEPILOGUE_H
