//===- NcclCollectives.cpp - NCCL on the cuda device's stream -------------===//
#include "runtime/dist/NcclCollectives.h"
#include "runtime/base/StatusOut.h"

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
bool openLibrary(NcclApi &api, std::string &error) {
  OpenedCudaLibrary opened;
  if (!statusOut(openCudaLibrary(ncclLibrary(), cudaLibrarySearch(ncclLibrary())), opened, error))
    return false;
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
  if (!found || api.getVersion(&api.version) != abi::kSuccess) {
    error = api.file + " is not an NCCL of " + ncclVersionText(abi::kOldestVersion) +
            " or later (it lacks " +
            (found ? std::string("a working ncclGetVersion") : "NCCL's point-to-point calls") + ")";
    return false;
  }
  if (api.version < abi::kOldestVersion) {
    error = api.file + " is NCCL " + ncclVersionText(api.version) + "; einc needs NCCL " +
            ncclVersionText(abi::kOldestVersion) + " or later";
    return false;
  }
  api.lib = lib;
  return true;
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

  bool init(const abi::UniqueId &id, std::string &error) {
    if (!current(error))
      return false;
    return ok(nccl.commInitRank(&comm, n, id, me), "ncclCommInitRank", error);
  }

  /// The GPU's context on this thread (its Status as the collectives' error).
  bool current(std::string &error) {
    Status st = gpu->makeCurrent();
    if (!st.ok())
      error = st.message();
    return st.ok();
  }

  int rank() const override { return me; }
  int size() const override { return n; }
  std::string describe() const override {
    return "nccl " + ncclVersionText(nccl.version) + ", GPU " + std::to_string(gpu->ordinal());
  }
  Device &device() const override { return *gpu; }

  bool allToAll(const void *send, void *recv, int64_t bytes, std::string &error) override {
    if (!current(error) || !ok(nccl.groupStart(), "ncclGroupStart", error))
      return false;
    bool posted = true;
    for (int r = 0; r < n && posted; ++r)
      posted = ok(nccl.send(static_cast<const char *>(send) + r * bytes, size_t(bytes), abi::kUint8,
                            r, comm, stream()),
                  "ncclSend", error) &&
               ok(nccl.recv(static_cast<char *>(recv) + r * bytes, size_t(bytes), abi::kUint8, r,
                            comm, stream()),
                  "ncclRecv", error);
    std::string ended;
    bool closed = ok(nccl.groupEnd(), "ncclGroupEnd", ended); // a group is always closed
    if (posted && !closed)
      error = ended;
    return posted && closed;
  }
  bool allGather(void *all, int64_t bytes, std::string &error) override {
    char *base = static_cast<char *>(all);
    return current(error) &&
           ok(nccl.allGather(base + me * bytes, base, size_t(bytes), abi::kUint8, comm, stream()),
              "ncclAllGather", error);
  }
  bool sumFloats(float *data, int64_t count, std::string &error) override {
    return current(error) &&
           ok(nccl.allReduce(data, data, size_t(count), abi::kFloat32, abi::kSum, comm, stream()),
              "ncclAllReduce", error);
  }
  bool broadcast(void *data, int64_t bytes, int root, std::string &error) override {
    return current(error) &&
           ok(nccl.broadcast(data, data, size_t(bytes), abi::kUint8, root, comm, stream()),
              "ncclBroadcast", error);
  }

private:
  abi::Stream stream() const { return gpu->nativeStream(); }
  bool ok(int rc, const char *call, std::string &error) {
    if (rc == abi::kSuccess)
      return true;
    failed = true;
    std::string why = nccl.getErrorString(rc);
    if (const char *last = comm ? nccl.getLastError(comm) : nullptr; last && *last)
      why += ": " + std::string(last);
    error = std::string(call) + " failed on rank " + std::to_string(me) + " (GPU " +
            std::to_string(gpu->ordinal()) + "): " + why;
    return false;
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

bool findNccl(NcclLibraryInfo &out, std::string &error) {
  NcclApi api;
  if (!openLibrary(api, error))
    return false;
  out.file = api.file;
  out.version = api.version;
  return true;
}

std::unique_ptr<Collectives> openNccl(std::shared_ptr<CudaDevice> device, Communicator *bootstrap,
                                      std::string &error) {
  const int me = bootstrap ? bootstrap->rank() : 0, n = bootstrap ? bootstrap->size() : 1;
  // Rank 0 draws the id and tells every rank whether it could: a rank
  // that cannot go on must not leave the others waiting in the broadcast.
  std::string why;
  NcclApi api;
  const bool opened = openLibrary(api, why);
  abi::UniqueId id{};
  char status[1 + abi::kUniqueIdBytes] = {0};
  if (me == 0) {
    int rc = opened ? api.getUniqueId(&id) : abi::kSuccess;
    status[0] = opened && rc == abi::kSuccess;
    if (opened && !status[0])
      why = "ncclGetUniqueId failed: " + std::string(api.getErrorString(rc));
    std::memcpy(status + 1, id.internal, sizeof id.internal);
  }
  if (n > 1 && !bootstrap->broadcast(status, sizeof status, 0, error))
    return nullptr;
  if (!opened) {
    error = why;
    return nullptr;
  }
  if (!status[0]) {
    error = me == 0 ? why : "rank 0 could not start NCCL";
    return nullptr;
  }
  std::memcpy(id.internal, status + 1, sizeof id.internal);
  auto nccl = std::make_unique<NcclCollectives>(api, std::move(device), me, n);
  if (!nccl->init(id, error))
    return nullptr;
  return nccl;
}

} // namespace einrt
