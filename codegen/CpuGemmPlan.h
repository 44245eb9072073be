//===- CpuGemmPlan.h - A contraction as a BLAS GEMM -------------*- C++ -*-===//
//
// The Matmul plan, which CpuLowering.cpp makes a Matmul step (and a
// transpose kernel per operand BLAS cannot read in place). The
// contraction's result is (batch..., lhs free..., rhs free...) row-major,
// i.e. dense M x N matrices C (ldc = N, stride M·N). The lhs dims form three groups — batch (in
// lhs_batch order), M (its free dims, ascending), K (its contracted dims) — and the rhs's batch, K
// and N likewise. A group is readable when its dims, in the group's order
// and ignoring size-1 dims, are consecutive in memory (each dim's stride is
// the next one's stride times its size): it then behaves as one dim of some
// stride. A is readable as M x K (ld = M's stride) when K's stride is 1, or
// as op(A) = (K x M)^T (transA, ld = K's stride) when M's stride is 1; B as
// K x N or (N x K)^T likewise. K's order is shared by both operands: the
// lhs's memory order is tried first, then the rhs's. Since trans flags are
// free on both operands and C is always M-major, C never comes out
// transposed (no operand swap is needed). Where no K order makes both
// readable, the order needing the fewest transposed elements is taken and
// the unreadable operand(s) are transposed to (batch, M, K) / (batch, K, N).
// Batch dims need no copy: consecutive batch pairs that collapse into one
// stride in both operands form a run; the innermost run is the Matmul's
// batch (one stride per operand), the others are outer loops (GemmLoop),
// e.g. attention's (batch, heads) over a (batch, seq, heads, hd) tensor.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_CODEGEN_CPUGEMMPLAN_H
#define EINC_CODEGEN_CPUGEMMPLAN_H

#include "runtime/core/Program.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace ein::codegen {

struct GemmPlan {
  /// Per operand (lhs, rhs): the permutation to (batch, rows, cols) by which
  /// a transpose kernel must copy it first, or nullopt when BLAS reads it in
  /// place.
  std::optional<std::vector<int64_t>> transpose[2];
  /// The GEMM on the operands as it reads them (transposed ones as
  /// (batch, rows, cols)); the element types `a`, `b`, `c` are left unset.
  einrt::GemmDesc gemm;
};

/// Plans the contraction `dims` of row-major tensors of shapes `lhsShape`
/// and `rhsShape` (its result: (batch..., lhs free..., rhs free...)).
GemmPlan planGemm(const std::vector<int64_t> &lhsShape, const std::vector<int64_t> &rhsShape,
                  const einrt::ContractDims &dims);

} // namespace ein::codegen

#endif // EINC_CODEGEN_CPUGEMMPLAN_H
