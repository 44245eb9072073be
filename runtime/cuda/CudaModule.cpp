//===- CudaModule.cpp - A kernel bundle loaded on one GPU -----------------===//
#include "runtime/cuda/CudaModule.h"

#include "runtime/cuda/Nvrtc.h"

#include <algorithm>

namespace einrt {

bool CudaModules::load(const CudaDriver &driver, const CudaKernelBundle &bundle,
                       const CudaDeviceProperties &device, std::string &error) {
  std::string why;
  const CudaImage *image = cudaImageFor(bundle, device.major, device.minor, why);
  CudaImage compiled;
  if (!image && !bundle.source.empty()) {
    // No image for this device: NVRTC compiles the source for it (cached on
    // disk, runtime/cuda/Nvrtc.h).
    const std::string arch = "sm_" + std::to_string(device.major * 10 + device.minor);
    std::string nvrtcError;
    const Nvrtc *nvrtc = Nvrtc::load(nvrtcError);
    if (!nvrtc) { // the lookup's one line first, then what it was needed for
      error = nvrtcError + " (needed to compile the cuda kernels' source for " + arch + ": " +
              (bundle.images.empty() ? std::string("the bundle has no compiled image") : why) + ")";
      return false;
    }
    NvrtcOptions options;
    options.arch = arch;
    options.ptxasReport = false;
    NvrtcOutput out;
    if (!nvrtc->compile(bundle.source, options, out, nvrtcError)) {
      error = "cannot compile the cuda kernels for " + arch + ": " + nvrtcError;
      return false;
    }
    compiled = std::move(out.image);
    image = &compiled;
  }
  if (!image) {
    error =
        "cannot load the cuda kernels: " +
        (bundle.images.empty() ? std::string("the bundle has neither an image nor source") : why);
    return false;
  }
  // The JIT's log (a PTX image is compiled here) goes into the error.
  char log[8192] = {0};
  CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, reinterpret_cast<void *>(uintptr_t(sizeof log - 1))};
  CUmodule module = nullptr;
  // A PTX image is text: std::string's data() ends in the NUL it needs.
  if (!EINC_CU(driver, cuModuleLoadDataEx(&module, image->bytes.data(), 2, keys, values))) {
    error = "cannot load the cuda kernels (" + image->arch + (image->ptx ? " PTX" : " cubin") +
            "): " + error + (log[0] ? std::string("\n") + log : std::string());
    return false;
  }
  modules.push_back(module);
  return true;
}

bool CudaModules::prepare(const CudaDriver &driver,
                          const std::shared_ptr<const CudaKernelBundle> &bundle,
                          const CudaDeviceProperties &device, const std::vector<int64_t> &used,
                          std::string &error) {
  if (used.empty())
    return true;
  if (!bundle) {
    error = "the cuda device was given no kernels";
    return false;
  }
  if (bundle != last) {
    if (!load(driver, *bundle, device, error))
      return false;
    last = bundle;
  }
  if (kernels.size() < bundle->kernels.size())
    kernels.resize(bundle->kernels.size());
  const int limit = device.maxThreadsPerBlock > 0
                        ? std::min(device.maxThreadsPerBlock, kCudaKernelMaxBlock)
                        : kCudaKernelMaxBlock;
  for (int64_t index : used) {
    if (index < 0 || size_t(index) >= bundle->kernels.size()) {
      error = "kernel " + std::to_string(index) + " is not in the bundle of " +
              std::to_string(bundle->kernels.size()) + " kernels";
      return false;
    }
    const CudaKernelInfo &info = bundle->kernels[size_t(index)];
    PreparedKernel &k = kernels[size_t(index)];
    if (k.function && k.entry == info.entry)
      continue;
    PreparedKernel p;
    p.entry = info.entry;
    p.work = info.work;
    p.params = info.params;
    if (!EINC_CU(driver, cuModuleGetFunction(&p.function, modules.back(), info.entry.c_str()))) {
      error = "kernel " + std::to_string(index) + " ('" + info.entry + "'): " + error;
      return false;
    }
    int minGrid = 0, block = 0, active = 0;
    if (!EINC_CU(driver, cuOccupancyMaxPotentialBlockSize(&minGrid, &block, p.function, nullptr, 0,
                                                          limit)) ||
        !EINC_CU(driver,
                 cuOccupancyMaxActiveBlocksPerMultiprocessor(&active, p.function, block, 0))) {
      error = "kernel '" + info.entry + "': " + error;
      return false;
    }
    p.occupancy = {block, active};
    p.shape = cudaLaunchShape(info, device, p.occupancy);
    k = std::move(p);
  }
  return true;
}

void CudaModules::unload(const CudaDriver &driver) {
  for (CUmodule m : modules)
    driver.cuModuleUnload(m); // at teardown: nothing to report to
  modules.clear();
  kernels.clear();
  last.reset();
}

} // namespace einrt
