//===- CudaBackend.h - `--backend cuda` on einc run, train and sample -*- C++ -*-===//
#ifndef EINC_TOOLS_EINC_CUDABACKEND_H
#define EINC_TOOLS_EINC_CUDABACKEND_H

#include "Options.h"

namespace einc {

/// `--backend cuda` for `command` (run, train, sample): opens the cuda
/// device (runtime/CudaDevice.h: the driver, the GPU, cuBLASLt) before any
/// compiling, so that a machine without one fails at once and says why:
/// "einc: --backend cuda: no CUDA driver (libcuda.so.1 not found: ...)",
/// "... no CUDA device (...)", or an einc built without CUDA headers.
/// Where the device opens, these commands do not yet hand it Programs
/// (the CUDA kernel bundle is not connected to them): that too is an
/// error naming the device. Returns the exit status (1).
int runOnCudaBackend(const Options &o, const char *command);

} // namespace einc

#endif // EINC_TOOLS_EINC_CUDABACKEND_H
