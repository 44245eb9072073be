//===- CpuKernelGen.h - One `ein` op as a loop-nest func.func -*- C++ -*-===//
//
// The generator half of the CPU kernel compiler (codegen/CpuKernels.h):
// an `ein` op is first described by a KernelSpec (codegen/KernelSpec.h:
// plain data, op name, element kinds, shapes, integer attributes, which the
// CUDA renderer reads as well), so that kernels can be
// generated in a context of their own and deduplicated by signature; the
// spec is then turned into a `func.func` of scf/arith/math/memref ops on
// flat, static, row-major memrefs, one per operand and one for the result.
//
// Buffer layout (the runtime's): f32 as f32, i32 as i32, i1 as one byte
// (memref<...xi8>, 0 or 1), bf16 as its 16 bits (memref<...xi16>), f16 as
// f16. Narrow floats are loaded into f32, computed in f32 and rounded to
// nearest even wherever a value of their type is made (ir/EinOps.td), so
// a fused kernel gives the unfused kernels' bits. Every memref is one-dimensional (the element
// count; rank 0 is one element) and the kernels compute row-major offsets
// themselves, so the lowered function takes one bare pointer per buffer.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_CPUKERNELGEN_H
#define EINC_CODEGEN_CPUKERNELGEN_H

#include "codegen/KernelSpec.h"
#include "passes/FuseElementwise.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ein::codegen {

/// A fusion group described as one kernel, and where its buffers come from.
struct FusedKernel {
  KernelSpec spec;
  /// Per kernel operand: the use it reads (the first, if several read the
  /// same value) and whether it reads that use's broadcast's input in place.
  std::vector<mlir::OpOperand *> inputUses;
  std::vector<bool> throughBroadcast;
  /// Per kernel result: the member whose result it is. Empty when nothing
  /// reads the group (dead code: no kernel; `spec` is then incomplete).
  std::vector<mlir::Operation *> outputs;
  /// Every member operand read in place through a broadcast.
  std::vector<mlir::OpOperand *> inPlaceReads;
  /// Every member operand computed from the element's index (an "ein.iota"
  /// node): no buffer is read for it.
  std::vector<mlir::OpOperand *> indexReads;
};

/// Describes `members` (adjacent ops of one fusion group, in order; see
/// passes/FuseElementwise.h) as one kernel. Errors are diagnostics.
mlir::FailureOr<FusedKernel> describeFusedKernel(llvm::ArrayRef<mlir::Operation *> members);

/// Describes `members` (the adjacent ops of one row group, in order; see
/// passes/FuseRows.h) as one "ein.rows" kernel. Fails without a diagnostic
/// where the ops are not a row kernel (a part of a group cloned by remat):
/// the caller then lowers them one by one.
mlir::FailureOr<FusedKernel> describeRowsKernel(llvm::ArrayRef<mlir::Operation *> members);

/// How an elementwise kernel (binary, cmp, select) reads one operand. When the
/// operand is an ein.broadcast of a smaller tensor, the kernel can read the
/// smaller tensor in place of the broadcast: a rank-0 value (Scalar), one
/// whose dims are the result's leading dims (Prefix: element i / inner, e.g.
/// layernorm's mean), or its trailing dims (Suffix: element i % size, e.g. a
/// bias). At most one Prefix/Suffix operand per op; the broadcast then need
/// not be materialised.
Access operandAccess(mlir::Operation *op, unsigned operandIndex);

/// The kernel access for a broadcast read (passes/FuseElementwise.h).
Access accessOf(mlir::ein::BroadcastRead read);

/// Describes `op` (not a contraction or constant; f32/bf16/f16/i32/i1
/// tensors with static shapes). Errors are diagnostics on `op`.
mlir::FailureOr<KernelSpec> describeKernel(mlir::Operation *op);

/// The trip count of the kernel's parallel loop: the loop whose iterations
/// [begin, end) one call computes (the last two arguments). 1: the kernel
/// ignores the range and one call computes everything (a reduction with
/// reduced dims before and after its kept ones).
int64_t parallelExtent(const KernelSpec &spec);

/// Appends `func.func @name(memref..., memref..., index, index)` computing
/// `spec` to `module`: operands, results, then the range of the parallel
/// loop (parallelExtent). The module's context has the func, arith, math,
/// memref and scf dialects.
void generateKernel(const KernelSpec &spec, llvm::StringRef name, mlir::ModuleOp module);

} // namespace ein::codegen

#endif // EINC_CODEGEN_CPUKERNELGEN_H
