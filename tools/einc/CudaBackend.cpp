//===- CudaBackend.cpp - `--backend cuda` on einc run, train and sample ---===//
#include "CudaBackend.h"

#include "runtime/CudaDevice.h"

#include "llvm/Support/raw_ostream.h"

namespace einc {

int runOnCudaBackend(const Options &o, const char *command) {
  std::string error;
  std::shared_ptr<einrt::CudaDevice> device = einrt::createCudaDevice({}, error);
  if (!device) {
    llvm::errs() << "einc: --backend cuda: " << error << "\n";
    return 1;
  }
  llvm::errs() << "einc: --backend cuda: the cuda device opened (" << device->describe()
               << "), but einc " << command
               << " does not pass it the CUDA kernels of its Programs yet (--backend cpu runs "
                  "them on the CPU)\n";
  return 1;
}

} // namespace einc
