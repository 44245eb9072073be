//===- CudaDriver.h - The CUDA driver API, loaded with dlopen ----*- C++ -*-===//
//
// The driver functions the cuda device calls, resolved at run time from
// libcuda.so.1 (never linked: one einc binary runs where there is no GPU).
// Their types come from the toolkit's cuda.h, whose macros pick each
// function's current version (cuMemAlloc is cuMemAlloc_v2, cuGraphInstantiate
// is cuGraphInstantiateWithFlags, ...); the driver's cuGetProcAddress
// returns the implementation of that version for the CUDA_VERSION the
// header declares, so the pointer and its prototype agree. A driver without
// cuGetProcAddress (older than CUDA 12) is looked up by the versioned
// symbol names instead.
//
// Every call is checked: EINC_CU(driver, call) is the call's Status: ok on
// CUDA_SUCCESS, else "runtime/File.cpp:LINE: call failed: CUDA_ERROR_NAME
// (its description)" (EINRT_TRY(EINC_CU(cu, cuMemAlloc(...)))).
//
// Included only where CMake found the CUDA headers (EINC_HAVE_CUDA).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_CUDADRIVER_H
#define EINC_RUNTIME_CUDADRIVER_H

#include "runtime/base/Status.h"

#include <cuda.h>

#include <memory>
#include <string>

namespace einrt {

// The functions found through cuGetProcAddress (or their versioned
// symbols). cuInit, cuDriverGetVersion, cuGetProcAddress and the error
// names are looked up by dlsym first: they work on every driver.
#define EINRT_CUDA_DRIVER_FUNCTIONS(X)                                                             \
  X(cuDeviceGetCount)                                                                              \
  X(cuDeviceGet)                                                                                   \
  X(cuDeviceGetName)                                                                               \
  X(cuDeviceGetAttribute)                                                                          \
  X(cuDevicePrimaryCtxRetain)                                                                      \
  X(cuDevicePrimaryCtxRelease)                                                                     \
  X(cuCtxSetCurrent)                                                                               \
  X(cuMemGetInfo)                                                                                  \
  X(cuMemAlloc)                                                                                    \
  X(cuMemFree)                                                                                     \
  X(cuMemHostAlloc)                                                                                \
  X(cuMemFreeHost)                                                                                 \
  X(cuMemcpyHtoDAsync)                                                                             \
  X(cuMemcpyDtoHAsync)                                                                             \
  X(cuMemcpyDtoDAsync)                                                                             \
  X(cuMemsetD8Async)                                                                               \
  X(cuMemsetD2D8Async)                                                                             \
  X(cuStreamCreate)                                                                                \
  X(cuStreamDestroy)                                                                               \
  X(cuStreamSynchronize)                                                                           \
  X(cuEventCreate)                                                                                 \
  X(cuEventDestroy)                                                                                \
  X(cuEventRecord)                                                                                 \
  X(cuEventSynchronize)                                                                            \
  X(cuModuleLoadDataEx)                                                                            \
  X(cuModuleUnload)                                                                                \
  X(cuModuleGetFunction)                                                                           \
  X(cuFuncGetAttribute)                                                                            \
  X(cuLaunchKernel)                                                                                \
  X(cuOccupancyMaxPotentialBlockSize)                                                              \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                                                   \
  X(cuStreamBeginCapture)                                                                          \
  X(cuStreamEndCapture)                                                                            \
  X(cuGraphInstantiateWithFlags)                                                                   \
  X(cuGraphLaunch)                                                                                 \
  X(cuGraphDestroy)                                                                                \
  X(cuGraphExecDestroy)

struct CudaDriver {
  // Members are named as the API (the header's macros rename both the
  // member and every use of it alike: cuMemAlloc is member cuMemAlloc_v2).
  decltype(&::cuInit) cuInit = nullptr;
  decltype(&::cuDriverGetVersion) cuDriverGetVersion = nullptr;
  decltype(&::cuGetErrorName) cuGetErrorName = nullptr;
  decltype(&::cuGetErrorString) cuGetErrorString = nullptr;
#define EINRT_CUDA_MEMBER(name) decltype(&::name) name = nullptr;
  EINRT_CUDA_DRIVER_FUNCTIONS(EINRT_CUDA_MEMBER)
#undef EINRT_CUDA_MEMBER

  std::string library; // the file dlopen opened
  int version = 0;     // cuDriverGetVersion: 1000 * major + 10 * minor
  int devices = 0;     // cuDeviceGetCount

  /// Opens `library` (empty: $EINC_CUDA_DRIVER if set, else libcuda.so.1),
  /// resolves every function and initialises the driver. Unavailable:
  /// "no CUDA driver (libcuda.so.1 not found: <dlerror>)", "no CUDA device
  /// (cuInit failed: CUDA_ERROR_NO_DEVICE ...)", or a driver older than the
  /// CUDA headers einc was built with. The library stays loaded for the
  /// life of the process (a driver is never unloaded).
  static Expected<std::shared_ptr<const CudaDriver>> load(const std::string &library = "");

  /// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
  std::string describe(CUresult r) const;
  /// Ok on CUDA_SUCCESS; else "FILE:LINE: CALL failed: describe(r)" (FILE
  /// from the project root): OutOfMemory for CUDA_ERROR_OUT_OF_MEMORY,
  /// Unavailable for a missing or unusable device, else Internal.
  Status check(CUresult r, const char *call, const char *file, int line) const;
};

/// "runtime/cuda/CudaDevice.cpp" of a __FILE__ path.
const char *projectRelativePath(const char *file);

} // namespace einrt

/// Checks one driver call: its Status.
#define EINC_CU(driver, call) (driver).check((driver).call, #call, __FILE__, __LINE__)

#endif // EINC_RUNTIME_CUDADRIVER_H
