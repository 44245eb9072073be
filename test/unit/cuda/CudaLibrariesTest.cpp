//===- CudaLibrariesTest.cpp - Finding NVRTC, cuBLASLt and NCCL -----------===//
//
// runtime/cuda/CudaLibraries.h without a GPU, hermetic: Python package folders
// made in a temporary directory, holding symlinks to the toolkit's real
// libraries under the wheels' folders (nvidia/cu13/lib, ...), are found
// with the loader and the toolkit left out of the search; the order of the
// folders; NVRTC's builtins required beside it; an override naming a
// missing file is the one-line error and nothing else is tried; the error
// names everything tried. CublasLt::load and findNccl say the same line.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaLibraries.h"
#include "runtime/dist/NcclCollectives.h"
#include "test/unit/StatusTesting.h"
#ifdef EINC_HAVE_CUDA
#include "runtime/cuda/CublasLt.h"
#endif

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace einrt {
namespace {

/// A temporary directory, removed with what was made in it.
struct TempDir {
  std::string path;
  TempDir() {
    char pattern[] = "/tmp/einc-cudalib-XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  /// Makes the folders of `dir` (relative) and returns its path.
  std::string folder(const std::string &dir) const {
    std::system(("mkdir -p '" + path + "/" + dir + "'").c_str());
    return path + "/" + dir;
  }
};

/// The real file of `library` (the toolkit's, through the usual search),
/// or "" where this machine has none.
std::string realFile(const CudaLibrary &library) {
  Expected<OpenedCudaLibrary> opened = openCudaLibrary(library, cudaLibrarySearch(library));
  if (!opened.ok())
    return "";
  char resolved[PATH_MAX];
  return realpath(opened->file.c_str(), resolved) ? resolved : "";
}

std::string dirOf(const std::string &file) { return file.substr(0, file.find_last_of('/')); }

void link(const std::string &target, const std::string &at) {
  ASSERT_EQ(symlink(target.c_str(), at.c_str()), 0) << at;
}

/// Only the Python package folders: neither the override, the loader nor the
/// toolkit.
CudaLibrarySearch packagesOnly(const std::vector<std::string> &dirs) {
  CudaLibrarySearch s;
  s.loader = false;
  s.packageDirs = dirs;
  return s;
}

TEST(CudaLibraries, PythonPackageFoldersBelowPrefixes) {
  TempDir t;
  std::string venv = t.folder("venv/lib/python3.12/site-packages");
  std::string debian = t.folder("usr/lib/python3/dist-packages");
  std::string local = t.folder("usr/local/lib/python3.11/dist-packages");
  t.folder("usr/lib/python2.7/site-packages"); // not Python 3
  std::vector<std::string> dirs = pythonPackageDirs(
      {t.path + "/venv", t.path + "/usr/local", t.path + "/usr", t.path + "/none"});
  EXPECT_EQ(dirs, (std::vector<std::string>{venv, local, debian}));

  // The environment's prefixes: a virtual environment first.
  setenv("VIRTUAL_ENV", (t.path + "/venv").c_str(), 1);
  std::vector<std::string> prefixes = pythonPrefixes();
  CudaLibrarySearch search = cudaLibrarySearch(cublasLtLibrary());
  unsetenv("VIRTUAL_ENV");
  ASSERT_FALSE(prefixes.empty());
  EXPECT_EQ(prefixes.front(), t.path + "/venv");
  EXPECT_EQ(prefixes.back(), "/usr");
  ASSERT_FALSE(search.packageDirs.empty());
  EXPECT_EQ(search.packageDirs.front(), venv);
}

TEST(CudaLibraries, AWheelsLibraryInAFakeSitePackagesIsFound) {
  std::string real = realFile(cublasLtLibrary());
  if (real.empty())
    GTEST_SKIP() << "no libcublasLt.so.13 on this machine";
  TempDir t;
  std::string packages = t.folder("lib/python3.12/site-packages");
  std::string cu13 = t.folder("lib/python3.12/site-packages/nvidia/cu13/lib");
  std::string cu12 = t.folder("lib/python3.12/site-packages/nvidia/cublas/lib");
  link(real, cu13 + "/libcublasLt.so.13");
  link(real, cu12 + "/libcublasLt.so.13");
  OpenedCudaLibrary opened;
  EINC_ASSERT_OK_AND_ASSIGN(
      opened, openCudaLibrary(cublasLtLibrary(), packagesOnly(pythonPackageDirs({t.path}))));
  EXPECT_NE(opened.handle, nullptr);
  EXPECT_EQ(opened.file, cu13 + "/libcublasLt.so.13"); // the CUDA 13 wheels' folder first

  // The toolkit's folder comes before the wheels.
  std::string toolkit = t.folder("toolkit/lib64");
  link(real, toolkit + "/libcublasLt.so.13");
  CudaLibrarySearch s = packagesOnly({packages});
  s.toolkitDir = toolkit;
  EINC_ASSERT_OK_AND_ASSIGN(opened, openCudaLibrary(cublasLtLibrary(), s));
  EXPECT_EQ(opened.file, toolkit + "/libcublasLt.so.13");
}

TEST(CudaLibraries, NvrtcNeedsItsBuiltinsBesideIt) {
  std::string real = realFile(nvrtcLibrary());
  if (real.empty())
    GTEST_SKIP() << "no libnvrtc.so.13 on this machine";
  TempDir t;
  std::string packages = t.folder("lib/python3.12/site-packages");
  std::string lib = t.folder("lib/python3.12/site-packages/nvidia/cu13/lib");
  link(real, lib + "/libnvrtc.so.13");
  EINC_EXPECT_STATUS(openCudaLibrary(nvrtcLibrary(), packagesOnly({packages})),
                     StatusCode::Unavailable,
                     lib + "/libnvrtc.so.13 (no libnvrtc-builtins.so.13.* beside it)");

  std::string builtins;
  for (const char *name :
       {"libnvrtc-builtins.so.13.0", "libnvrtc-builtins.so.13.1", "libnvrtc-builtins.so.13.2"})
    if (access((dirOf(real) + "/" + name).c_str(), R_OK) == 0)
      builtins = name;
  ASSERT_FALSE(builtins.empty()) << "no builtins beside " << real;
  link(dirOf(real) + "/" + builtins, lib + "/" + builtins);
  EINC_ASSERT_OK_AND_ASSIGN(OpenedCudaLibrary opened,
                            openCudaLibrary(nvrtcLibrary(), packagesOnly({packages})));
  EXPECT_EQ(opened.file, lib + "/libnvrtc.so.13");
  EXPECT_EQ(opened.companions, std::vector<std::string>{lib + "/" + builtins});
}

TEST(CudaLibraries, AnOverrideToAMissingFileIsOneLineAndNoFallback) {
  std::string real = realFile(cublasLtLibrary());
  TempDir t;
  std::string packages = t.folder("lib/python3.12/site-packages");
  if (!real.empty())
    link(real, t.folder("lib/python3.12/site-packages/nvidia/cu13/lib") + "/libcublasLt.so.13");
  setenv("EINC_CUBLASLT_LIBRARY", "/nonexistent/libcublasLt.so.13", 1);
  CudaLibrarySearch s = cudaLibrarySearch(cublasLtLibrary());
  unsetenv("EINC_CUBLASLT_LIBRARY");
  EXPECT_EQ(s.overrideFile, "/nonexistent/libcublasLt.so.13");
  s.packageDirs = {packages}; // a library there would be found without the override
  Status missing = openCudaLibrary(cublasLtLibrary(), s).takeStatus();
  EXPECT_EQ(missing.code(), StatusCode::Unavailable);
  const std::string &error = missing.message();
  EXPECT_EQ(error.rfind("einc: cuBLASLt not found (libcublasLt.so.13): tried "
                        "EINC_CUBLASLT_LIBRARY=/nonexistent/libcublasLt.so.13 (",
                        0),
            0u)
      << error;
  EXPECT_NE(error.find("EINC_CUBLASLT_LIBRARY=/nonexistent/libcublasLt.so.13 (no such file) and "
                       "nothing else; set "
                       "EINC_CUBLASLT_LIBRARY=/path/to/libcublasLt.so.13"),
            std::string::npos)
      << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_EQ(error.find("nvidia/cu13"), std::string::npos) << error; // not tried
}

TEST(CudaLibraries, NotFoundNamesWhatWasTried) {
  TempDir t;
  std::string toolkit = t.folder("toolkit/lib64");
  std::string packages = t.folder("lib/python3.12/site-packages");
  // A file that is there but is no library: named with the loader's reason.
  std::string bad = t.folder("lib/python3.12/site-packages/nvidia/nccl/lib") + "/libnccl.so.2";
  std::ofstream(bad) << "not an ELF file";
  CudaLibrarySearch s = packagesOnly({packages});
  s.toolkitDir = toolkit;
  Status missing = openCudaLibrary(ncclLibrary(), s).takeStatus();
  EXPECT_EQ(missing.code(), StatusCode::Unavailable);
  const std::string &error = missing.message();
  EXPECT_EQ(
      error.rfind("einc: NCCL not found (libnccl.so.2): tried " + toolkit + ", " + bad + " (", 0),
      0u)
      << error;
  EXPECT_NE(error.find("), nvidia/nccl/lib in " + packages +
                       "; set EINC_NCCL_LIBRARY=/path/to/libnccl.so.2"),
            std::string::npos)
      << error;

  // The same form for every library; no Python folder at all is said so.
  EINC_EXPECT_STATUS_EQ(openCudaLibrary(cublasLtLibrary(), packagesOnly({})),
                        StatusCode::Unavailable,
                        "einc: cuBLASLt not found (libcublasLt.so.13): tried nvidia/cu13/lib and "
                        "nvidia/cublas/lib in no Python package folder (none found); set "
                        "EINC_CUBLASLT_LIBRARY=/path/to/libcublasLt.so.13");
  s.loader = true;
  s.toolkitDir.clear();
  s.packageDirs.clear();
  CudaLibrary nowhere{
      "Nothing", "libeinc-no-such-library.so.1", "EINC_NOTHING_LIBRARY", {"x/lib"}, ""};
  EINC_EXPECT_STATUS_EQ(
      openCudaLibrary(nowhere, s), StatusCode::Unavailable,
      "einc: Nothing not found (libeinc-no-such-library.so.1): tried the loader's "
      "path (LD_LIBRARY_PATH, ld.so.cache), x/lib in no Python package folder (none "
      "found); set EINC_NOTHING_LIBRARY=/path/to/libeinc-no-such-library.so.1");
}

TEST(CudaLibraries, CublasLtAndNcclSayTheSameLine) {
  setenv("EINC_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
  Expected<NcclLibraryInfo> info = findNccl();
  unsetenv("EINC_NCCL_LIBRARY");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::Unavailable);
  std::string error = info.status().message();
  EXPECT_EQ(error.rfind("einc: NCCL not found (libnccl.so.2): tried "
                        "EINC_NCCL_LIBRARY=/nonexistent/libnccl.so.2 (",
                        0),
            0u)
      << error;
#ifdef EINC_HAVE_CUDA
  setenv("EINC_CUBLASLT_LIBRARY", "/nonexistent/libcublasLt.so.13", 1);
  Status cublasLt = CublasLt::load({}).takeStatus();
  unsetenv("EINC_CUBLASLT_LIBRARY");
  EXPECT_EQ(cublasLt.code(), info.status().code()) << cublasLt.message();
  error = cublasLt.message();
  EXPECT_EQ(error.rfind("einc: cuBLASLt not found (libcublasLt.so.13): tried "
                        "EINC_CUBLASLT_LIBRARY=/nonexistent/libcublasLt.so.13 (",
                        0),
            0u)
      << error;
#endif
}

} // namespace
} // namespace einrt
