//===- Distributed.h - The ranks of `train --distributed` -------*- C++ -*-===//
//
// `einc train` and the executables open the ranks before anything else
// (einc compiles for the global micro-batch count, so it needs N first) and
// end them through finish(): a run that failed on any rank aborts them all
// (MPI_Abort: the launcher names the rank and kills the others within
// seconds) instead of waiting in a collective for a rank that is gone.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TOOLS_RUNNER_DISTRIBUTED_H
#define EINC_TOOLS_RUNNER_DISTRIBUTED_H

#include "RunOptions.h"

#include "runtime/base/TrainSettings.h"
#include "runtime/core/Backend.h"
#include "runtime/dist/Communicator.h"

#include <memory>
#include <string>

namespace einc::runner {

/// How this process opens its device: the first (GPU 0) without
/// --distributed; with it, the launcher's local rank's (one GPU per rank on
/// a node; with mpi, ranks beyond the devices share them round-robin, NCCL
/// cannot); the settings (f32 GEMMs on TF32 tensor cores under `tf32`).
einrt::BackendOpen deviceOptions(const RunOptions &o, const einrt::TrainSettings &settings);

class Ranks {
public:
  /// Without --distributed: no ranks (ok() true, comm() null), or ok()
  /// false after printing why when an MPI launcher started several
  /// processes (launcherWorldSize). With it:
  /// MPI opened and initialised, or ok() false after printing why; with
  /// --distributed nccl outside a launcher, one rank without MPI.
  Ranks(const RunOptions &o, const std::string &tool);
  ~Ranks();
  bool ok() const { return opened; }
  einrt::Communicator *comm() const { return group.get(); }
  int size() const { return group ? group->size() : 1; }
  bool leader() const { return !group || group->rank() == 0; }
  /// The exit status: `status`, after finalising; a failure (status != 0
  /// but a stop by signal, which all ranks agree on) with more than one rank
  /// aborts every rank instead.
  int finish(int status);

private:
  std::unique_ptr<einrt::Communicator> group;
  bool opened = true;
};

} // namespace einc::runner

#endif // EINC_TOOLS_RUNNER_DISTRIBUTED_H
