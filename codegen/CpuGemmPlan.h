//===- CpuGemmPlan.h - A contraction as a strided batched GEMM --*- C++ -*-===//
//
// How the CPU backend's Matmul step (runtime/StepPayloads.h, GemmDesc)
// reads a contraction's operands and writes its result where they lie:
// each is a StridedLayout (a dense row-major buffer, or a transpose,
// reshape or slice of one that codegen/CpuLowering.cpp folds into the
// GEMM). The plan is the one codegen/CpuLowering.cpp's header describes:
// dims grouped into batch, M, K, N; a group readable when it collapses to
// one stride; an operand readable as rows x cols with unit column stride
// (or transposed with unit row stride); batch dims as runs collapsing in
// A, B and C alike.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_CPUGEMMPLAN_H
#define EINC_CODEGEN_CPUGEMMPLAN_H

#include "runtime/StepPayloads.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace ein::codegen {

using Dims = std::vector<int64_t>;

/// A tensor's elements in a buffer: index i is at element
/// sum(i[d] * strides[d]) of it (from the buffer's start, or a view's).
struct StridedLayout {
  Dims shape, strides;
};

StridedLayout rowMajorLayout(const Dims &shape);
/// Result dim i is `in`'s dim perm[i] (ein.transpose).
StridedLayout permuteLayout(const StridedLayout &in, const Dims &perm);
/// The layout `shape` has when its row-major elements are `in`'s (an
/// ein.reshape of it), or nullopt when no strides express it.
std::optional<StridedLayout> reshapeLayout(const StridedLayout &in, const Dims &shape);
/// Whether `layout` is `shape`'s row-major layout (size-1 dims aside).
bool isRowMajor(const StridedLayout &layout);

/// How BLAS reads one operand: a row-major rows x cols matrix (stored as
/// such, or as cols x rows with op = transpose).
struct MatrixView {
  bool trans = false;
  int64_t ld = 1;
};

/// The contraction's operand plan for one K order: each operand readable
/// in place (view set) or first transposed to `perm` order (batch, rows,
/// cols), `elements` moved.
struct OperandPlan {
  std::optional<MatrixView> view;
  Dims perm;
  int64_t elements = 0;
};
struct ContractPlan {
  OperandPlan a, b;
  int64_t m = 1, n = 1, k = 1;
  /// Elements the transposes move (0: both operands read in place).
  int64_t cost() const { return (a.view ? 0 : a.elements) + (b.view ? 0 : b.elements); }
};

/// The plan moving the fewest elements: K in the lhs's memory order, or
/// else in the rhs's where that moves fewer.
ContractPlan planContract(const StridedLayout &lhs, const StridedLayout &rhs,
                          const einrt::ContractDims &dims);

/// The result (batch..., lhs free..., rhs free...) laid out as `c`, as BLAS
/// writes it: ldc, or nullopt when its N dims do not collapse to unit
/// stride or its M dims to one stride.
std::optional<int64_t> resultLd(const StridedLayout &c, int64_t batchDims, int64_t mDims,
                                int64_t n);

/// Fills `g`'s sizes, views and strides: A read as `av` from layout `a`
/// (batch dims `ab`), B likewise, C written as `c` (its batch dims
/// leading, ldc from resultLd). The innermost run of batch dims that
/// collapses in A, B and C is the batch, the other runs outer loops.
void describeGemm(einrt::GemmDesc &g, const ContractPlan &plan, const StridedLayout &a,
                  const Dims &ab, MatrixView av, const StridedLayout &b, const Dims &bb,
                  MatrixView bv, const StridedLayout &c, int64_t ldc);

} // namespace ein::codegen

#endif // EINC_CODEGEN_CPUGEMMPLAN_H
