//===- Lowerings.h - The compiler's half of the backend registry -*- C++ -*-===//
//
// A backend (runtime/core/Backend.h) names the lowering its Programs come
// from and the kernel section it carries; this is where the compiler finds
// both, by those names, so that the driver never names a backend:
//
//   programLowerings()   "cpu": fused kernels into the kernel table and
//                        GEMM steps (CpuLowering.h); "reference": the
//                        interpreter's steps (ReferenceLowering.h)
//   kernelSections()     "cuda": the kernel table rendered as CUDA C++
//                        (CudaRenderer.h), encoded as the program file's
//                        section (runtime/cuda/CudaKernels.h)
//
// A new backend adds a row to each table it needs (or reuses a lowering, as
// cuda reuses the cpu one).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_LOWERINGS_H
#define EINC_CODEGEN_LOWERINGS_H

#include "runtime/core/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace ein::codegen {

class KernelCompiler;

struct ProgramLowering {
  const char *name;
  /// Whether it runs fused elementwise and row groups as kernels (the
  /// fusion passes run before it).
  bool fused;
  /// Whether it compiles kernels into a KernelCompiler's table.
  bool kernels;
  /// `fn` as a Program; `kernels` is the table (for lowerings with kernels).
  mlir::FailureOr<einrt::Program> (*lower)(mlir::func::FuncOp fn, KernelCompiler *kernels);
};

struct KernelSectionRenderer {
  const char *name;
  /// The section of `kernels`' whole table, with notes from `programs`;
  /// failure after a diagnostic.
  mlir::FailureOr<std::vector<uint8_t>> (*render)(
      const KernelCompiler &kernels, const std::vector<const einrt::Program *> &programs);
};

const std::vector<ProgramLowering> &programLowerings();
const std::vector<KernelSectionRenderer> &kernelSections();
/// The row named `name`, or null.
const ProgramLowering *findProgramLowering(std::string_view name);
const KernelSectionRenderer *findKernelSection(std::string_view name);

/// The kernel section `name` of `kernels`' whole table, notes from
/// `programs` (einc compile, train, sample and run all render it here);
/// failure after a message ("einc: this einc cannot render ...") when there
/// is no renderer of that name or no kernel table.
mlir::FailureOr<std::vector<uint8_t>>
renderKernelSection(std::string_view name, const KernelCompiler *kernels,
                    const std::vector<const einrt::Program *> &programs);

} // namespace ein::codegen

#endif // EINC_CODEGEN_LOWERINGS_H
