//===- CublasLtMapping.h - A GemmDesc as cuBLASLt's column-major calls -*- C++ -*-===//
//
// cuBLASLt multiplies column-major matrices; a GemmDesc (runtime/
// StepPayloads.h) describes row-major ones. A row-major r x c matrix with
// leading dimension ld is, byte for byte, the column-major c x r matrix
// with the same ld, so row-major C = op(A)·op(B) is column-major
// C^T = op(B)^T · op(A)^T: the call swaps A and B, swaps m and n, keeps k,
// each operand keeps its transpose flag and leading dimension, and the
// batch strides travel with their operands. Outer loops fold into the
// strided batch when they continue it (each of A, B and C steps by
// batch x its batch stride, or the batch is 1); the rest become several
// calls at element offsets.
//
// Pure (no CUDA headers): the cuda device (runtime/CublasLt.h) turns a
// CublasLtCall into descriptors; the unit tests evaluate the calls with a
// column-major reference GEMM against a row-major one of the GemmDesc.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_CUBLASLTMAPPING_H
#define EINC_RUNTIME_CUBLASLTMAPPING_H

#include "runtime/StepPayloads.h"

#include <cstdint>
#include <string>
#include <vector>

namespace einrt {

/// Element types of cuBLASLt's matrices (CUDA_R_32F, CUDA_R_16BF, CUDA_R_16F).
enum class LtType : uint8_t { F32, BF16, F16 };
const char *ltTypeName(LtType t);
/// The sums' type: CUBLAS_COMPUTE_32F, or CUBLAS_COMPUTE_32F_FAST_TF32
/// (f32 operands rounded to tf32 inside the product; opt-in).
enum class LtCompute : uint8_t { F32, F32FastTF32 };
/// What cuBLASLt applies to the product (CUBLASLT_MATMUL_DESC_EPILOGUE):
/// GemmEpilogue has no fused bias or activation yet, so only the default.
enum class LtEpilogue : uint8_t { Default };

/// One cublasLtMatmul: D = C = alpha · op(A)·op(B) + beta · C, column-major,
/// on `batch` matrices of each operand `stride*` elements apart, starting
/// `offset*` elements into the step's A, B (the cuBLASLt A and B, i.e. the
/// GemmDesc's B and A) and C.
struct CublasLtCall {
  LtType typeA = LtType::F32, typeB = LtType::F32, typeC = LtType::F32;
  LtCompute compute = LtCompute::F32;
  LtEpilogue epilogue = LtEpilogue::Default;
  bool transA = false, transB = false; // CUBLAS_OP_T where set
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 1, ldb = 1, ldc = 1;
  // The stored (before op) rows and columns of each layout.
  int64_t rowsA = 0, colsA = 0, rowsB = 0, colsB = 0, rowsC = 0, colsC = 0;
  int64_t batch = 1;
  int64_t strideA = 0, strideB = 0, strideC = 0;
  int64_t offsetA = 0, offsetB = 0, offsetC = 0;
  float alpha = 1.0f, beta = 0.0f; // beta 1: GemmEpilogue::Accumulate
  /// The largest power of two (bytes, at most 256) dividing every address
  /// of each operand the call touches, given allocations aligned to it
  /// (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES).
  int32_t alignA = 256, alignB = 256, alignC = 256;

  /// Every field, for caching an algorithm per descriptor (the offsets
  /// are left out: they change no descriptor, only the alignments do).
  std::string key() const;
};

struct CublasLtPlan {
  std::vector<CublasLtCall> calls; // in the order of the GemmDesc's matrices
  /// k = 0: no product, C := 0 (Store) or left alone (Accumulate); the
  /// device zeroes the C matrices itself (cuBLASLt is not asked).
  bool emptySum = false;
};

struct CublasLtOptions {
  bool tf32 = false; // f32 GEMMs as CUBLAS_COMPUTE_32F_FAST_TF32
};

/// The calls computing `g`; false with `error` for what cuBLASLt cannot
/// run (element types, f64 sums, sizes beyond int64 layouts).
bool mapGemmToCublasLt(const GemmDesc &g, const CublasLtOptions &options, CublasLtPlan &out,
                       std::string &error);

} // namespace einrt

#endif // EINC_RUNTIME_CUBLASLTMAPPING_H
