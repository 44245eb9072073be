//===- CudaLibraries.cpp - Finding NVRTC, cuBLASLt and NCCL to dlopen -----===//
//
// The wheel folders are those NVIDIA's own finder (cuda-python's
// cuda.pathfinder, descriptor_catalog.py) searches below site-packages:
// nvidia/cu13/lib or nvidia/cuda_nvrtc/lib for NVRTC, nvidia/cu13/lib or
// nvidia/cublas/lib for cuBLASLt, nvidia/nccl/lib for NCCL (whose CUDA 13
// wheel did not move to nvidia/cu13/lib).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaLibraries.h"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace einrt {

const CudaLibrary &nvrtcLibrary() {
  static const CudaLibrary l{"NVRTC",
                             "libnvrtc.so.13",
                             "EINC_NVRTC_LIBRARY",
                             {"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"},
                             "libnvrtc-builtins.so.13."};
  return l;
}

const CudaLibrary &cublasLtLibrary() {
  static const CudaLibrary l{"cuBLASLt",
                             "libcublasLt.so.13",
                             "EINC_CUBLASLT_LIBRARY",
                             {"nvidia/cu13/lib", "nvidia/cublas/lib"},
                             ""};
  return l;
}

const CudaLibrary &ncclLibrary() {
  static const CudaLibrary l{"NCCL", "libnccl.so.2", "EINC_NCCL_LIBRARY", {"nvidia/nccl/lib"}, ""};
  return l;
}

namespace {

bool exists(const std::string &path, bool directory) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && (directory ? S_ISDIR(st.st_mode) : true);
}

/// The paths `pattern` matches, sorted.
std::vector<std::string> globPaths(const std::string &pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i)
      out.push_back(g.gl_pathv[i]);
  ::globfree(&g);
  std::sort(out.begin(), out.end());
  return out;
}

/// dlerror's message without the file's name in front ("invalid ELF
/// header"), which the message says already.
std::string lastDlError(const std::string &file) {
  const char *e = dlerror();
  std::string why = e ? e : "dlopen failed";
  return why.rfind(file + ": ", 0) == 0 ? why.substr(file.size() + 2) : why;
}

std::string joined(const std::vector<std::string> &items, const char *separator) {
  std::string out;
  for (const std::string &s : items)
    out += (out.empty() ? "" : separator) + s;
  return out;
}

} // namespace

std::vector<std::string> pythonPrefixes() {
  std::vector<std::string> prefixes;
  for (const char *var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char *v = std::getenv(var); v && *v)
      prefixes.push_back(v);
  if (const char *home = std::getenv("HOME"); home && *home)
    prefixes.push_back(std::string(home) + "/.local");
  prefixes.push_back("/usr/local");
  prefixes.push_back("/usr");
  return prefixes;
}

std::vector<std::string> pythonPackageDirs(const std::vector<std::string> &prefixes) {
  std::vector<std::string> dirs;
  for (const std::string &prefix : prefixes)
    for (const char *pattern : {"/lib/python3*/site-packages", "/lib/python3*/dist-packages",
                                "/lib64/python3*/site-packages"})
      for (const std::string &dir : globPaths(prefix + pattern))
        if (exists(dir, true) && std::find(dirs.begin(), dirs.end(), dir) == dirs.end())
          dirs.push_back(dir);
  return dirs;
}

CudaLibrarySearch cudaLibrarySearch(const CudaLibrary &library) {
  CudaLibrarySearch s;
  if (const char *v = std::getenv(library.overrideVariable.c_str()); v && *v)
    s.overrideFile = v;
#ifdef EINC_CUDA_LIBRARY_DIR
  s.toolkitDir = EINC_CUDA_LIBRARY_DIR;
#endif
  s.packageDirs = pythonPackageDirs(pythonPrefixes());
  return s;
}

Expected<OpenedCudaLibrary> openCudaLibrary(const CudaLibrary &library,
                                            const CudaLibrarySearch &search) {
  OpenedCudaLibrary out;
  std::vector<std::string> tried;
  // One file by its path: its companions beside it first. `why` says why not.
  auto openFile = [&](const std::string &file, std::string &why) {
    std::vector<std::string> companions;
    size_t slash = file.find_last_of('/');
    if (slash != std::string::npos && !exists(file, false)) { // (a bare name: the loader's)
      why = "no such file";
      return false;
    }
    if (!library.companionPrefix.empty() && slash != std::string::npos) {
      companions = globPaths(file.substr(0, slash) + "/" + library.companionPrefix + "*");
      if (companions.empty()) {
        why = "no " + library.companionPrefix + "* beside it";
        return false;
      }
    }
    for (const std::string &c : companions) {
      dlerror();
      if (!dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
        why = lastDlError(c);
        return false;
      }
    }
    dlerror();
    out.handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!out.handle) {
      why = lastDlError(file);
      return false;
    }
    out.file = file;
    out.companions = companions;
    return true;
  };
  auto notFound = [&] {
    return Status(StatusCode::Unavailable, "einc: " + library.name + " not found (" +
                                               library.soname + "): tried " + joined(tried, ", ") +
                                               "; set " + library.overrideVariable + "=/path/to/" +
                                               library.soname);
  };

  if (!search.overrideFile.empty()) {
    std::string why;
    if (openFile(search.overrideFile, why))
      return out;
    tried.push_back(library.overrideVariable + "=" + search.overrideFile + " (" + why +
                    ") and nothing else");
    return notFound();
  }
  if (search.loader) {
    dlerror();
    if (void *h = dlopen(library.soname.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      out.handle = h;
      out.file = library.soname;
      struct link_map *map = nullptr;
      if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
        out.file = map->l_name;
      return out;
    }
    std::string why = lastDlError(library.soname);
    // "No such file" is the loader's ordinary answer; anything else (a file
    // found that would not load) is worth the words.
    tried.push_back("the loader's path (LD_LIBRARY_PATH, ld.so.cache)" +
                    (why.find("cannot open shared object file") != std::string::npos
                         ? std::string()
                         : " (" + why + ")"));
  }
  // A folder's copy: one that exists but does not open is named with why.
  auto tryFolder = [&](const std::string &dir) {
    std::string file = dir + "/" + library.soname, why;
    if (!exists(file, false))
      return false;
    if (openFile(file, why))
      return true;
    tried.push_back(file + " (" + why + ")");
    return false;
  };
  if (!search.toolkitDir.empty()) {
    if (tryFolder(search.toolkitDir))
      return out;
    if (!exists(search.toolkitDir + "/" + library.soname, false))
      tried.push_back(search.toolkitDir);
  }
  for (const std::string &packages : search.packageDirs)
    for (const std::string &folder : library.wheelFolders)
      if (tryFolder(packages + "/" + folder))
        return out;
  tried.push_back(joined(library.wheelFolders, " and ") + " in " +
                  (search.packageDirs.empty() ? std::string("no Python package folder (none found)")
                                              : joined(search.packageDirs, ", ")));
  return notFound();
}

} // namespace einrt
