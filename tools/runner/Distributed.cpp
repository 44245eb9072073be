//===- Distributed.cpp - The ranks of `train --distributed` ---------------===//
#include "Distributed.h"

#include "runtime/dist/MpiCommunicator.h"
#include "runtime/train/StopSignals.h"

#include <iostream>

namespace einc::runner {

einrt::BackendOpen deviceOptions(const RunOptions &o, const einrt::TrainSettings &settings) {
  einrt::BackendOpen options;
  options.settings = settings;
  if (!o.distributed.empty()) {
    options.ordinal = einrt::launcherLocalRank();
    options.wrapOrdinal = o.distributed != "nccl";
  }
  return options;
}

Ranks::Ranks(const RunOptions &o, const std::string &tool) {
  if (o.distributed.empty()) {
    // `mpirun -np N` without --distributed: N separate runs of one
    // directory, each overwriting the others' checkpoints and log.
    if (auto [size, variable] = einrt::launcherWorldSize(); size > 1) {
      std::cerr << tool << " train: started as one of " << size << " processes by an MPI launcher ("
                << variable << "=" << size
                << ") without --distributed: each would train alone, into the same checkpoint "
                   "directory; pass --distributed mpi (or nccl) to train as "
                << size << " ranks of one run\n";
      opened = false;
    }
    return;
  }
  if (!einrt::launchedByMpi()) {
    std::cerr << tool << " train: note: --distributed " << o.distributed
              << " outside mpirun runs one rank (launch with `mpirun -np N`)\n";
    if (o.distributed == "nccl") { // NCCL alone: no MPI needed
      group = einrt::singleRankCommunicator();
      return;
    }
  }
  einrt::Expected<std::unique_ptr<einrt::Communicator>> mpi = einrt::openMpi();
  if (mpi.ok()) {
    group = mpi.take();
  } else {
    std::cerr << tool << " train: " << mpi.status().message() << "\n";
    opened = false;
  }
}

Ranks::~Ranks() = default;

int Ranks::finish(int status) {
  std::cout.flush();
  std::cerr.flush();
  // Stopped by a signal: every rank agreed on the step and returns it.
  if (status != 0 && status != einrt::kStoppedBySignalStatus && group && group->size() > 1)
    group->abort(status);
  group.reset();
  return status;
}

} // namespace einc::runner
