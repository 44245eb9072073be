//===- CudaBackend.h - `--backend cuda` on einc run, train and sample -*- C++ -*-===//
#ifndef EINC_TOOLS_EINC_CUDABACKEND_H
#define EINC_TOOLS_EINC_CUDABACKEND_H

#include "Options.h"

#include "runtime/CudaDevice.h"

#include <memory>

namespace einc {

/// `--backend cuda` for `command` (train, sample): opens the cuda
/// device (runtime/CudaDevice.h: the driver, the GPU, cuBLASLt) before any
/// compiling, so that a machine without one fails at once and says why:
/// "einc: --backend cuda: no CUDA driver (libcuda.so.1 not found: ...)",
/// "... no CUDA device (...)", or an einc built without CUDA headers.
/// Where the device opens, these commands do not yet hand it Programs
/// (the runner and the program file carry no CUDA kernels): that too is
/// an error naming the device. Returns the exit status (1).
int runOnCudaBackend(const Options &o, const char *command);

/// The cuda device for `einc run --backend cuda` (which renders its
/// Programs' kernels itself, tools/einc/Run.cpp), or null after printing
/// why there is none ("einc: --backend cuda: no CUDA driver (...)").
std::shared_ptr<einrt::CudaDevice> openCudaBackend();

} // namespace einc

#endif // EINC_TOOLS_EINC_CUDABACKEND_H
