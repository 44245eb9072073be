//===- NcclAbi.h - What einc assumes of NCCL's ABI -------------*- C++ -*-===//
//
// NcclCollectives.cpp opens libnccl with dlopen and never includes nccl.h;
// these are the values and function types it takes from nccl.h instead
// (an enum is an int, a stream a pointer, a communicator an opaque
// pointer). test/unit/cuda/NcclAbiTest.cpp checks each against the
// toolkit's nccl.h.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_NCCLABI_H
#define EINC_RUNTIME_NCCLABI_H

#include <cstddef>

namespace einrt::nccl_abi {

constexpr int kSuccess = 0;         // ncclSuccess
constexpr int kInProgress = 7;      // ncclInProgress
constexpr int kUint8 = 1;           // ncclUint8
constexpr int kFloat32 = 7;         // ncclFloat32
constexpr int kSum = 0;             // ncclSum
constexpr int kUniqueIdBytes = 128; // NCCL_UNIQUE_ID_BYTES
/// The oldest NCCL with everything used here (point-to-point calls and
/// ncclGetLastError): 2.13, as NCCL_VERSION_CODE counts.
constexpr int kOldestVersion = 21300;

struct UniqueId {
  char internal[kUniqueIdBytes];
};
using Comm = void *;   // ncclComm_t
using Stream = void *; // cudaStream_t (a CUstream)

using GetVersionFn = int (*)(int *);
using GetUniqueIdFn = int (*)(UniqueId *);
using CommInitRankFn = int (*)(Comm *, int, UniqueId, int);
using CommDestroyFn = int (*)(Comm);
using CommAbortFn = int (*)(Comm);
using GetErrorStringFn = const char *(*)(int);
using GetLastErrorFn = const char *(*)(Comm);
using GroupFn = int (*)();
using SendFn = int (*)(const void *, size_t, int, int, Comm, Stream);
using RecvFn = int (*)(void *, size_t, int, int, Comm, Stream);
using AllGatherFn = int (*)(const void *, void *, size_t, int, Comm, Stream);
using AllReduceFn = int (*)(const void *, void *, size_t, int, int, Comm, Stream);
using BroadcastFn = int (*)(const void *, void *, size_t, int, int, Comm, Stream);

} // namespace einrt::nccl_abi

#endif // EINC_RUNTIME_NCCLABI_H
