//===- CpuLayoutFolds.h - Transposes folded into GEMM layouts ---*- C++ -*-===//
//
// Which ein.transpose ops the CPU lowering (codegen/CpuLowering.cpp) folds
// into the strided operands and results of its Matmul steps instead of
// running a transpose kernel. One rule, for f32 GEMMs on every library
// alike (each reads GemmDesc's leading dimensions and batch strides;
// narrow GEMMs keep their transposes: CpuLayoutFolds.cpp, f32Gemm):
//
//  - read fold: a transpose whose every reader, through reshapes and
//    slices, is a contraction that reads it in place: its GEMM, planned on
//    the strided layout (codegen/CpuGemmPlan.h), needs no transpose;
//  - write fold: a transpose of (reshapes of) a contraction read by that
//    transpose alone, the contraction without an epilogue: the GEMM writes
//    its C in the transpose's layout, into the transpose's buffer.
//
// Any other transpose (one also read by a kernel, returned, or whose
// strides BLAS cannot take) stays a step. gpt's attention: q, k and v
// read from the qkv GEMM's output, y written as [batch ctx (heads hd)],
// dY read in place by both backward matmuls.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_CPULAYOUTFOLDS_H
#define EINC_CODEGEN_CPULAYOUTFOLDS_H

#include "codegen/CpuGemmPlan.h"
#include "ir/EinOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace ein::codegen {

class LayoutFolds {
public:
  /// `standalone(op)`: op is lowered as its own step (no fused or row
  /// kernel's member); `dims(contract)`: its axes as the Matmul plans them.
  LayoutFolds(mlir::Block &body, llvm::function_ref<bool(mlir::Operation *)> standalone,
              llvm::function_ref<einrt::ContractDims(mlir::ein::ContractOp)> dims);

  /// Whether `op` is a folded transpose (no step).
  bool folded(mlir::Operation *op) const { return reads_.contains(op) || writes_.contains(op); }

  /// A contraction operand read through folded transposes: the elements
  /// are those of `reader`'s operand 0 (the chain's first reshape, slice or
  /// transpose), from element `offset` on, laid out as `layout`.
  struct Source {
    mlir::Operation *reader = nullptr;
    int64_t offset = 0;
    StridedLayout layout;
  };
  /// nullopt: the operand is read as it is (its own buffer, row-major).
  std::optional<Source> sourceOf(mlir::Value operand) const;

  /// A contraction whose result a folded transpose lays out: the GEMM
  /// writes that transpose's buffer, as `layout`.
  struct Target {
    mlir::ein::TransposeOp transpose;
    StridedLayout layout;
  };
  std::optional<Target> targetOf(mlir::ein::ContractOp contract) const;

private:
  std::optional<Source> trace(mlir::Value v, bool &throughFold) const;

  llvm::DenseSet<mlir::Operation *> reads_;           // read-folded transposes
  llvm::DenseSet<mlir::Operation *> writes_;          // write-folded transposes
  llvm::DenseMap<mlir::Operation *, Target> targets_; // contract -> its transpose
};

} // namespace ein::codegen

#endif // EINC_CODEGEN_CPULAYOUTFOLDS_H
