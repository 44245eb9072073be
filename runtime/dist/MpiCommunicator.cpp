//===- MpiCommunicator.cpp - Open MPI, loaded with dlopen -----------------===//
#include "runtime/dist/MpiCommunicator.h"
#include "runtime/dist/MpiAbi.h"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <vector>

namespace einrt {
namespace {

// Open MPI's handle types are pointers to its objects; these are opaque here.
using Handle = void *;

struct MpiApi {
  void *lib = nullptr;
  Handle commWorld = nullptr, byteType = nullptr, floatType = nullptr, opSum = nullptr,
         errorsReturn = nullptr;
  int (*initThread)(int *, char ***, int, int *) = nullptr;
  int (*initialized)(int *) = nullptr;
  int (*finalize)() = nullptr;
  int (*commRank)(Handle, int *) = nullptr;
  int (*commSize)(Handle, int *) = nullptr;
  int (*commSetErrhandler)(Handle, Handle) = nullptr;
  int (*isend)(const void *, int, Handle, int, int, Handle, Handle *) = nullptr;
  int (*recv)(void *, int, Handle, int, int, Handle, void *) = nullptr;
  int (*waitall)(int, Handle *, void *) = nullptr;
  int (*bcast)(void *, int, Handle, int, Handle) = nullptr;
  int (*allreduce)(const void *, void *, int, Handle, Handle, Handle) = nullptr;
  int (*barrier)(Handle) = nullptr;
  int (*abort)(Handle, int) = nullptr;
  int (*errorString)(int, char *, int *) = nullptr;
  int (*libraryVersion)(char *, int *) = nullptr;
};

template <class T> bool load(void *lib, const char *name, T &out) {
  out = reinterpret_cast<T>(dlsym(lib, name));
  return out != nullptr;
}

using mpi_abi::kMaxErrorString;
using mpi_abi::kMaxVersionString;
using mpi_abi::kThreadSerialized;
// Largest message of one call: counts are ints.
constexpr int64_t kMaxChunk = int64_t(1) << 30;

class MpiCommunicator final : public Communicator {
public:
  explicit MpiCommunicator(MpiApi api) : mpi(api) {}
  ~MpiCommunicator() override {
    waitSends().ignore();
    mpi.barrier(mpi.commWorld);
    mpi.finalize();
  }

  Status start() {
    const StatusCode code = StatusCode::Unavailable;
    int provided = 0;
    EINRT_TRY(ok(mpi.initThread(nullptr, nullptr, kThreadSerialized, &provided), "MPI_Init_thread",
                 code));
    if (provided < kThreadSerialized)
      return Status(code, "MPI_Init_thread: this MPI gives thread level " +
                              std::to_string(provided) + ", below MPI_THREAD_SERIALIZED");
    EINRT_TRY(ok(mpi.commSetErrhandler(mpi.commWorld, mpi.errorsReturn), "MPI_Comm_set_errhandler",
                 code));
    EINRT_TRY(ok(mpi.commRank(mpi.commWorld, &me), "MPI_Comm_rank", code));
    return ok(mpi.commSize(mpi.commWorld, &n), "MPI_Comm_size", code);
  }

  int rank() const override { return me; }
  int size() const override { return n; }
  std::string describe() const override {
    char text[kMaxVersionString] = {};
    int len = 0;
    std::string v = mpi.libraryVersion && mpi.libraryVersion(text, &len) == 0
                        ? std::string(text, size_t(std::max(0, len)))
                        : "Open MPI";
    if (size_t nl = v.find_first_of(",\n"); nl != std::string::npos)
      v.resize(nl);
    return "mpi (" + v + ")";
  }

  Status send(const void *data, int64_t bytes, int to) override {
    const char *p = static_cast<const char *>(data);
    for (int64_t at = 0; at < bytes || (bytes == 0 && at == 0); at += kMaxChunk) {
      Handle request = nullptr;
      int len = int(std::min(kMaxChunk, bytes - at));
      EINRT_TRY(
          ok(mpi.isend(p + at, len, mpi.byteType, to, 0, mpi.commWorld, &request), "MPI_Isend"));
      pending.push_back(request);
      if (bytes == 0)
        break;
    }
    return {};
  }
  Status recv(void *data, int64_t bytes, int from) override {
    char *p = static_cast<char *>(data);
    for (int64_t at = 0; at < bytes || (bytes == 0 && at == 0); at += kMaxChunk) {
      int len = int(std::min(kMaxChunk, bytes - at));
      EINRT_TRY(
          ok(mpi.recv(p + at, len, mpi.byteType, from, 0, mpi.commWorld, nullptr), "MPI_Recv"));
      if (bytes == 0)
        break;
    }
    return {};
  }
  Status waitSends() override {
    if (pending.empty())
      return {};
    Status done = ok(mpi.waitall(int(pending.size()), pending.data(), nullptr), "MPI_Waitall");
    pending.clear();
    return done;
  }
  Status broadcast(void *data, int64_t bytes, int root) override {
    char *p = static_cast<char *>(data);
    for (int64_t at = 0; at < bytes; at += kMaxChunk)
      EINRT_TRY(ok(mpi.bcast(p + at, int(std::min(kMaxChunk, bytes - at)), mpi.byteType, root,
                             mpi.commWorld),
                   "MPI_Bcast"));
    return {};
  }
  Status sumFloats(float *data, int64_t count) override {
    void *inPlace = reinterpret_cast<void *>(mpi_abi::kInPlace);
    for (int64_t at = 0; at < count; at += kMaxChunk)
      EINRT_TRY(ok(mpi.allreduce(inPlace, data + at, int(std::min(kMaxChunk, count - at)),
                                 mpi.floatType, mpi.opSum, mpi.commWorld),
                   "MPI_Allreduce"));
    return {};
  }
  Status barrier() override { return ok(mpi.barrier(mpi.commWorld), "MPI_Barrier"); }
  [[noreturn]] void abort(int code) override {
    mpi.abort(mpi.commWorld, code);
    std::_Exit(code); // MPI_Abort does not return; if it did, end this rank
  }

private:
  /// A failed MPI call: i/o (the message did not move), or `code`.
  Status ok(int rc, const char *call, StatusCode code = StatusCode::Io) const {
    if (rc == mpi_abi::kSuccess)
      return {};
    char text[kMaxErrorString] = {};
    int len = 0;
    std::string why = mpi.errorString && mpi.errorString(rc, text, &len) == 0
                          ? std::string(text, size_t(std::max(0, len)))
                          : "error " + std::to_string(rc);
    return Status(code, std::string(call) + " failed on rank " + std::to_string(me) + ": " + why);
  }

  MpiApi mpi;
  int me = 0, n = 1;
  std::vector<Handle> pending;
};

} // namespace

bool launchedByMpi() { return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK"); }

std::pair<int, std::string> launcherWorldSize() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"})
    if (const char *v = std::getenv(name); v && *v) {
      char *end = nullptr;
      long n = std::strtol(v, &end, 10);
      if (*end == '\0' && n > 1 && n < (1 << 24))
        return {int(n), name};
    }
  return {1, ""};
}

int launcherLocalRank() {
  for (const char *name :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "LOCAL_RANK"})
    if (const char *v = std::getenv(name); v && *v) {
      char *end = nullptr;
      long r = std::strtol(v, &end, 10);
      if (*end == '\0' && r >= 0 && r < (1 << 20))
        return int(r);
    }
  return 0;
}

Expected<std::unique_ptr<Communicator>> openMpi() {
  const StatusCode code = StatusCode::Unavailable;
  std::vector<std::string> files;
  if (const char *env = std::getenv("EINC_MPI_LIBRARY"); env && *env) {
    files.push_back(env); // that library and no other
  } else {
    files.push_back("libmpi.so.40");
    files.push_back("libmpi.so");
  }
  // A rank's ring thread waits in MPI while its compute threads work: it
  // must yield the core rather than spin on it (the user's setting wins).
  setenv("OMPI_MCA_mpi_yield_when_idle", "1", /*overwrite=*/0);
  MpiApi api;
  std::string why;
  for (const std::string &file : files) {
    api.lib = dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (api.lib)
      break;
    const char *e = dlerror();
    why += (why.empty() ? "" : "; ") + std::string(e ? e : file + ": dlopen failed");
  }
  if (!api.lib)
    return Status(code, "--distributed mpi needs Open MPI's libmpi (apt-get install openmpi-bin "
                        "libopenmpi-dev, or set EINC_MPI_LIBRARY): " +
                            why);
  void *lib = api.lib;
  bool found =
      load(lib, "MPI_Init_thread", api.initThread) &&
      load(lib, "MPI_Initialized", api.initialized) && load(lib, "MPI_Finalize", api.finalize) &&
      load(lib, "MPI_Comm_rank", api.commRank) && load(lib, "MPI_Comm_size", api.commSize) &&
      load(lib, "MPI_Comm_set_errhandler", api.commSetErrhandler) &&
      load(lib, "MPI_Isend", api.isend) && load(lib, "MPI_Recv", api.recv) &&
      load(lib, "MPI_Waitall", api.waitall) && load(lib, "MPI_Bcast", api.bcast) &&
      load(lib, "MPI_Allreduce", api.allreduce) && load(lib, "MPI_Barrier", api.barrier) &&
      load(lib, "MPI_Abort", api.abort) && load(lib, "MPI_Error_string", api.errorString);
  load(lib, "MPI_Get_library_version", api.libraryVersion);
  // Open MPI's predefined handles: the addresses of these globals.
  api.commWorld = dlsym(lib, mpi_abi::kCommWorld);
  api.byteType = dlsym(lib, mpi_abi::kByte);
  api.floatType = dlsym(lib, mpi_abi::kFloat);
  api.opSum = dlsym(lib, mpi_abi::kSum);
  api.errorsReturn = dlsym(lib, mpi_abi::kErrorsReturn);
  if (!found)
    return Status(code, "the MPI library lacks MPI-3 functions (" + files.front() + ")");
  if (!api.commWorld || !api.byteType || !api.floatType || !api.opSum || !api.errorsReturn)
    return Status(code, "the MPI library is not Open MPI (no ompi_mpi_comm_world): einc loads "
                        "Open MPI's ABI only");
  auto comm = std::make_unique<MpiCommunicator>(api);
  EINRT_TRY(comm->start());
  return std::unique_ptr<Communicator>(std::move(comm));
}

} // namespace einrt
