//===- Nvrtc.cpp - CUDA C++ to cubin / PTX through NVRTC, cached ----------===//
#include "runtime/cuda/Nvrtc.h"
#include "runtime/cuda/CudaLibraries.h"
#include "runtime/cuda/NvrtcCache.h"

#include <chrono>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <sys/stat.h>
#include <type_traits>

namespace einrt {

namespace {

// NVRTC's C API, as nvrtc.h declares it (nvrtcResult is an enum: an int).
struct NvrtcProgramImpl;
using NvrtcProgram = NvrtcProgramImpl *;
using NvrtcResult = int;

} // namespace

struct Nvrtc::Api {
  const char *(*getErrorString)(NvrtcResult);
  NvrtcResult (*version)(int *, int *);
  NvrtcResult (*createProgram)(NvrtcProgram *, const char *, const char *, int, const char *const *,
                               const char *const *);
  NvrtcResult (*destroyProgram)(NvrtcProgram *);
  NvrtcResult (*compileProgram)(NvrtcProgram, int, const char *const *);
  NvrtcResult (*getPTXSize)(NvrtcProgram, size_t *);
  NvrtcResult (*getPTX)(NvrtcProgram, char *);
  NvrtcResult (*getCUBINSize)(NvrtcProgram, size_t *);
  NvrtcResult (*getCUBIN)(NvrtcProgram, char *);
  NvrtcResult (*getProgramLogSize)(NvrtcProgram, size_t *);
  NvrtcResult (*getProgramLog)(NvrtcProgram, char *);
};

namespace {

bool isFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string parentDir(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

/// The CUDA include directory: beside the library (lib/ or lib64/ next to
/// include/, or targets/<arch>/lib), else the usual environment and place.
std::string findIncludeDir(const std::string &library) {
  std::vector<std::string> candidates;
  if (!library.empty()) {
    std::string lib = parentDir(library);
    candidates.push_back(lib + "/../include");
    candidates.push_back(lib + "/../../include");
  }
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *v = std::getenv(var); v && *v)
      candidates.push_back(std::string(v) + "/include");
  candidates.push_back("/usr/local/cuda/include");
#ifdef EINC_CUDA_INCLUDE_DIR
  candidates.push_back(EINC_CUDA_INCLUDE_DIR); // the toolkit CMake found
#endif
  for (const std::string &dir : candidates)
    if (isFile(dir + "/cuda_bf16.h") && isFile(dir + "/cuda_fp16.h"))
      return dir;
  return "";
}

struct Loaded {
  Nvrtc *nvrtc = nullptr;
  Status error; // why there is none
};

} // namespace

/// "runtime/cuda/Nvrtc.cpp:123: nvrtcCompileProgram: NVRTC_ERROR_COMPILATION".
#define EINC_NVRTC_CHECK(api, call, what)                                                          \
  [&]() {                                                                                          \
    NvrtcResult r_ = (call);                                                                       \
    if (r_ == 0)                                                                                   \
      return Status::success();                                                                    \
    return Status::internal(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " + what + \
                            ": " + (api)->getErrorString(r_));                                     \
  }()

Expected<const Nvrtc *> Nvrtc::load() {
  static Loaded loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    Expected<OpenedCudaLibrary> found =
        openCudaLibrary(nvrtcLibrary(), cudaLibrarySearch(nvrtcLibrary()));
    if (!found.ok()) {
      loaded.error = found.takeStatus();
      return;
    }
    const OpenedCudaLibrary &opened = *found;
    void *lib = opened.handle;
    auto *api = new Api();
    bool ok = true;
    auto sym = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (!fn) {
        loaded.error = Status(StatusCode::Unavailable,
                              opened.file + " is not NVRTC (" + name + " is missing)");
        ok = false;
      }
    };
    sym(api->getErrorString, "nvrtcGetErrorString");
    sym(api->version, "nvrtcVersion");
    sym(api->createProgram, "nvrtcCreateProgram");
    sym(api->destroyProgram, "nvrtcDestroyProgram");
    sym(api->compileProgram, "nvrtcCompileProgram");
    sym(api->getPTXSize, "nvrtcGetPTXSize");
    sym(api->getPTX, "nvrtcGetPTX");
    sym(api->getCUBINSize, "nvrtcGetCUBINSize");
    sym(api->getCUBIN, "nvrtcGetCUBIN");
    sym(api->getProgramLogSize, "nvrtcGetProgramLogSize");
    sym(api->getProgramLog, "nvrtcGetProgramLog");
    if (!ok)
      return;
    auto *n = new Nvrtc();
    n->api_ = api;
    int major = 0, minor = 0;
    if (Status v = EINC_NVRTC_CHECK(api, api->version(&major, &minor), "nvrtcVersion"); !v.ok()) {
      loaded.error = Status(StatusCode::Unavailable, opened.file + ": " + v.message());
      return;
    }
    n->version_ = std::to_string(major) + "." + std::to_string(minor);
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(api->version), &info) && info.dli_fname)
      n->library_ = info.dli_fname;
    n->includeDir_ = findIncludeDir(n->library_);
    loaded.nvrtc = n; // kept for the process, as the library
  });
  if (!loaded.nvrtc)
    return loaded.error;
  return static_cast<const Nvrtc *>(loaded.nvrtc);
}

std::vector<std::string> Nvrtc::commandLine(const NvrtcOptions &o) const {
  std::vector<std::string> options = {"--gpu-architecture=" + o.arch, "-std=c++17",
                                      "-default-device", "--fmad=false"};
  if (!includeDir_.empty())
    options.push_back("-I" + includeDir_);
  bool cubin = o.arch.rfind("sm_", 0) == 0;
  if (cubin && o.ptxasReport)
    options.push_back("--ptxas-options=-v");
  options.insert(options.end(), o.extra.begin(), o.extra.end());
  return options;
}

Expected<NvrtcOutput> Nvrtc::compile(const std::string &source, const NvrtcOptions &o) const {
  auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  bool cubin = o.arch.rfind("sm_", 0) == 0;
  if (!cubin && o.arch.rfind("compute_", 0) != 0)
    return Status::invalid("unknown CUDA architecture '" + o.arch +
                           "' (sm_XY for a cubin, compute_XY for PTX)");
  NvrtcOutput out;
  out.options = commandLine(o);
  out.image.arch = o.arch;
  out.image.ptx = !cubin;

  std::string dir = o.cache ? (o.cacheDir.empty() ? defaultNvrtcCacheDir() : o.cacheDir) : "";
  std::string key = nvrtccache::keyText(source, out.options, version_, o.arch);
  uint32_t check = nvrtccache::keyCheck(key);
  std::string file = nvrtcCacheKey(source, out.options, version_, o.arch) + ".nvrtc";
  if (!dir.empty()) {
    nvrtccache::Entry entry;
    if (nvrtccache::read(dir + "/" + file, check, entry) && entry.ptx == !cubin) {
      out.image.bytes = std::move(entry.image);
      out.log = std::move(entry.log);
      out.functions = parsePtxasReport(out.log);
      out.fromCache = true;
      out.seconds = seconds();
      return out;
    }
  }

  const Api *api = api_;
  NvrtcProgram program = nullptr;
  EINRT_TRY(EINC_NVRTC_CHECK(
      api, api->createProgram(&program, source.c_str(), o.name.c_str(), 0, nullptr, nullptr),
      "nvrtcCreateProgram"));
  struct Destroy {
    const Api *api;
    NvrtcProgram *p;
    ~Destroy() { api->destroyProgram(p); }
  } destroy{api, &program};

  std::vector<const char *> argv;
  for (const std::string &s : out.options)
    argv.push_back(s.c_str());
  NvrtcResult compiled = api->compileProgram(program, int(argv.size()), argv.data());
  size_t logSize = 0;
  EINRT_TRY(
      EINC_NVRTC_CHECK(api, api->getProgramLogSize(program, &logSize), "nvrtcGetProgramLogSize"));
  std::string log(logSize, '\0');
  if (logSize)
    EINRT_TRY(EINC_NVRTC_CHECK(api, api->getProgramLog(program, log.data()), "nvrtcGetProgramLog"));
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
    log.pop_back();
  if (compiled != 0)
    return Status::invalid(std::string(__FILE__) + ":" + std::to_string(__LINE__) +
                           ": nvrtcCompileProgram: " + api->getErrorString(compiled) +
                           " compiling " + o.name + " for " + o.arch +
                           (includeDir_.empty() ? " (no CUDA include directory found)" : "") +
                           (log.empty() ? "" : ":\n" + log));
  size_t size = 0;
  std::string image;
  if (cubin) {
    EINRT_TRY(EINC_NVRTC_CHECK(api, api->getCUBINSize(program, &size), "nvrtcGetCUBINSize"));
    image.resize(size);
    EINRT_TRY(EINC_NVRTC_CHECK(api, api->getCUBIN(program, image.data()), "nvrtcGetCUBIN"));
  } else {
    EINRT_TRY(EINC_NVRTC_CHECK(api, api->getPTXSize(program, &size), "nvrtcGetPTXSize"));
    image.resize(size);
    EINRT_TRY(EINC_NVRTC_CHECK(api, api->getPTX(program, image.data()), "nvrtcGetPTX"));
    while (!image.empty() && image.back() == '\0')
      image.pop_back();
  }
  out.image.bytes = image;
  out.log = log;
  out.functions = parsePtxasReport(log);
  if (!dir.empty()) {
    nvrtccache::Entry entry{!cubin, std::move(image), std::move(log)};
    if (Status written = nvrtccache::write(dir, file, check, entry); !written.ok())
      out.cacheWarning = "the NVRTC cache entry was not written: " + written.message();
  }
  out.seconds = seconds();
  return out;
}

} // namespace einrt
