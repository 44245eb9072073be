//===- NcclCollectives.h - NCCL on the cuda device's stream ----*- C++ -*-===//
//
// `--distributed nccl`: the gradient collectives of a data-parallel step
// (runtime/dist/Collectives.h) as NCCL calls on the cuda device's one stream,
// so gradients never leave the GPU. One rank per GPU: the launcher's local
// rank picks the GPU (localRank(), tools/runner/Distributed.h).
//
// libnccl is opened with dlopen (RTLD_LOCAL), not linked, like the driver
// and cuBLASLt: einc and every executable still run where there is no
// NCCL, and need one only when asked. The ranks' communicator is made from
// a unique id that rank 0 draws and the bootstrap Communicator (MPI, which
// launched the ranks) broadcasts; with no bootstrap, one rank alone.
// Every call is checked: the NCCL call, its ncclGetErrorString and
// ncclGetLastError in the message. The destructor destroys the
// communicator (after its work is done); a rank that failed aborts it.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_NCCLCOLLECTIVES_H
#define EINC_RUNTIME_NCCLCOLLECTIVES_H

#include "runtime/dist/Collectives.h"

#include <memory>
#include <string>

namespace einrt {

class Communicator;
class CudaDevice;

/// The NCCL library found: its file and NCCL_VERSION_CODE.
struct NcclLibraryInfo {
  std::string file;
  int version = 0;
};

/// Opens libnccl.so.2 (found as runtime/cuda/CudaLibraries.h says:
/// EINC_NCCL_LIBRARY alone when set, else the loader, the toolkit, the
/// nvidia-nccl wheel) and reads its version; needs no GPU. Unavailable:
/// none found ("einc: NCCL not found ..."), a library without NCCL's
/// functions, or an NCCL older than nccl_abi::kOldestVersion.
Expected<NcclLibraryInfo> findNccl();

/// "2.28.9" of an NCCL_VERSION_CODE.
std::string ncclVersionText(int code);

/// An NCCL communicator of `bootstrap`'s ranks (null: this process alone)
/// on `device`'s GPU and stream (unavailable: no NCCL, or it could not
/// start). Collective: every rank calls it.
Expected<std::unique_ptr<Collectives>> openNccl(std::shared_ptr<CudaDevice> device,
                                                Communicator *bootstrap);

} // namespace einrt

#endif // EINC_RUNTIME_NCCLCOLLECTIVES_H
