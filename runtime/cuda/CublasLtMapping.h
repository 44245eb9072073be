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
// Pure (no CUDA headers): the cuda device (runtime/cuda/CublasLt.h) turns a
// CublasLtCall into descriptors; the unit tests evaluate the calls with a
// column-major reference GEMM against a row-major one of the GemmDesc.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_CUBLASLTMAPPING_H
#define EINC_RUNTIME_CUBLASLTMAPPING_H

#include "runtime/base/Status.h"
#include "runtime/core/StepPayloads.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace einrt {

/// Element types of cuBLASLt's matrices (CUDA_R_32F, CUDA_R_16BF, CUDA_R_16F).
enum class LtType : uint8_t { F32, BF16, F16 };
const char *ltTypeName(LtType t);
/// The sums' type: CUBLAS_COMPUTE_32F, or CUBLAS_COMPUTE_32F_FAST_TF32
/// (f32 operands rounded to tf32 inside the product; opt-in).
enum class LtCompute : uint8_t { F32, F32FastTF32 };
/// What cuBLASLt applies to the product (CUBLASLT_MATMUL_DESC_EPILOGUE,
/// CUBLASLT_EPILOGUE_*): a GemmPost's typed reading where cuBLASLt has it.
enum class LtEpilogue : uint8_t {
  Default,     // DEFAULT
  Bias,        // BIAS
  Relu,        // RELU
  ReluBias,    // RELU_BIAS
  Gelu,        // GELU
  GeluBias,    // GELU_BIAS
  GeluAux,     // GELU_AUX: the GELU's input written to aux
  GeluAuxBias, // GELU_AUX_BIAS
};
const char *ltEpilogueName(LtEpilogue e);

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
  float alpha = 1.0f, beta = 0.0f; // beta 1: GemmEpilogue::Accumulate, or a residual
  /// Epilogues: C is read from the residual buffer (beta 1) and D written
  /// to the result buffer (CublasLtPlan::pointers), at the same offsets,
  /// layout and alignment; else D is C.
  bool separateD = false;
  /// BIAS epilogues: a vector of m (the GemmDesc's n) elements, one per
  /// column-major row of D, the same for every matrix (batch stride 0).
  LtType typeBias = LtType::F32;
  /// GELU_AUX epilogues: the aux matrix (D's type) at D's offsets, its
  /// leading dimension and batch stride (multiples of 8).
  int64_t auxLd = 0, auxStride = 0;
  /// The largest power of two (bytes, at most 256) dividing every address
  /// of each operand the call touches: its buffer's own alignment
  /// (LtAlignments) and the offsets and batch strides from there
  /// (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES; C's is D's too). The bias
  /// and aux pointers' likewise: the heuristic reads their alignment from
  /// the pointers themselves (CublasLt asks it with stand-ins of these).
  int32_t alignA = 256, alignB = 256, alignC = 256, alignBias = 256, alignAux = 256;

  /// Every field, for caching an algorithm per descriptor (the offsets
  /// are left out: they change no descriptor, only the alignments do).
  std::string key() const;
};

/// "cuBLASLt NT m=64 n=32 k=16 batch=1 bf16·bf16->f32 GELU_BIAS": for messages.
std::string describeLtCall(const CublasLtCall &call);

/// Where a GEMM-with-epilogue's calls find their pointers: indices into
/// the step's epilogue buffers (GemmPost::operands, then ::outputs, as the
/// device is given them), or -1 for the step's C.
struct LtPostPointers {
  int32_t d = -1, c = -1, bias = -1, aux = -1;
};

struct CublasLtPlan {
  std::vector<CublasLtCall> calls; // in the order of the GemmDesc's matrices
  /// k = 0: no product, C := 0 (Store) or left alone (Accumulate); the
  /// device zeroes the C matrices itself (cuBLASLt is not asked).
  bool emptySum = false;
  /// The GemmDesc has an epilogue that the calls do not compute: the
  /// device runs its kernel (rendered CUDA) over the product afterwards.
  bool epilogueKernel = false;
  /// Why (for messages and tests): "" when cuBLASLt fuses it or there is none.
  std::string unfusedWhy;
  LtPostPointers pointers; // where the calls fuse the epilogue
};

/// Where a step's buffers start, as alignments (bytes, a power of two, at
/// most 256: what cuBLASLt may assume): A, B, C and the epilogue's buffers
/// (GemmPost::operands, then ::outputs). A view sits at any element offset
/// of its root (runtime/core/Arena.h), so a buffer may be aligned to as little
/// as its element.
struct LtAlignments {
  int32_t a = 256, b = 256, c = 256;
  std::vector<int32_t> post; // empty: 256 each
};
/// The alignment of a device address (256 for null).
int32_t addressAlignment(const void *address);

struct CublasLtOptions {
  bool tf32 = false; // f32 GEMMs as CUBLAS_COMPUTE_32F_FAST_TF32
};

/// The calls computing `g`; Invalid for what cuBLASLt cannot run (element types, f64 sums, sizes
/// beyond int64 layouts). A GemmPost with a typed reading (library) becomes the calls' epilogue
/// where cuBLASLt has it, given `postTypes`: the dtypes of the epilogue buffers (operands, then
/// outputs); otherwise, or without `postTypes`, the plan says epilogueKernel. `bases`: where the
/// buffers start (null: every one 256-byte aligned).
Expected<CublasLtPlan> mapGemmToCublasLt(const GemmDesc &g, const CublasLtOptions &options,
                                         const std::vector<DType> *postTypes = nullptr,
                                         const LtAlignments *bases = nullptr);

/// What cuBLASLt's heuristic (cublasLtMatmulAlgoGetHeuristic) answers for
/// one call: an algorithm or none (asking can also fail: Expected).
enum class LtHeuristic : uint8_t { Found, None };

/// The plans the cuda device runs: mapGemmToCublasLt's, except that a fused
/// epilogue for one of whose calls the heuristic has no algorithm falls
/// back to the plain product and the epilogue's rendered kernel after it
/// (epilogueKernel, unfusedWhy says so). The heuristic is asked once per
/// distinct call (CublasLtCall::key(): shape, types, epilogue, alignments);
/// its answers are remembered, so every later plan of the same call shape
/// is the same. Pure given `ask`: unit-tested with a heuristic that has no
/// algorithm for fused epilogues.
class CublasLtPlanner {
public:
  using Ask = std::function<Expected<LtHeuristic>(const CublasLtCall &call)>;
  explicit CublasLtPlanner(Ask ask) : ask_(std::move(ask)) {}
  /// The plan; Unavailable where the heuristic has no algorithm, or the
  /// failure of mapGemmToCublasLt or of asking.
  Expected<CublasLtPlan> plan(const GemmDesc &g, const CublasLtOptions &options,
                              const std::vector<DType> *postTypes = nullptr,
                              const LtAlignments *bases = nullptr);
  /// Distinct calls the heuristic was asked about.
  size_t asked() const { return found_.size(); }

private:
  /// Whether every call of `plan` has an algorithm (asking where not
  /// known), or the failure of asking.
  Expected<bool> algorithms(const CublasLtPlan &plan);

  Ask ask_;
  std::map<std::string, bool> found_; // by CublasLtCall::key()
};

} // namespace einrt

#endif // EINC_RUNTIME_CUBLASLTMAPPING_H
