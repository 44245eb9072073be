//===- CublasLtMapping.cpp - A GemmDesc as cuBLASLt's column-major calls --===//
#include "runtime/CublasLtMapping.h"

#include <algorithm>
#include <limits>

namespace einrt {

namespace {

bool ltType(DType t, LtType &out) {
  switch (t) {
  case DType::F32:
    out = LtType::F32;
    return true;
  case DType::BF16:
    out = LtType::BF16;
    return true;
  case DType::F16:
    out = LtType::F16;
    return true;
  default:
    return false;
  }
}

int64_t typeBytes(LtType t) { return t == LtType::F32 ? 4 : 2; }

/// The largest power of two, at most 256, dividing `bytes` (256 for 0).
int32_t alignmentOf(int64_t bytes) {
  int32_t align = 256;
  while (align > 1 && bytes % align != 0)
    align /= 2;
  return align;
}

/// The alignment of every matrix an operand's calls touch: its first
/// address and each batch step from there.
int32_t operandAlignment(int64_t offset, int64_t stride, int64_t batch, LtType t) {
  int32_t a = alignmentOf(offset * typeBytes(t));
  if (batch > 1)
    a = std::min(a, alignmentOf(stride * typeBytes(t)));
  return a;
}

} // namespace

const char *ltTypeName(LtType t) {
  switch (t) {
  case LtType::F32:
    return "f32";
  case LtType::BF16:
    return "bf16";
  case LtType::F16:
    return "f16";
  }
  return "?";
}

std::string CublasLtCall::key() const {
  std::string text;
  auto add = [&text](int64_t v) { text += std::to_string(v) + ","; };
  for (int64_t v : {int64_t(typeA),
                    int64_t(typeB),
                    int64_t(typeC),
                    int64_t(compute),
                    int64_t(epilogue),
                    int64_t(transA),
                    int64_t(transB),
                    m,
                    n,
                    k,
                    lda,
                    ldb,
                    ldc,
                    batch,
                    strideA,
                    strideB,
                    strideC,
                    int64_t(beta != 0.0f),
                    int64_t(alignA),
                    int64_t(alignB),
                    int64_t(alignC)})
    add(v);
  return text;
}

bool mapGemmToCublasLt(const GemmDesc &g, const CublasLtOptions &options, CublasLtPlan &out,
                       std::string &error) {
  out = {};
  LtType ta, tb, tc;
  if (!ltType(g.a, ta) || !ltType(g.b, tb) || !ltType(g.c, tc)) {
    error = std::string("cuBLASLt runs GEMMs of f32, bf16 and f16 matrices, not A '") +
            dtypeName(g.a) + "', B '" + dtypeName(g.b) + "', C '" + dtypeName(g.c) + "'";
    return false;
  }
  if (g.accumulate != DType::F32) {
    error = std::string("the cuda device sums GEMMs in f32, not '") + dtypeName(g.accumulate) +
            "' (float64 runs on the reference backend)";
    return false;
  }
  // cuBLASLt's f32-compute table: A and B of one type; C of that type or
  // f32.
  if (ta != tb || (tc != ta && tc != LtType::F32)) {
    error = std::string("cuBLASLt has no GEMM of A '") + dtypeName(g.a) + "' and B '" +
            dtypeName(g.b) + "' into C '" + dtypeName(g.c) +
            "' (A and B of one type; C of that type or f32)";
    return false;
  }
  if (g.m < 0 || g.n < 0 || g.k < 0 || g.batch < 0) {
    error = "a GEMM with a negative size";
    return false;
  }
  for (const GemmLoop &l : g.outer)
    if (l.count < 0) {
      error = "a GEMM with a negative loop count";
      return false;
    }
  if (g.matrices() == 0 || g.m == 0 || g.n == 0)
    return true; // nothing to compute or write

  // The column-major call of one row-major GEMM: A and B swap, m and n swap.
  CublasLtCall base;
  base.typeA = tb;
  base.typeB = ta;
  base.typeC = tc;
  base.compute = options.tf32 && ta == LtType::F32 ? LtCompute::F32FastTF32 : LtCompute::F32;
  base.transA = g.transB;
  base.transB = g.transA;
  base.m = g.n;
  base.n = g.m;
  base.k = g.k;
  base.lda = g.ldb;
  base.ldb = g.lda;
  base.ldc = g.ldc;
  base.rowsA = base.transA ? base.k : base.m;
  base.colsA = base.transA ? base.m : base.k;
  base.rowsB = base.transB ? base.n : base.k;
  base.colsB = base.transB ? base.k : base.n;
  base.rowsC = base.m;
  base.colsC = base.n;
  // A single column's leading dimension is never used, and cuBLASLt wants
  // it at least the rows (a one-row row-major matrix may state any);
  // otherwise rows must not overlap.
  auto leading = [&](const char *name, int64_t &ld, int64_t rows, int64_t cols) {
    if (cols <= 1)
      ld = std::max({ld, rows, int64_t(1)});
    if (ld >= std::max<int64_t>(rows, 1))
      return true;
    error = std::string("cuBLASLt needs the step's ") + name + " rows apart by at least their " +
            std::to_string(rows) + " elements (leading dimension " + std::to_string(ld) + ")";
    return false;
  };
  if (g.k > 0 && (!leading("B", base.lda, base.rowsA, base.colsA) ||
                  !leading("A", base.ldb, base.rowsB, base.colsB)))
    return false;
  if (!leading("C", base.ldc, base.rowsC, base.colsC))
    return false;
  base.beta = g.epilogue == GemmEpilogue::Accumulate ? 1.0f : 0.0f;
  base.batch = g.batch;
  base.strideA = g.strideB;
  base.strideB = g.strideA;
  base.strideC = g.strideC;

  // Fold the innermost outer loops into the strided batch while they
  // continue it: each operand's loop stride is batch x its batch stride (or
  // the batch is one matrix, which any stride continues).
  std::vector<GemmLoop> loops = g.outer;
  while (!loops.empty()) {
    const GemmLoop &l = loops.back();
    bool continues = base.batch == 1 || (l.strideB == base.batch * base.strideA &&
                                         l.strideA == base.batch * base.strideB &&
                                         l.strideC == base.batch * base.strideC);
    if (!continues)
      break;
    if (base.batch == 1) {
      base.strideA = l.strideB;
      base.strideB = l.strideA;
      base.strideC = l.strideC;
    }
    base.batch *= l.count;
    loops.pop_back();
  }
  if (base.batch > std::numeric_limits<int32_t>::max()) {
    error = "a GEMM of " + std::to_string(base.batch) +
            " matrices in one batch (cuBLASLt's batch count is an int32)";
    return false;
  }
  out.emptySum = g.k == 0;

  // One call per iteration of the loops left, outermost first.
  int64_t calls = 1;
  for (const GemmLoop &l : loops)
    calls *= l.count;
  out.calls.reserve(size_t(calls));
  std::vector<int64_t> at(loops.size(), 0);
  for (int64_t c = 0; c < calls; ++c) {
    CublasLtCall call = base;
    for (size_t d = 0; d < loops.size(); ++d) {
      call.offsetA += at[d] * loops[d].strideB;
      call.offsetB += at[d] * loops[d].strideA;
      call.offsetC += at[d] * loops[d].strideC;
    }
    call.alignA = operandAlignment(call.offsetA, call.strideA, call.batch, call.typeA);
    call.alignB = operandAlignment(call.offsetB, call.strideB, call.batch, call.typeB);
    call.alignC = operandAlignment(call.offsetC, call.strideC, call.batch, call.typeC);
    out.calls.push_back(call);
    for (size_t d = loops.size(); d-- > 0;) { // the innermost loop moves fastest
      if (++at[d] < loops[d].count)
        break;
      at[d] = 0;
    }
  }
  return true;
}

} // namespace einrt
