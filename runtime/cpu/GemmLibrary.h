//===- GemmLibrary.h - The CPU's f32 GEMM libraries, side by side -*- C++ -*-===//
//
// The CPU device's matmuls are row-major sgemm calls on one thread each
// (runtime/cpu/CpuDevice.h splits a matmul into fixed chunks itself). Which
// library computes them is a choice by measurement (GemmTable.h): on some
// CPUs the environment pins OpenBLAS to kernels at half the FMA peak, and
// oneDNN or BLIS do better. Each library here is behind one function type:
//
//   openblas      cblas_sgemm of the OpenBLAS einc links (always there)
//   onednn        oneDNN's matmul primitive, one per shape
//                 (runtime/cpu/OneDnnMatmul.h; libdnnl.so.2, Debian: libdnnl-dev)
//   onednn-sgemm  dnnl_sgemm of the same library
//   blis          cblas_sgemm of libblis.so.4 (BLIS; Debian: libblis-dev)
//
// The others are opened with dlopen on first use (RTLD_LOCAL: their CBLAS
// symbols never replace OpenBLAS's), so einc and its executables run where
// they are missing. Each call is single-threaded: oneDNN's OpenMP is set to
// one thread on each calling thread, BLIS to one thread at load, so no
// library starts a pool that fights einc's own threads.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_GEMMLIBRARY_H
#define EINC_RUNTIME_GEMMLIBRARY_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace einrt {

/// C (m x n, ldc) = alpha · op(A) · op(B) + beta · C, row-major, op a
/// transpose where trans* is set; k > 0.
using SgemmFunction = void (*)(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                               float alpha, const float *a, int64_t lda, const float *b,
                               int64_t ldb, float beta, float *c, int64_t ldc);

struct GemmLibrary {
  std::string name;    // "openblas", "onednn", "onednn-sgemm", "blis"
  std::string version; // as the library reports it ("0.3.21", "2.6.3 matmul", "0.9.0")
  SgemmFunction sgemm = nullptr;
};

/// The library names einc knows, in order of preference when measurements
/// tie: openblas, onednn, onednn-sgemm, blis.
const std::vector<std::string> &gemmLibraryNames();

/// The library `name`, loaded on first use; Unavailable when it is not
/// installed, Invalid for a name einc does not know.
Expected<const GemmLibrary *> gemmLibrary(const std::string &name);

/// Every library that loads here, openblas first.
std::vector<const GemmLibrary *> availableGemmLibraries();

} // namespace einrt

#endif // EINC_RUNTIME_GEMMLIBRARY_H
