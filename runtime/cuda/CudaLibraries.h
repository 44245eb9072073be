//===- CudaLibraries.h - Finding NVRTC, cuBLASLt and NCCL to dlopen -*- C++ -*-===//
//
// The one lookup of the CUDA libraries the runtime opens with dlopen
// (runtime/cuda/Nvrtc.h, runtime/cuda/CublasLt.h, runtime/dist/NcclCollectives.h), in
// this order, the first that opens wins:
//   1. the override variable (EINC_NVRTC_LIBRARY, EINC_CUBLASLT_LIBRARY,
//      EINC_NCCL_LIBRARY): when set, that file and no other;
//   2. the soname through the dynamic loader (LD_LIBRARY_PATH, ld.so.cache);
//   3. the CUDA toolkit's library folder einc was built with
//      (EINC_CUDA_LIBRARY_DIR);
//   4. the folders PyTorch's pip wheels put the libraries in, under every
//      Python package folder found without running Python (pythonPrefixes,
//      pythonPackageDirs): nvidia/cu13/lib (the CUDA 13 wheels put
//      every toolkit library there), nvidia/cuda_nvrtc/lib and
//      nvidia/cublas/lib (the CUDA 12 wheels' folders), nvidia/nccl/lib
//      (NCCL's wheel, for CUDA 12 and 13 alike).
// A library in a folder is opened by its full path; NVRTC's builtins
// (libnvrtc-builtins.so.13.*, which libnvrtc opens by soname when it first
// compiles) must lie beside it and are opened first, so that soname is
// already loaded whatever the loader's path.
// Nothing found: one line, the same for every library, naming what was
// tried; it starts "einc: <name> not found" (scripts/gpucheck recognises
// it):
//   einc: cuBLASLt not found (libcublasLt.so.13): tried ...; set
//   EINC_CUBLASLT_LIBRARY=/path/to/libcublasLt.so.13
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_CUDALIBRARIES_H
#define EINC_RUNTIME_CUDALIBRARIES_H

#include "runtime/base/Status.h"

#include <string>
#include <vector>

namespace einrt {

/// One library the runtime opens with dlopen.
struct CudaLibrary {
  std::string name;                      // "cuBLASLt", in messages
  std::string soname;                    // "libcublasLt.so.13"
  std::string overrideVariable;          // "EINC_CUBLASLT_LIBRARY"
  std::vector<std::string> wheelFolders; // below a Python package folder
  std::string companionPrefix;           // files "<prefix>*" that must lie beside it ("" : none)
};

const CudaLibrary &nvrtcLibrary();
const CudaLibrary &cublasLtLibrary();
const CudaLibrary &ncclLibrary();

/// Where to look (the order above).
struct CudaLibrarySearch {
  std::string overrideFile;             // set: that file alone
  bool loader = true;                   // the soname through the dynamic loader
  std::string toolkitDir;               // "" : none
  std::vector<std::string> packageDirs; // Python package folders
};

/// The search from this process's environment and build.
CudaLibrarySearch cudaLibrarySearch(const CudaLibrary &library);

/// Where Python installs: $VIRTUAL_ENV, $CONDA_PREFIX, ~/.local, /usr/local,
/// /usr (those set).
std::vector<std::string> pythonPrefixes();
/// The Python package folders that exist below `prefixes`, in order, each
/// once: P/lib/python3*/site-packages, P/lib/python3*/dist-packages (Debian)
/// and P/lib64/python3*/site-packages.
std::vector<std::string> pythonPackageDirs(const std::vector<std::string> &prefixes);

struct OpenedCudaLibrary {
  void *handle = nullptr;              // never closed: kept for the process
  std::string file;                    // the file opened
  std::vector<std::string> companions; // opened before it (NVRTC's builtins)
};

/// Opens `library` as `search` says; Unavailable with the one line
/// ("einc: cuBLASLt not found (...): tried ...; set ...").
Expected<OpenedCudaLibrary> openCudaLibrary(const CudaLibrary &library,
                                            const CudaLibrarySearch &search);

} // namespace einrt

#endif // EINC_RUNTIME_CUDALIBRARIES_H
