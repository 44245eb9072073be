//===- CpuLowering.h - An `ein` function as a CPU-backend Program -*- C++ -*-===//
//
// Contractions become Matmul steps run by BLAS (cblas_sgemm, batched by a
// loop), with transposes and batch strides taken from the contraction's axes
// so that no copy is made where BLAS can read the layout (a transpose kernel
// is inserted only where it cannot); every other op becomes a Kernel step
// compiled by a KernelCompiler. Results match the reference backend.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_CPULOWERING_H
#define EINC_CODEGEN_CPULOWERING_H

#include "codegen/CpuKernels.h"
#include "runtime/core/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace ein::codegen {

/// Lowers `fn`; the Kernel steps index `kernels.table()` (call
/// kernels.compile() before running). Errors are diagnostics on the op.
mlir::FailureOr<einrt::Program> lowerToCpuProgram(mlir::func::FuncOp fn, KernelCompiler &kernels);

} // namespace ein::codegen

#endif // EINC_CODEGEN_CPULOWERING_H
