//===- CudaBackend.h - `--backend cuda` on einc run, train and sample -*- C++ -*-===//
#ifndef EINC_TOOLS_EINC_CUDABACKEND_H
#define EINC_TOOLS_EINC_CUDABACKEND_H

#include "Options.h"

#include "runtime/cuda/CudaDevice.h"

#include <memory>

namespace einc {

struct CompiledModel; // Compile.h

/// The cuda device for `--backend cuda` (einc run, train, sample), opened
/// before any compiling so that a machine without one fails at once and
/// says why, or null after printing it: "einc: --backend cuda: no CUDA
/// driver (libcuda.so.1 not found: ...)", "... no CUDA device (...)", or an
/// einc built without CUDA headers. `options` picks the GPU (a rank's:
/// runner::cudaOptions).
std::shared_ptr<einrt::CudaDevice> openCudaBackend(const einrt::CudaDeviceOptions &options = {});

/// The CUDA kernels compileModel rendered for the cuda backend, moved out
/// of `compiled.bundle.cuda` for the runner (runner::Backend::cuda).
std::shared_ptr<const einrt::CudaKernelBundle> takeCudaKernels(CompiledModel &compiled);

/// The device profile of `gpu` (passes/devices.json, --device-file): the
/// first word of its name that names a profile ("NVIDIA H200 (...)":
/// h200), else "" (no prediction).
std::string gpuProfileName(const Options &o, const einrt::CudaDevice &gpu);

} // namespace einc

#endif // EINC_TOOLS_EINC_CUDABACKEND_H
