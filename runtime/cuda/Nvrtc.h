//===- Nvrtc.h - CUDA C++ to cubin / PTX through NVRTC, cached -*- C++ -*-===//
//
// NVRTC (the CUDA runtime compiler) loaded with dlopen — libnvrtc.so.13,
// found as runtime/cuda/CudaLibraries.h says (EINC_NVRTC_LIBRARY, the loader, the
// toolkit, PyTorch's wheels) — never linked: a build and a binary without
// CUDA work, and Nvrtc::load then says "einc: NVRTC not found (...)". No
// CUDA headers at build time: the few entry points are declared here.
//
// compile() turns a translation unit (codegen/CudaRenderer.h's bundle
// source) into a cubin for an architecture ("sm_90") or PTX for a virtual
// one ("compute_90", which the driver compiles for the device it runs on),
// with -std=c++17, -default-device, --fmad=false and -I the CUDA include
// directory (cuda_bf16.h, cuda_fp16.h: found beside the loaded library, else
// in $CUDA_HOME, $CUDA_PATH, /usr/local/cuda). A cubin compile asks ptxas
// for its report (--ptxas-options=-v), parsed into registers, stack, spill
// stores and loads per kernel. Any error carries the NVRTC log.
//
// Results are cached on disk, keyed by a hash of (source, options, NVRTC
// version, architecture): in $EINC_CACHE_DIR, else $XDG_CACHE_HOME/einc/cuda,
// else ~/.cache/einc/cuda. An entry is written atomically (a temporary file
// renamed into place) with a checksum; an entry that does not read back
// intact is ignored and recompiled.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_NVRTC_H
#define EINC_RUNTIME_NVRTC_H

#include "runtime/base/Status.h"
#include "runtime/cuda/CudaKernels.h"

#include <cstdint>
#include <string>
#include <vector>

namespace einrt {

/// What ptxas reports of one function (-v).
struct PtxasReport {
  std::string function;
  std::string arch;   // "sm_90"
  bool entry = false; // a __global__ function (else a called device function)
  int32_t registers = 0;
  int32_t barriers = 0;
  int64_t stackFrameBytes = 0;
  int64_t spillStoreBytes = 0, spillLoadBytes = 0;
  int64_t sharedBytes = 0;
  bool spills() const { return spillStoreBytes > 0 || spillLoadBytes > 0; }
};

/// The functions ptxas reported in an NVRTC log (`ptxas info` lines), in
/// the order it compiled them. Lines it does not know are skipped.
std::vector<PtxasReport> parsePtxasReport(const std::string &log);

struct NvrtcOptions {
  /// "sm_XY" compiles a cubin, "compute_XY" PTX.
  std::string arch = "sm_90";
  /// Ask ptxas for its per-function report (cubins only).
  bool ptxasReport = true;
  /// More NVRTC options, after the defaults.
  std::vector<std::string> extra;
  /// Use the on-disk cache, in `cacheDir` ("" : defaultNvrtcCacheDir()).
  bool cache = true;
  std::string cacheDir;
  /// The translation unit's name in diagnostics.
  std::string name = "einc_kernels.cu";
};

struct NvrtcOutput {
  CudaImage image; // the cubin, or PTX (without a terminating NUL)
  std::string log; // NVRTC's log: warnings, ptxas' report
  std::vector<PtxasReport> functions;
  std::vector<std::string> options; // what NVRTC was given
  bool fromCache = false;
  double seconds = 0;       // compiling or reading the cache entry
  std::string cacheWarning; // a cache entry that could not be written (not an error)
};

/// $EINC_CACHE_DIR, else $XDG_CACHE_HOME/einc/cuda, else $HOME/.cache/einc/cuda
/// ("" when none of them is set).
std::string defaultNvrtcCacheDir();

class Nvrtc {
public:
  /// The process's NVRTC, loaded on first use; Unavailable (the one-line
  /// "einc: NVRTC not found ..." of runtime/cuda/CudaLibraries.h, or why the
  /// library found is no NVRTC) when it cannot be loaded.
  static Expected<const Nvrtc *> load();

  /// "13.0"
  const std::string &version() const { return version_; }
  /// The library file loaded, and the CUDA include directory found ("" if
  /// none: bf16 / f16 sources then fail to compile, saying so).
  const std::string &library() const { return library_; }
  const std::string &includeDir() const { return includeDir_; }

  /// The options compile() gives NVRTC for `options`.
  std::vector<std::string> commandLine(const NvrtcOptions &options) const;
  /// Compiles `source`: Invalid for a source or an architecture NVRTC
  /// refuses (the NVRTC log included), Internal for a failed NVRTC call.
  Expected<NvrtcOutput> compile(const std::string &source, const NvrtcOptions &options) const;

  struct Api;

private:
  Nvrtc() = default;
  const Api *api_ = nullptr;
  std::string version_, library_, includeDir_;
};

/// The cache entry's file name for a compile (a 64-bit hash of the key, in
/// hex): exposed for tests.
std::string nvrtcCacheKey(const std::string &source, const std::vector<std::string> &options,
                          const std::string &version, const std::string &arch);

} // namespace einrt

#endif // EINC_RUNTIME_NVRTC_H
