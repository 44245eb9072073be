//===- Distributed.cpp - The ranks of `train --distributed` ---------------===//
#include "Distributed.h"

#include "runtime/MpiCommunicator.h"

#include <iostream>

namespace einc::runner {

einrt::CudaDeviceOptions cudaOptions(const Options &o) {
  einrt::CudaDeviceOptions options;
  if (!o.distributed.empty()) {
    options.ordinal = einrt::launcherLocalRank();
    options.wrapOrdinal = o.distributed != "nccl";
  }
  return options;
}

Ranks::Ranks(const Options &o, const std::string &tool) {
  if (o.distributed.empty())
    return;
  std::string error;
  if (!einrt::launchedByMpi()) {
    std::cerr << tool << " train: note: --distributed " << o.distributed
              << " outside mpirun runs one rank (launch with `mpirun -np N`)\n";
    if (o.distributed == "nccl") { // NCCL alone: no MPI needed
      group = einrt::singleRankCommunicator();
      return;
    }
  }
  group = einrt::openMpi(error);
  if (!group) {
    std::cerr << tool << " train: " << error << "\n";
    opened = false;
  }
}

Ranks::~Ranks() = default;

int Ranks::finish(int status) {
  std::cout.flush();
  std::cerr.flush();
  if (status != 0 && group && group->size() > 1)
    group->abort(status);
  group.reset();
  return status;
}

} // namespace einc::runner
