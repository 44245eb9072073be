//===- GemmReference.h - Row-major GemmDescs and column-major cuBLASLt calls, evaluated -===//
//
// Two independent evaluations for the mapping tests: a GemmDesc read as
// row-major matrices (runtime/core/StepPayloads.h's definition), and the
// CublasLtPlan mapGemmToCublasLt makes of it read as cuBLASLt reads its
// calls (column-major, alpha·op(A)·op(B) + beta·C, A and B the step's B and
// A). On small integers in doubles both are exact, so they must agree
// element for element, untouched elements included.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_UNIT_CUDA_GEMMREFERENCE_H
#define EINC_TEST_UNIT_CUDA_GEMMREFERENCE_H

#include "runtime/cuda/CublasLtMapping.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace einrt::test {

/// The elements A, B and C span (the largest offset touched, plus one).
struct GemmSpans {
  int64_t a = 0, b = 0, c = 0;
};

inline GemmSpans spansOf(const GemmDesc &g) {
  GemmSpans s;
  if (g.matrices() == 0 || g.m == 0 || g.n == 0)
    return s;
  auto span = [&](int64_t rows, int64_t cols, int64_t ld, int64_t batchStride,
                  int64_t GemmLoop::*loopStride) {
    if (rows == 0 || cols == 0)
      return int64_t(0);
    int64_t last = (rows - 1) * ld + cols + (g.batch - 1) * batchStride;
    for (const GemmLoop &l : g.outer)
      last += (l.count - 1) * (l.*loopStride);
    return last;
  };
  s.a = span(g.transA ? g.k : g.m, g.transA ? g.m : g.k, g.lda, g.strideA, &GemmLoop::strideA);
  s.b = span(g.transB ? g.n : g.k, g.transB ? g.k : g.n, g.ldb, g.strideB, &GemmLoop::strideB);
  s.c = span(g.m, g.n, g.ldc, g.strideC, &GemmLoop::strideC);
  return s;
}

/// C = op(A)·op(B) (or +=) on row-major storage, matrix by matrix: the
/// outer loops outermost first, then the batch.
inline void rowMajorGemm(const GemmDesc &g, const std::vector<double> &A,
                         const std::vector<double> &B, std::vector<double> &C) {
  for (int64_t i = 0; i < g.matrices(); ++i) {
    int64_t inner = i % g.batch, rest = i / g.batch;
    int64_t oa = inner * g.strideA, ob = inner * g.strideB, oc = inner * g.strideC;
    for (size_t d = g.outer.size(); d-- > 0;) {
      int64_t at = rest % g.outer[d].count;
      rest /= g.outer[d].count;
      oa += at * g.outer[d].strideA;
      ob += at * g.outer[d].strideB;
      oc += at * g.outer[d].strideC;
    }
    for (int64_t r = 0; r < g.m; ++r)
      for (int64_t c = 0; c < g.n; ++c) {
        double sum = 0;
        for (int64_t p = 0; p < g.k; ++p) {
          double a = g.transA ? A[size_t(oa + p * g.lda + r)] : A[size_t(oa + r * g.lda + p)];
          double b = g.transB ? B[size_t(ob + c * g.ldb + p)] : B[size_t(ob + p * g.ldb + c)];
          sum += a * b;
        }
        double &out = C[size_t(oc + r * g.ldc + c)];
        out = (g.epilogue == GemmEpilogue::Accumulate ? out : 0.0) + sum;
      }
  }
}

/// The plan as cuBLASLt computes it: each call on column-major matrices
/// (element (i, j) at i + j·ld), its A read from the step's B, its B from
/// the step's A; an empty sum zeroes the C matrices of a Store (what the
/// cuda device does instead of calling cuBLASLt). False when a call
/// reaches outside an operand (a wrong mapping must fail, not crash).
inline bool columnMajorCalls(const GemmDesc &g, const CublasLtPlan &plan,
                             const std::vector<double> &stepA, const std::vector<double> &stepB,
                             std::vector<double> &C) {
  const std::vector<double> &A = stepB, &B = stepA;
  bool inside = true;
  double spare = 0;
  auto read = [&](const std::vector<double> &v, int64_t i) {
    if (i >= 0 && size_t(i) < v.size())
      return v[size_t(i)];
    inside = false;
    return 0.0;
  };
  for (const CublasLtCall &call : plan.calls)
    for (int64_t bt = 0; bt < call.batch; ++bt) {
      int64_t oa = call.offsetA + bt * call.strideA, ob = call.offsetB + bt * call.strideB,
              oc = call.offsetC + bt * call.strideC;
      for (int64_t i = 0; i < call.m; ++i)
        for (int64_t j = 0; j < call.n; ++j) {
          int64_t at = oc + i + j * call.ldc;
          inside = inside && at >= 0 && size_t(at) < C.size();
          double &out = at >= 0 && size_t(at) < C.size() ? C[size_t(at)] : spare;
          if (plan.emptySum) {
            if (g.epilogue == GemmEpilogue::Store)
              out = 0;
            continue;
          }
          double sum = 0;
          for (int64_t p = 0; p < call.k; ++p) {
            double a =
                call.transA ? read(A, oa + p + i * call.lda) : read(A, oa + i + p * call.lda);
            double b =
                call.transB ? read(B, ob + j + p * call.ldb) : read(B, ob + p + j * call.ldb);
            sum += a * b;
          }
          out = double(call.alpha) * sum + double(call.beta) * out;
        }
    }
  return inside;
}

/// Small integers: every product and sum exact in a double.
inline std::vector<double> smallIntegers(int64_t n, std::mt19937_64 &rng) {
  std::uniform_int_distribution<int> d(-3, 3);
  std::vector<double> v(size_t(std::max<int64_t>(n, 0)));
  for (double &x : v)
    x = d(rng);
  return v;
}

} // namespace einrt::test

#endif // EINC_TEST_UNIT_CUDA_GEMMREFERENCE_H
