//===- Distributed.cpp - The ranks of `train --distributed mpi` -----------===//
#include "Distributed.h"

#include "runtime/MpiCommunicator.h"

#include <iostream>

namespace einc::runner {

Ranks::Ranks(const Options &o, const std::string &tool) {
  if (o.distributed.empty())
    return;
  std::string error;
  if (!einrt::launchedByMpi())
    std::cerr << tool
              << " train: note: --distributed mpi outside mpirun runs one rank "
                 "(launch with `mpirun -np N`)\n";
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
