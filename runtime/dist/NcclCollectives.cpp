//===- NcclCollectives.cpp - NCCL on the cuda device's stream -------------===//
#include "runtime/dist/NcclCollectives.h"

#include "runtime/cuda/CudaDevice.h"
#include "runtime/cuda/CudaLibraries.h"
#include "runtime/dist/Communicator.h"
#include "runtime/dist/NcclAbi.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace einrt {
namespace {

namespace abi = nccl_abi;

struct NcclApi {
  void *lib = nullptr;
  std::string file;
  int version = 0;
  abi::GetVersionFn getVersion = nullptr;
  abi::GetUniqueIdFn getUniqueId = nullptr;
  abi::CommInitRankFn commInitRank = nullptr;
  abi::CommDestroyFn commDestroy = nullptr;
  abi::CommAbortFn commAbort = nullptr;
  abi::GetErrorStringFn getErrorString = nullptr;
  abi::GetLastErrorFn getLastError = nullptr;
  abi::GroupFn groupStart = nullptr, groupEnd = nullptr;
  abi::SendFn send = nullptr;
  abi::RecvFn recv = nullptr;
  abi::AllGatherFn allGather = nullptr;
  abi::AllReduceFn allReduce = nullptr;
  abi::BroadcastFn broadcast = nullptr;
};

template <class T> bool load(void *lib, const char *name, T &out) {
  out = reinterpret_cast<T>(dlsym(lib, name));
  return out != nullptr;
}

/// Opens and resolves NCCL into `api` (the library stays loaded: NCCL is
/// never unloaded while the process lives).
Status openLibrary(NcclApi &api) {
  Expected<OpenedCudaLibrary> library =
      openCudaLibrary(ncclLibrary(), cudaLibrarySearch(ncclLibrary()));
  if (!library.ok())
    return Status(StatusCode::Unavailable, library.status().message());
  OpenedCudaLibrary opened = library.take();
  // RTLD_LOCAL (openCudaLibrary's): NCCL's own copy of the CUDA runtime stays its own.
  void *lib = opened.handle;
  api.file = opened.file;
  bool found =
      load(lib, "ncclGetVersion", api.getVersion) &&
      load(lib, "ncclGetUniqueId", api.getUniqueId) &&
      load(lib, "ncclCommInitRank", api.commInitRank) &&
      load(lib, "ncclCommDestroy", api.commDestroy) && load(lib, "ncclCommAbort", api.commAbort) &&
      load(lib, "ncclGetErrorString", api.getErrorString) &&
      load(lib, "ncclGetLastError", api.getLastError) &&
      load(lib, "ncclGroupStart", api.groupStart) && load(lib, "ncclGroupEnd", api.groupEnd) &&
      load(lib, "ncclSend", api.send) && load(lib, "ncclRecv", api.recv) &&
      load(lib, "ncclAllGather", api.allGather) && load(lib, "ncclAllReduce", api.allReduce) &&
      load(lib, "ncclBroadcast", api.broadcast);
  if (!found || api.getVersion(&api.version) != abi::kSuccess)
    return Status(
        StatusCode::Unavailable,
        api.file + " is not an NCCL of " + ncclVersionText(abi::kOldestVersion) +
            " or later (it lacks " +
            (found ? std::string("a working ncclGetVersion") : "NCCL's point-to-point calls") +
            ")");
  if (api.version < abi::kOldestVersion)
    return Status(StatusCode::Unavailable, api.file + " is NCCL " + ncclVersionText(api.version) +
                                               "; einc needs NCCL " +
                                               ncclVersionText(abi::kOldestVersion) + " or later");
  api.lib = lib;
  return {};
}

class NcclCollectives final : public Collectives {
public:
  NcclCollectives(NcclApi api, std::shared_ptr<CudaDevice> device, int me, int n)
      : nccl(api), gpu(std::move(device)), me(me), n(n) {}
  ~NcclCollectives() override {
    if (!comm)
      return;
    gpu->makeCurrent().ignore();
    // A failed call may leave work that never completes: abort, not wait.
    if (failed)
      nccl.commAbort(comm);
    else
      nccl.commDestroy(comm);
  }

  Status init(const abi::UniqueId &id) {
    EINRT_TRY(makeCurrent());
    return ok(nccl.commInitRank(&comm, n, id, me), "ncclCommInitRank", StatusCode::Unavailable);
  }

  int rank() const override { return me; }
  int size() const override { return n; }
  std::string describe() const override {
    return "nccl " + ncclVersionText(nccl.version) + ", GPU " + std::to_string(gpu->ordinal());
  }
  Device &device() const override { return *gpu; }

  Status allToAll(const void *send, void *recv, int64_t bytes) override {
    EINRT_TRY(makeCurrent());
    EINRT_TRY(ok(nccl.groupStart(), "ncclGroupStart"));
    Status posted;
    for (int r = 0; r < n && posted.ok(); ++r) {
      posted = ok(nccl.send(static_cast<const char *>(send) + r * bytes, size_t(bytes), abi::kUint8,
                            r, comm, stream()),
                  "ncclSend");
      if (posted.ok())
        posted = ok(nccl.recv(static_cast<char *>(recv) + r * bytes, size_t(bytes), abi::kUint8, r,
                              comm, stream()),
                    "ncclRecv");
    }
    Status closed = ok(nccl.groupEnd(), "ncclGroupEnd"); // a group is always closed
    return posted.ok() ? closed : posted;
  }
  Status allGather(void *all, int64_t bytes) override {
    char *base = static_cast<char *>(all);
    EINRT_TRY(makeCurrent());
    return ok(nccl.allGather(base + me * bytes, base, size_t(bytes), abi::kUint8, comm, stream()),
              "ncclAllGather");
  }
  Status sumFloats(float *data, int64_t count) override {
    EINRT_TRY(makeCurrent());
    return ok(nccl.allReduce(data, data, size_t(count), abi::kFloat32, abi::kSum, comm, stream()),
              "ncclAllReduce");
  }
  Status broadcast(void *data, int64_t bytes, int root) override {
    EINRT_TRY(makeCurrent());
    return ok(nccl.broadcast(data, data, size_t(bytes), abi::kUint8, root, comm, stream()),
              "ncclBroadcast");
  }

private:
  abi::Stream stream() const { return gpu->nativeStream(); }
  Status makeCurrent() { return gpu->makeCurrent(); }
  /// A failed NCCL call: i/o (the data did not move), or `code`.
  Status ok(int rc, const char *call, StatusCode code = StatusCode::Io) {
    if (rc == abi::kSuccess)
      return {};
    failed = true;
    std::string why = nccl.getErrorString(rc);
    if (const char *last = comm ? nccl.getLastError(comm) : nullptr; last && *last)
      why += ": " + std::string(last);
    return Status(code, std::string(call) + " failed on rank " + std::to_string(me) + " (GPU " +
                            std::to_string(gpu->ordinal()) + "): " + why);
  }

  const NcclApi nccl;
  std::shared_ptr<CudaDevice> gpu;
  int me, n;
  abi::Comm comm = nullptr;
  bool failed = false;
};

} // namespace

std::string ncclVersionText(int code) {
  // NCCL_VERSION(X, Y, Z): X·10000 + Y·100 + Z from 2.9 on, X·1000 + Y·100 + Z before.
  int major = code >= 10000 ? code / 10000 : code / 1000;
  int minor = code >= 10000 ? code % 10000 / 100 : code % 1000 / 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

Expected<NcclLibraryInfo> findNccl() {
  NcclApi api;
  EINRT_TRY(openLibrary(api));
  NcclLibraryInfo out;
  out.file = api.file;
  out.version = api.version;
  return out;
}

Expected<std::unique_ptr<Collectives>> openNccl(std::shared_ptr<CudaDevice> device,
                                                Communicator *bootstrap) {
  const int me = bootstrap ? bootstrap->rank() : 0, n = bootstrap ? bootstrap->size() : 1;
  // Rank 0 draws the id and tells every rank whether it could: a rank
  // that cannot go on must not leave the others waiting in the broadcast.
  NcclApi api;
  Status why = openLibrary(api);
  const bool opened = why.ok();
  abi::UniqueId id{};
  char status[1 + abi::kUniqueIdBytes] = {0};
  if (me == 0) {
    int rc = opened ? api.getUniqueId(&id) : abi::kSuccess;
    status[0] = opened && rc == abi::kSuccess;
    if (opened && !status[0])
      why = Status(StatusCode::Unavailable,
                   "ncclGetUniqueId failed: " + std::string(api.getErrorString(rc)));
    std::memcpy(status + 1, id.internal, sizeof id.internal);
  }
  if (n > 1)
    EINRT_TRY(bootstrap->broadcast(status, sizeof status, 0));
  if (!opened)
    return why;
  if (!status[0])
    return me == 0 ? why : Status(StatusCode::Unavailable, "rank 0 could not start NCCL");
  std::memcpy(id.internal, status + 1, sizeof id.internal);
  auto nccl = std::make_unique<NcclCollectives>(api, std::move(device), me, n);
  EINRT_TRY(nccl->init(id));
  return std::unique_ptr<Collectives>(std::move(nccl));
}

} // namespace einrt
