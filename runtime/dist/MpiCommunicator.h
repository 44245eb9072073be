//===- MpiCommunicator.h - Open MPI, loaded with dlopen --------*- C++ -*-===//
//
// The ranks of `mpirun -np N ... --distributed mpi`. libmpi is loaded with
// dlopen (RTLD_GLOBAL: Open MPI's components resolve its symbols), so one
// binary — einc, or an executable of `einc compile` — runs where no MPI is
// installed and needs one only when asked to distribute.
//
// Open MPI's handles (MPI_COMM_WORLD, MPI_FLOAT, MPI_SUM, ...) are the
// addresses of its predefined globals (ompi_mpi_comm_world, ...), which
// dlsym gives; that is Open MPI's ABI, not MPICH's (whose handles are
// integers), so another MPI is refused with a message. Errors return
// (MPI_ERRORS_RETURN on the communicator) and carry MPI_Error_string.
//
// MPI is initialised with MPI_THREAD_SERIALIZED: one thread calls it at a
// time. The destructor finalises (after a barrier); abort() calls
// MPI_Abort, which ends every rank.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_MPICOMMUNICATOR_H
#define EINC_RUNTIME_MPICOMMUNICATOR_H

#include "runtime/dist/Communicator.h"

#include <memory>
#include <string>
#include <utility>

namespace einrt {

/// Whether this process was started by an MPI launcher (Open MPI's
/// OMPI_COMM_WORLD_SIZE, PMIx's PMIX_RANK in the environment).
bool launchedByMpi();

/// How many processes the MPI launcher that started this one started, and
/// the variable that says so (Open MPI's OMPI_COMM_WORLD_SIZE, MPICH's and
/// Intel MPI's PMI_SIZE, MVAPICH's MV2_COMM_WORLD_SIZE); {1, ""} when none.
std::pair<int, std::string> launcherWorldSize();

/// This process's rank among the ranks on its node, as the launcher says
/// (Open MPI's OMPI_COMM_WORLD_LOCAL_RANK, MPICH's MPI_LOCALRANKID,
/// Slurm's SLURM_LOCALID, torchrun's LOCAL_RANK); 0 when none does.
int launcherLocalRank();

/// Loads libmpi (EINC_MPI_LIBRARY alone when set, else libmpi.so.40, then
/// libmpi.so) and initialises it; unavailable when there is none or it
/// fails.
Expected<std::unique_ptr<Communicator>> openMpi();

} // namespace einrt

#endif // EINC_RUNTIME_MPICOMMUNICATOR_H
