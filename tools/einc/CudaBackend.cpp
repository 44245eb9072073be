//===- CudaBackend.cpp - `--backend cuda` on einc run, train and sample ---===//
#include "CudaBackend.h"
#include "runtime/base/StatusOut.h"
#include "tools/driver/Compile.h"
#include "tools/driver/DeviceProfiles.h"

#include "llvm/Support/raw_ostream.h"

#include <cctype>

namespace einc {

std::shared_ptr<einrt::CudaDevice> openCudaBackend(const einrt::CudaDeviceOptions &options) {
  std::string error;
  std::shared_ptr<einrt::CudaDevice> device = statusOut(einrt::createCudaDevice(options), error);
  if (!device)
    llvm::errs() << "einc: --backend cuda: " << error << "\n";
  return device;
}

std::shared_ptr<const einrt::CudaKernelBundle> takeCudaKernels(CompiledModel &compiled) {
  auto kernels = std::make_shared<const einrt::CudaKernelBundle>(
      compiled.bundle.cuda ? std::move(*compiled.bundle.cuda) : einrt::CudaKernelBundle{});
  compiled.bundle.cuda.reset();
  return kernels;
}

std::string gpuProfileName(const Options &o, const einrt::CudaDevice &gpu) {
  std::string word;
  for (char c : gpu.describe() + " ") {
    if (std::isalnum((unsigned char)c)) {
      word += char(std::tolower((unsigned char)c));
      continue;
    }
    if (!word.empty() && haveDeviceProfile(o.deviceFile, word))
      return word;
    word.clear();
  }
  return "";
}

} // namespace einc
