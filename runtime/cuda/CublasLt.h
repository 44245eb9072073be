//===- CublasLt.h - cuBLASLt, loaded with dlopen, running GemmDescs -*- C++ -*-===//
//
// The cuda device's GEMM library: libcublasLt.so.13 opened at run time (never
// linked), one handle, and for every call a GemmDesc maps to
// (runtime/cuda/CublasLtMapping.h) its descriptors and the algorithm cuBLASLt's
// heuristic picks for them with the device's workspace and the alignments
// of the step's buffers, made once per distinct call (plan, first from
// Executor::create once the buffers have addresses) and reused: the same
// algorithm every run, so a GEMM's bits do not change between steps. A
// fused epilogue the heuristic has no algorithm for falls back to the plain
// product and the epilogue's kernel (CublasLtPlanner), remembered per call.
//
// Included only where CMake found the CUDA headers (EINC_HAVE_CUDA).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_CUBLASLT_H
#define EINC_RUNTIME_CUBLASLT_H

#include "runtime/base/Status.h"
#include "runtime/cuda/CublasLtMapping.h"

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
  /// Opens libcublasLt.so.13 (found as runtime/cuda/CudaLibraries.h says) and
  /// creates a handle; Unavailable ("einc: cuBLASLt not found ...").
  static Expected<std::unique_ptr<CublasLt>> load(const CublasLtOptions &options);
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

  /// The plan of `g` (its epilogue given `postTypes`, its buffers starting
  /// at `bases`: CublasLtPlanner's), an algorithm picked for each of its
  /// calls not seen yet; Unavailable where the heuristic has none.
  Expected<CublasLtPlan> plan(const GemmDesc &g, const std::vector<DType> *postTypes = nullptr,
                              const LtAlignments *bases = nullptr);
  /// Enqueues `plan` (of `g`) on `stream` (A, B, C at the step's device
  /// addresses; `post` where its calls fuse an epilogue), a plan that
  /// plan() made; the plan's emptySum and epilogueKernel are the caller's.
  Status run(const GemmDesc &g, const CublasLtPlan &plan, CUdeviceptr a, CUdeviceptr b,
             CUdeviceptr c, CUstream stream, const CublasLtEpilogueAddresses *post = nullptr);
  /// Distinct calls prepared (descriptors and algorithms cached).
  size_t cachedCalls() const { return cache.size(); }

private:
  struct Api;
  struct Prepared;
  CublasLt() = default;
  Status check(cublasStatus_t s, const char *call, const char *file, int line) const;
  Expected<LtHeuristic> make(const CublasLtCall &call, Prepared &out);
  /// The planner's question: make(), the call cached where it has an algorithm.
  Expected<LtHeuristic> ask(const CublasLtCall &call);
  /// The prepared call for `call` (plan() made it).
  Expected<const Prepared *> find(const CublasLtCall &call);
  void release(Prepared &p);

  CublasLtOptions opts;
  std::unique_ptr<Api> api;
  cublasLtHandle_t handle = nullptr;
  CUdeviceptr workspace = 0;
  size_t workspaceBytes = 0;
  std::map<std::string, std::unique_ptr<Prepared>> cache; // by CublasLtCall::key()
  CublasLtPlanner planner{[this](const CublasLtCall &c) { return ask(c); }};
};

} // namespace einrt

#endif // EINC_RUNTIME_CUBLASLT_H
