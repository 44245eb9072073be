//===- CublasLt.h - cuBLASLt, loaded with dlopen, running GemmDescs -*- C++ -*-===//
//
// The cuda device's GEMM library: libcublasLt.so.13 opened at run time (never
// linked), one handle, and for every call a GemmDesc maps to
// (runtime/CublasLtMapping.h) its descriptors and the algorithm cuBLASLt's
// heuristic picks for them with the device's workspace, made once per
// distinct call (prepare, from Executor::create) and reused: the same
// algorithm every run, so a GEMM's bits do not change between steps.
//
// Included only where CMake found the CUDA headers (EINC_HAVE_CUDA).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_CUBLASLT_H
#define EINC_RUNTIME_CUBLASLT_H

#include "runtime/CublasLtMapping.h"

#include <cublasLt.h>
#include <cuda.h>

#include <map>
#include <memory>
#include <string>

namespace einrt {

/// Where a fused epilogue's calls read and write (CublasLtPlan::pointers
/// resolved to device addresses): D, C (the residual, or D), bias, aux.
struct CublasLtEpilogueAddresses {
  CUdeviceptr d = 0, c = 0, bias = 0, aux = 0;
};

class CublasLt {
public:
  /// Opens libcublasLt.so.13 (found as runtime/CudaLibraries.h says) and
  /// creates a handle; null with `error` ("einc: cuBLASLt not found ...").
  static std::unique_ptr<CublasLt> load(const CublasLtOptions &options, std::string &error);
  ~CublasLt();
  CublasLt(const CublasLt &) = delete;
  CublasLt &operator=(const CublasLt &) = delete;

  const CublasLtOptions &options() const { return opts; }
  /// cublasLtGetVersion(): e.g. 130100.
  size_t version() const;
  /// The device memory cuBLASLt may use (the heuristic is asked for
  /// algorithms within it).
  void setWorkspace(CUdeviceptr data, size_t bytes) {
    workspace = data;
    workspaceBytes = bytes;
  }

  /// Maps `g` (its epilogue given `postTypes`, mapGemmToCublasLt's) and
  /// picks an algorithm for each of its calls not seen yet.
  bool prepare(const GemmDesc &g, std::string &error,
               const std::vector<DType> *postTypes = nullptr);
  /// Enqueues `plan` (of `g`) on `stream` (A, B, C at the step's device
  /// addresses; `post` where its calls fuse an epilogue); the plan's
  /// emptySum and epilogueKernel are the caller's.
  bool run(const GemmDesc &g, const CublasLtPlan &plan, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
           CUstream stream, std::string &error, const CublasLtEpilogueAddresses *post = nullptr);
  /// Distinct calls prepared (descriptors and algorithms cached).
  size_t cachedCalls() const { return cache.size(); }

private:
  struct Api;
  struct Prepared;
  CublasLt() = default;
  bool check(cublasStatus_t s, const char *call, const char *file, int line,
             std::string &error) const;
  bool make(const CublasLtCall &call, Prepared &out, std::string &error);
  /// The prepared call for `call`, made now if it is not cached.
  const Prepared *find(const CublasLtCall &call, std::string &error);
  void release(Prepared &p);

  CublasLtOptions opts;
  std::unique_ptr<Api> api;
  cublasLtHandle_t handle = nullptr;
  CUdeviceptr workspace = 0;
  size_t workspaceBytes = 0;
  std::map<std::string, std::unique_ptr<Prepared>> cache; // by CublasLtCall::key()
};

} // namespace einrt

#endif // EINC_RUNTIME_CUBLASLT_H
