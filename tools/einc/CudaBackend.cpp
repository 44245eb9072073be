//===- CudaBackend.cpp - `--backend cuda` on einc run, train and sample ---===//
#include "CudaBackend.h"

#include "llvm/Support/raw_ostream.h"

namespace einc {

std::shared_ptr<einrt::CudaDevice> openCudaBackend() {
  std::string error;
  std::shared_ptr<einrt::CudaDevice> device = einrt::createCudaDevice({}, error);
  if (!device)
    llvm::errs() << "einc: --backend cuda: " << error << "\n";
  return device;
}

int runOnCudaBackend(const Options &o, const char *command) {
  std::shared_ptr<einrt::CudaDevice> device = openCudaBackend();
  if (!device)
    return 1;
  llvm::errs() << "einc: --backend cuda: the cuda device opened (" << device->describe()
               << "), but einc " << command
               << " does not pass it the CUDA kernels of its Programs yet (--backend cpu runs "
                  "them on the CPU)\n";
  return 1;
}

} // namespace einc
