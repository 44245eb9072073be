//===- CudaModule.h - A kernel bundle loaded on one GPU ----------*- C++ -*-===//
//
// The cuda device's kernels: the bundle's image for the device
// (cudaImageFor: its cubin for the device's architecture or an earlier
// minor of its major, else its PTX, which the driver compiles; else
// its source compiled by NVRTC for the device, runtime/cuda/Nvrtc.h;
// cuModuleLoadDataEx with the JIT's error log in any failure), and for each
// kernel a Program launches, its function and its launch shape
// (cudaLaunchShape with cuOccupancyMaxPotentialBlockSize and
// cuOccupancyMaxActiveBlocksPerMultiprocessor), found once in prepare().
// A later bundle extends the earlier one: its module is loaded beside the
// earlier modules, which stay loaded while the device lives (executors made
// before keep launching their functions).
//
// Included only where CMake found the CUDA headers (EINC_HAVE_CUDA).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_CUDAMODULE_H
#define EINC_RUNTIME_CUDAMODULE_H

#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/CudaKernels.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace einrt {

struct PreparedKernel {
  CUfunction function = nullptr;
  std::string entry;
  CudaLaunchShape shape;
  CudaOccupancy occupancy;
  int64_t work = 0;
  int32_t params = 0;
};

class CudaModules {
public:
  /// Loads `bundle` (unless it is the one loaded last) and prepares the
  /// kernels `used` (indices into it) not prepared from it yet.
  Status prepare(const CudaDriver &driver, const std::shared_ptr<const CudaKernelBundle> &bundle,
                 const CudaDeviceProperties &device, const std::vector<int64_t> &used);
  /// Null when kernel `index` was not prepared.
  const PreparedKernel *kernel(int64_t index) const {
    return index >= 0 && size_t(index) < kernels.size() && kernels[size_t(index)].function
               ? &kernels[size_t(index)]
               : nullptr;
  }
  /// Unloads every module (the device's destructor).
  void unload(const CudaDriver &driver);

private:
  Status load(const CudaDriver &driver, const CudaKernelBundle &bundle,
              const CudaDeviceProperties &device);

  std::vector<CUmodule> modules;                // every bundle loaded, oldest first
  std::shared_ptr<const CudaKernelBundle> last; // the bundle of modules.back()
  std::vector<PreparedKernel> kernels;          // by index into the bundles
};

} // namespace einrt

#endif // EINC_RUNTIME_CUDAMODULE_H
