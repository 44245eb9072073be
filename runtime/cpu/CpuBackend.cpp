//===- CpuBackend.cpp - The `cpu` backend's registration ------------------===//
//
// Fused kernels compiled for this CPU (the host kernel table) and GEMMs
// through BLAS or oneDNN, over one pool of threads (runtime/cpu/CpuDevice.h).
//
//===----------------------------------------------------------------------===//
#include "runtime/base/Memory.h"
#include "runtime/core/Backend.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/cpu/ThreadPool.h"

namespace einrt {
namespace {

class CpuBackend final : public Backend {
public:
  const char *name() const override { return "cpu"; }
  const char *summary() const override {
    return "fused kernels compiled for this CPU and BLAS/oneDNN GEMMs over a pool of threads";
  }
  const char *programLowering() const override { return "cpu"; }
  bool hostKernels() const override { return true; }
  bool hostMemory() const override { return true; }
  bool exactAsHostKernels() const override { return true; }
  bool profileDescribes(const std::string &profile, const std::string &) const override {
    return profile == "cpu";
  }
  const char *profileWord() const override { return "cpu"; }

  Expected<std::shared_ptr<Device>> open(const BackendOpen &options) const override {
    int threads = options.threads > 0 ? int(options.threads) : defaultThreadCount();
    setBlasThreads(1); // the device splits matmuls itself
    auto cpu = std::make_shared<CpuDevice>();
    // One set of threads for every function that runs on it.
    if (threads > 1)
      cpu->setThreadPool(std::make_shared<ThreadPool>(threads));
    return std::shared_ptr<Device>(cpu);
  }
  Status attachKernels(Device &device, const BackendKernels &kernels) const override {
    static_cast<CpuDevice &>(device).setKernels(kernels.host);
    return Status::success();
  }
  int threads(const Device &device) const override {
    return static_cast<const CpuDevice &>(device).threads();
  }
  std::string memoryShortfall(Device &, int64_t bytes, const std::string &what) const override {
    return einrt::memoryShortfall(bytes, what);
  }
};

} // namespace

const Backend &cpuBackend() {
  static const CpuBackend backend;
  return backend;
}

} // namespace einrt
