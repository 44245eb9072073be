//===- CheckCompare.h - How closely two devices must agree on one step -*- C++ -*-===//
//
// The bounds of `NAME check` (DeviceCheck.cpp): one Kernel or Matmul step
// run on the reference device (the CPU device with the linked kernels) and
// on the device under test, from the same inputs, and the two results held
// against each other element by element.
//
//   cpu vs cpu (another thread count)   bit for bit: every thread count makes
//                                       the same calls (docs/determinism.md)
//   cuda kernels                        bit for bit, except where the
//     renderer's contract (docs/cuda-backend.md, "Precision") lets them
//     differ: exp / log / tanh / pow anywhere in the kernel (CUDA's
//     functions against the CPU's polynomials) within 2e-6 of the result's
//     largest magnitude, or one narrow ulp of a bf16 / f16 result; an f32
//     sum the rows reassociate (a WarpRows / BlockRows reduce_sum) within
//     2^-20 of the sum of its inputs' magnitudes — the bounds
//     test/unit/cudarender/CudaHostEmulationTest.cpp holds the host
//     emulation of the same kernels to
//   cuda GEMMs                          each side within k·2^-24·S of the
//     exact product (S = |A|·|B|, + |C| when accumulating: f32 sums of k
//     products), so the two within 2·k·2^-24·S, plus one narrow ulp of a
//     bf16 / f16 C (each side rounds once)
//
// Pure: no device, no executor (unit-tested in test/unit/runner).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_RUNNER_CHECKCOMPARE_H
#define EINC_TOOLS_RUNNER_CHECKCOMPARE_H

#include "runtime/core/Program.h"
#include "runtime/core/Safetensors.h"
#include "runtime/cuda/CudaKernels.h"

#include <cstdint>
#include <string>
#include <vector>

namespace einc::runner {

/// What a step's bound is made of.
enum class BoundKind : uint8_t {
  Exact,          // bit for bit (NaN matches NaN, -0 matches +0)
  Transcendental, // 2e-6 · max(1, max |reference|); narrow results: one ulp
  RowSum,         // 2^-20 · the sum of the magnitudes of each output's inputs
  Gemm,           // 2·k·2^-24 · (|A|·|B| + |C|), plus one ulp of a narrow C
  Rows,           // a row's whole chain in one kernel (softmax, layernorm): its sums
                  // reassociated and carried through the row's ops, 2^-18 · max(1,
                  // max |reference|), + the transcendental bound where it has one
};
const char *boundKindName(BoundKind k);

/// The rule for one step on the device under test. `cudaKernel`: the
/// rendered kernel the step launches (null on a host device, or for a
/// Matmul step); `exactDevice`: the device under test is one that must give
/// the reference's bits (the cpu device at another thread count).
struct StepRule {
  BoundKind kind = BoundKind::Exact;
  int64_t k = 0;         // Gemm: the contraction length
  bool epilogue = false; // Gemm: elementwise ops applied to C (GemmPost): their results may
                         // carry C's error (x 1.2: gelu's slope is at most 1.13) and a
                         // transcendental's (a library's GELU is its own)
  std::string why;       // for the table: "bit for bit", "exp/log/tanh/pow", ...
};
StepRule ruleFor(const einrt::Step &step, const einrt::Program &program,
                 const einrt::CudaKernelInfo *cudaKernel, bool exactDevice);

/// Per output element of a RowSum step, the sum of |input| over the
/// elements it folds (rows over trailing dims when the output's shape is the
/// input's leading dims, over leading dims when it is the trailing ones; the
/// larger of both where the shapes leave it open). A Gemm step's magnitudes
/// are the reference device's product of |A| and |B| (+ |C|) instead.
std::vector<double> rowMagnitudes(const einrt::TensorData &input, const einrt::TensorData &output);

/// The largest finite magnitude in `t` (0 when none).
double maxMagnitude(const einrt::TensorData &t);

/// One result of one step, reference against tested.
struct Comparison {
  int64_t elements = 0;
  int64_t differing = 0; // elements whose bits differ (NaNs and zeros of either sign alike)
  int64_t outside = 0;   // elements beyond the bound
  double maxError = 0;   // the largest |reference - tested| over finite pairs
  double worstRatio = 0; // the largest |reference - tested| / allowed (inf: beyond a zero bound)
  std::string problem;   // the first element beyond the bound, or ""
};

/// Holds `tested` against `reference` (same dtype and shape) under `rule`;
/// `magnitudes` as rowMagnitudes gives them (RowSum, Gemm), else empty.
Comparison compareResults(const einrt::TensorData &reference, const einrt::TensorData &tested,
                          const StepRule &rule, const std::vector<double> &magnitudes);

/// |x| for every element of a float tensor (the sign bit cleared); others
/// unchanged. The inputs of the reference's |A|·|B| GEMM.
einrt::TensorData absolute(const einrt::TensorData &t);

} // namespace einc::runner

#endif // EINC_TOOLS_RUNNER_CHECKCOMPARE_H
