//===- CudaTarget.h - `einc compile --target cuda`: kernels for the GPU -*- C++ -*-===//
//
// The executable's CUDA kernels: the CPU kernel table of every Program in
// the bundle rendered as one translation unit (codegen/CudaRenderer.h) and
// compiled by NVRTC (runtime/cuda/Nvrtc.h) for each of kCudaImageArchs, so that
// the GPU machine compiles nothing: cubins for the architectures einc is
// tested on, which also run on later minors of their major (sm_80's on
// sm_86 and sm_89 cards), and PTX for the newest of them, which the driver
// compiles for newer majors (runtime/cuda/CudaKernels.h's cudaImageFor picks one).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_EINC_CUDATARGET_H
#define EINC_TOOLS_EINC_CUDATARGET_H

#include "codegen/CpuKernels.h"
#include "runtime/io/ModelBundle.h"

#include <string>

namespace einc {

/// What `--target cuda` compiles: cubins for sm_8x (A100, and sm_86/sm_89
/// cards) and sm_9x (H100/H200), compute_90 PTX for newer majors.
inline constexpr const char *kCudaImageArchs[] = {"sm_80", "sm_90", "compute_90"};

/// What addCudaKernels did, for einc compile's summary line.
struct CudaTargetSummary {
  int64_t kernels = 0;
  int64_t imageBytes = 0;
  int64_t spillingKernels = 0; // ptxas reported spills (a cubin still works)
  double seconds = 0;          // NVRTC, all architectures (in parallel)
  int64_t fromCache = 0;       // images read from the NVRTC cache
  /// What the cuda device would refuse ("@f: step 7 ..."), said at compile
  /// time; the executable still runs such a program on the CPU.
  std::vector<std::string> warnings;
};

/// Sets the bundle's "cuda" kernel section: `kernels` (the table every Program of `bundle` uses)
/// rendered and compiled for kCudaImageArchs. Unavailable without NVRTC;
/// NVRTC's log when it refuses the source.
einrt::Status addCudaKernels(const ::ein::codegen::KernelCompiler &kernels,
                             einrt::ModelBundle &bundle, CudaTargetSummary &summary);

} // namespace einc

#endif // EINC_TOOLS_EINC_CUDATARGET_H
