//===- StepPayloads.h - The typed payloads of Program steps -----*- C++ -*-===//
//
// What a step carries besides its buffers, one struct per shape of payload;
// runtime/StepKinds.def says which kind carries which. Each struct lists its
// members once, in fields(self, visit): the serialised program format and
// the Program printer walk them through it, so a new member is written,
// read and printed without touching either.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_STEPPAYLOADS_H
#define EINC_RUNTIME_STEPPAYLOADS_H

#include "runtime/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace einrt {

/// Elementwise ops, casts, gathers, copies: nothing beyond the buffers.
struct NoPayload {
  template <class Self, class Visit> static void fields(Self &, Visit &&) {}
};

/// A list of dimensions: a transpose's permutation (result dim i = operand
/// dim axes[i]), a broadcast's map (operand dim i -> result dim axes[i]), a
/// reduction's reduced dims (strictly increasing).
struct AxisList {
  std::vector<int64_t> axes;
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("axes", self.axes);
  }
};

/// dot_general's dimension numbers: result dims are the batch dims (lhs
/// order), then lhs's free dims, then rhs's.
struct ContractDims {
  std::vector<int64_t> lhsBatch, rhsBatch, lhsContract, rhsContract;
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("lhs_batch", self.lhsBatch);
    visit("rhs_batch", self.rhsBatch);
    visit("lhs_contract", self.lhsContract);
    visit("rhs_contract", self.rhsContract);
  }
};

/// iota: out[i_0, ..., i_n] = i_dimension.
struct IotaDim {
  int64_t dimension = 0;
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("dimension", self.dimension);
  }
};

/// ein.quantize's fake quantisation (runtime/Fp8Quantize.h): `format`
/// "e4m3" | "e5m2", or "none" (the result is the input); `block` elements
/// per scale along `axis`, or 0 for one scale per tensor.
struct QuantizeSpec {
  std::string format = "none";
  int64_t block = 0, axis = 0;
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("format", self.format);
    visit("block", self.block);
    visit("axis", self.axis);
  }
};

/// A loop of matrices around a GemmDesc's batch: `count` iterations, each
/// moving A, B and C by their strides (elements).
struct GemmLoop {
  int64_t count = 1, strideA = 0, strideB = 0, strideC = 0;
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("count", self.count);
    visit("stride_a", self.strideA);
    visit("stride_b", self.strideB);
    visit("stride_c", self.strideC);
  }
};

/// What a GEMM writes into C.
enum class GemmEpilogue : uint8_t {
  Store,      // C = op(A) · op(B)
  Accumulate, // C += op(A) · op(B) (C must hold a value before the step)
};

/// A batched, strided matrix product on row-major storage: for each of
/// `batch` matrices (and each iteration of the outer loops, outermost
/// first), C (m x n) = op(A) (m x k) · op(B) (k x n), op = transpose where
/// trans* is set; leading dimensions and batch strides in elements. With
/// outer loops C is dense (ldc = n, strideC = m·n). Every device's matrix
/// library (BLAS, cuBLASLt) runs this one description.
struct GemmDesc {
  DType a = DType::F32, b = DType::F32, c = DType::F32; // element types
  DType accumulate = DType::F32;                        // of the sums
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  int64_t lda = 1, ldb = 1, ldc = 1;
  int64_t strideA = 0, strideB = 0, strideC = 0;
  std::vector<GemmLoop> outer;
  GemmEpilogue epilogue = GemmEpilogue::Store;

  /// Matrices in all: batch × every outer count.
  int64_t matrices() const {
    int64_t total = batch;
    for (const GemmLoop &l : outer)
      total *= l.count;
    return total;
  }
  double flops() const { return 2.0 * double(matrices()) * double(m) * double(n) * double(k); }

  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("a", self.a);
    visit("b", self.b);
    visit("c", self.c);
    visit("accumulate", self.accumulate);
    visit("batch", self.batch);
    visit("m", self.m);
    visit("n", self.n);
    visit("k", self.k);
    visit("trans_a", self.transA);
    visit("trans_b", self.transB);
    visit("lda", self.lda);
    visit("ldb", self.ldb);
    visit("ldc", self.ldc);
    visit("stride_a", self.strideA);
    visit("stride_b", self.strideB);
    visit("stride_c", self.strideC);
    visit("outer", self.outer);
    visit("epilogue", self.epilogue);
  }
};

/// A compiled kernel: `kernel` indexes the device's kernel table; it is
/// called with the data of the step's inputs, its output and then
/// `extraOutputs` (a fused kernel writes several buffers).
struct KernelLaunch {
  int64_t kernel = -1;
  std::vector<int32_t> extraOutputs;
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("kernel", self.kernel);
    visit("extra_outputs", self.extraOutputs);
  }
};

} // namespace einrt

#endif // EINC_RUNTIME_STEPPAYLOADS_H
