//===- CudaDriver.cpp - The CUDA driver API, loaded with dlopen -----------===//
#include "runtime/cuda/CudaDriver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

namespace einrt {

namespace {

#define EINRT_STRINGIFY_EXPANDED(x) EINRT_STRINGIFY(x)
#define EINRT_STRINGIFY(x) #x

/// Names of the results a driver may give before its own cuGetErrorName
/// works (the toolkit's stub library answers every call with
/// CUDA_ERROR_STUB_LIBRARY, cuGetErrorName included).
const char *fallbackName(CUresult r) {
  switch (r) {
  case CUDA_ERROR_NOT_INITIALIZED:
    return "CUDA_ERROR_NOT_INITIALIZED";
  case CUDA_ERROR_STUB_LIBRARY:
    return "CUDA_ERROR_STUB_LIBRARY";
  case CUDA_ERROR_NO_DEVICE:
    return "CUDA_ERROR_NO_DEVICE";
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
  case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
  case CUDA_ERROR_DEVICE_UNAVAILABLE:
    return "CUDA_ERROR_DEVICE_UNAVAILABLE";
  default:
    return nullptr;
  }
}

std::string versionText(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

template <class Fn> bool symbol(void *lib, const char *name, Fn &out) {
  out = reinterpret_cast<Fn>(dlsym(lib, name));
  return out != nullptr;
}

} // namespace

const char *projectRelativePath(const char *file) {
  // The last "runtime/" (or the basename): messages name files as the
  // repository does.
  const char *at = nullptr;
  for (const char *p = std::strstr(file, "runtime/"); p; p = std::strstr(p + 1, "runtime/"))
    at = p;
  if (at)
    return at;
  const char *slash = std::strrchr(file, '/');
  return slash ? slash + 1 : file;
}

std::string CudaDriver::describe(CUresult r) const {
  const char *name = nullptr, *text = nullptr;
  if (!cuGetErrorName || cuGetErrorName(r, &name) != CUDA_SUCCESS)
    name = nullptr;
  if (!cuGetErrorString || cuGetErrorString(r, &text) != CUDA_SUCCESS)
    text = nullptr;
  if (!name)
    name = fallbackName(r);
  std::string out = name ? name : "CUresult " + std::to_string(int(r));
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

Status CudaDriver::check(CUresult r, const char *call, const char *file, int line) const {
  if (r == CUDA_SUCCESS)
    return Status::success();
  StatusCode code = StatusCode::Internal;
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    code = StatusCode::OutOfMemory;
  else if (r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_INVALID_DEVICE ||
           r == CUDA_ERROR_DEVICE_UNAVAILABLE || r == CUDA_ERROR_NOT_INITIALIZED)
    code = StatusCode::Unavailable;
  return Status(code, std::string(projectRelativePath(file)) + ":" + std::to_string(line) + ": " +
                          call + " failed: " + describe(r));
}

Expected<std::shared_ptr<const CudaDriver>> CudaDriver::load(const std::string &file) {
  auto d = std::make_shared<CudaDriver>();
  d->library = file;
  if (d->library.empty()) {
    const char *env = std::getenv("EINC_CUDA_DRIVER");
    d->library = env && *env ? env : "libcuda.so.1";
  }
  dlerror();
  void *lib = dlopen(d->library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    return Status(StatusCode::Unavailable, "no CUDA driver (" + d->library + " not found: " +
                                               (why ? why : "dlopen failed") + ")");
  }
  if (!symbol(lib, "cuInit", d->cuInit) ||
      !symbol(lib, "cuDriverGetVersion", d->cuDriverGetVersion))
    return Status(StatusCode::Unavailable,
                  "no CUDA driver (" + d->library + " has no cuInit: not a CUDA driver library)");
  symbol(lib, "cuGetErrorName", d->cuGetErrorName);
  symbol(lib, "cuGetErrorString", d->cuGetErrorString);
  if (CUresult r = d->cuInit(0); r != CUDA_SUCCESS)
    return Status(StatusCode::Unavailable,
                  "no CUDA device (cuInit failed: " + d->describe(r) + ")");
  if (CUresult r = d->cuDriverGetVersion(&d->version); r != CUDA_SUCCESS)
    return Status(StatusCode::Unavailable, "the CUDA driver (" + d->library +
                                               "): cuDriverGetVersion failed: " + d->describe(r));
  if (d->version < CUDA_VERSION)
    return Status(StatusCode::Unavailable,
                  "the CUDA driver (" + d->library + ") supports CUDA " + versionText(d->version) +
                      "; this einc was built with CUDA " + versionText(CUDA_VERSION) +
                      " headers and needs a driver at least as new");

  decltype(&::cuGetProcAddress) getProc = nullptr;
  symbol(lib, "cuGetProcAddress_v2", getProc);
  auto resolve = [&](const char *name, const char *versioned, void **out) -> Status {
    if (getProc) {
      CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
      CUresult r = getProc(name, out, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
      if (r == CUDA_SUCCESS && status == CU_GET_PROC_ADDRESS_SUCCESS && *out)
        return Status::success();
      return Status(StatusCode::Unavailable,
                    "the CUDA driver (" + d->library + ", CUDA " + versionText(d->version) +
                        ") has no " + name + " for CUDA " + versionText(CUDA_VERSION) +
                        (status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                             ? " (version not sufficient)"
                             : "") +
                        (r != CUDA_SUCCESS ? ": " + d->describe(r) : std::string()));
    }
    *out = dlsym(lib, versioned);
    if (*out)
      return Status::success();
    return Status(StatusCode::Unavailable,
                  "the CUDA driver (" + d->library + ") has no " + versioned);
  };
#define EINRT_CUDA_RESOLVE(name)                                                                   \
  EINRT_TRY(resolve(#name, EINRT_STRINGIFY_EXPANDED(name), reinterpret_cast<void **>(&d->name)));
  EINRT_CUDA_DRIVER_FUNCTIONS(EINRT_CUDA_RESOLVE)
#undef EINRT_CUDA_RESOLVE

  if (CUresult r = d->cuDeviceGetCount(&d->devices); r != CUDA_SUCCESS)
    return Status(StatusCode::Unavailable,
                  "no CUDA device (cuDeviceGetCount failed: " + d->describe(r) + ")");
  if (d->devices == 0)
    return Status(StatusCode::Unavailable,
                  "no CUDA device (the driver, CUDA " + versionText(d->version) + ", sees none)");
  return std::shared_ptr<const CudaDriver>(d);
}

} // namespace einrt
