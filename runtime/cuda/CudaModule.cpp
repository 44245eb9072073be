//===- CudaModule.cpp - A kernel bundle loaded on one GPU -----------------===//
#include "runtime/cuda/CudaModule.h"

#include "runtime/cuda/Nvrtc.h"

#include <algorithm>

namespace einrt {

Status CudaModules::load(const CudaDriver &driver, const CudaKernelBundle &bundle,
                         const CudaDeviceProperties &device) {
  Expected<const CudaImage *> found = cudaImageFor(bundle, device.major, device.minor);
  const CudaImage *image = found.ok() ? *found : nullptr;
  const std::string why = found.status().message(); // "" when found
  CudaImage compiled;
  if (!image && !bundle.source.empty()) {
    // No image for this device: NVRTC compiles the source for it (cached on
    // disk, runtime/cuda/Nvrtc.h).
    const std::string arch = "sm_" + std::to_string(device.major * 10 + device.minor);
    Expected<const Nvrtc *> nvrtc = Nvrtc::load();
    if (!nvrtc.ok()) // the lookup's one line first, then what it was needed for
      return Status(
          nvrtc.status().code(),
          nvrtc.status().message() + " (needed to compile the cuda kernels' source for " + arch +
              ": " +
              (bundle.images.empty() ? std::string("the bundle has no compiled image") : why) +
              ")");
    NvrtcOptions options;
    options.arch = arch;
    options.ptxasReport = false;
    Expected<NvrtcOutput> out = (*nvrtc)->compile(bundle.source, options);
    if (!out.ok())
      return out.takeStatus().withContext("cannot compile the cuda kernels for " + arch + ": ");
    compiled = std::move(out->image);
    image = &compiled;
  }
  if (!image)
    return Status(StatusCode::Unavailable,
                  "cannot load the cuda kernels: " +
                      (bundle.images.empty()
                           ? std::string("the bundle has neither an image nor source")
                           : why));
  // The JIT's log (a PTX image is compiled here) goes into the error.
  char log[8192] = {0};
  CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, reinterpret_cast<void *>(uintptr_t(sizeof log - 1))};
  CUmodule module = nullptr;
  // A PTX image is text: std::string's data() ends in the NUL it needs.
  if (Status loaded =
          EINC_CU(driver, cuModuleLoadDataEx(&module, image->bytes.data(), 2, keys, values));
      !loaded.ok())
    return Status(loaded.code(), "cannot load the cuda kernels (" + image->arch +
                                     (image->ptx ? " PTX" : " cubin") + "): " + loaded.message() +
                                     (log[0] ? std::string("\n") + log : std::string()));
  modules.push_back(module);
  return Status::success();
}

Status CudaModules::prepare(const CudaDriver &driver,
                            const std::shared_ptr<const CudaKernelBundle> &bundle,
                            const CudaDeviceProperties &device, const std::vector<int64_t> &used) {
  if (used.empty())
    return Status::success();
  if (!bundle)
    return Status::invalid("the cuda device was given no kernels");
  if (bundle != last) {
    EINRT_TRY(load(driver, *bundle, device));
    last = bundle;
  }
  if (kernels.size() < bundle->kernels.size())
    kernels.resize(bundle->kernels.size());
  const int limit = device.maxThreadsPerBlock > 0
                        ? std::min(device.maxThreadsPerBlock, kCudaKernelMaxBlock)
                        : kCudaKernelMaxBlock;
  for (int64_t index : used) {
    if (index < 0 || size_t(index) >= bundle->kernels.size())
      return Status::invalid("kernel " + std::to_string(index) + " is not in the bundle of " +
                             std::to_string(bundle->kernels.size()) + " kernels");
    const CudaKernelInfo &info = bundle->kernels[size_t(index)];
    PreparedKernel &k = kernels[size_t(index)];
    if (k.function && k.entry == info.entry)
      continue;
    PreparedKernel p;
    p.entry = info.entry;
    p.work = info.work;
    p.params = info.params;
    EINRT_TRY(EINC_CU(driver, cuModuleGetFunction(&p.function, modules.back(), info.entry.c_str()))
                  .withContext("kernel " + std::to_string(index) + " ('" + info.entry + "'): "));
    int minGrid = 0, block = 0, active = 0;
    const std::string kernel = "kernel '" + info.entry + "': ";
    EINRT_TRY(EINC_CU(driver, cuOccupancyMaxPotentialBlockSize(&minGrid, &block, p.function,
                                                               nullptr, 0, limit))
                  .withContext(kernel));
    EINRT_TRY(
        EINC_CU(driver, cuOccupancyMaxActiveBlocksPerMultiprocessor(&active, p.function, block, 0))
            .withContext(kernel));
    p.occupancy = {block, active};
    p.shape = cudaLaunchShape(info, device, p.occupancy);
    k = std::move(p);
  }
  return Status::success();
}

void CudaModules::unload(const CudaDriver &driver) {
  for (CUmodule m : modules)
    driver.cuModuleUnload(m); // at teardown: nothing to report to
  modules.clear();
  kernels.clear();
  last.reset();
}

} // namespace einrt
