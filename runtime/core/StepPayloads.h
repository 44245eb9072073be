//===- StepPayloads.h - The typed payloads of Program steps -----*- C++ -*-===//
//
// What a step carries besides its buffers, one struct per shape of payload;
// runtime/core/StepKinds.def says which kind carries which. Each struct lists its
// members once, in fields(self, visit): the serialised program format and
// the Program printer walk them through it, so a new member is written,
// read and printed without touching either.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_STEPPAYLOADS_H
#define EINC_RUNTIME_STEPPAYLOADS_H

#include "runtime/core/DType.h"

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

/// slice: rows [offset, offset + the result's rows) of dimension 0.
struct SliceOffset {
  int64_t offset = 0;
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("offset", self.offset);
  }
};

/// ein.quantize's fake quantisation (runtime/core/Fp8Quantize.h): `format`
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

/// An activation a matrix library's epilogue can apply to the product
/// (GemmPost's typed reading; cuBLASLt's RELU / GELU epilogues).
enum class GemmActivation : uint8_t {
  None, // D = alpha · product + residual + bias
  Relu, // D = max(that, 0)
  Gelu, // D = gelu(that), einc's tanh form (docs/language.md)
};

/// Elementwise ops a Matmul step applies to its product C = op(A)·op(B)
/// (a GEMM epilogue, docs/fusion.md): a compiled kernel of the device's
/// table over `operands` (C, which is the step's output, and buffers among
/// the step's inputs after A and B) writing `outputs` (the step's outputs
/// after C). A device runs it on each block of C's rows right after the
/// block's product, while the block is in cache (the cpu device), or after
/// the product (any device). When `library` is set, the kernel's ops are
/// exactly the typed reading below and a matrix library with fused
/// epilogues (cuBLASLt) may compute `result` (and `aux`) itself instead:
///   pre    = alpha · C + residual + bias  (each where present)
///   result = activation(pre),  aux = pre  (written where aux >= 0)
/// The compiler (codegen/CpuEpilogue.cpp) sets the typed reading from the
/// kernel's ops; it is a second description of the same values for the
/// libraries, never a different computation.
struct GemmPost {
  int64_t kernel = -1;           // the device's kernel table; -1: no epilogue
  std::vector<int32_t> operands; // the kernel's operands (buffer indices)
  std::vector<int32_t> outputs;  // the buffers it writes, its first result first
  bool library = false;
  double alpha = 1.0;
  int32_t residual = -1; // an m x n buffer per matrix, like C (a library's C, beta 1)
  int32_t bias = -1;     // n values added to every row of C
  GemmActivation activation = GemmActivation::None;
  int32_t aux = -1;    // the activation's input, kept (C itself or one of outputs)
  int32_t result = -1; // the final value: one of outputs

  bool present() const { return kernel >= 0; }
  template <class Self, class Visit> static void fields(Self &self, Visit &&visit) {
    visit("kernel", self.kernel);
    visit("operands", self.operands);
    visit("outputs", self.outputs);
    visit("library", self.library);
    visit("alpha", self.alpha);
    visit("residual", self.residual);
    visit("bias", self.bias);
    visit("activation", self.activation);
    visit("aux", self.aux);
    visit("result", self.result);
  }
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
  GemmPost post; // elementwise ops applied to C (Store only)

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
    visit("post", self.post);
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
