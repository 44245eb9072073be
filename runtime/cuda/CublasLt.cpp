//===- CublasLt.cpp - cuBLASLt, loaded with dlopen, running GemmDescs -----===//
#include "runtime/cuda/CublasLt.h"

#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/CudaLibraries.h"

#include <dlfcn.h>

#include <cstdlib>

#include <vector>

namespace einrt {

#define EINRT_CUBLASLT_FUNCTIONS(X)                                                                \
  X(cublasLtCreate)                                                                                \
  X(cublasLtDestroy)                                                                               \
  X(cublasLtGetStatusName)                                                                         \
  X(cublasLtGetVersion)                                                                            \
  X(cublasLtMatmulDescCreate)                                                                      \
  X(cublasLtMatmulDescDestroy)                                                                     \
  X(cublasLtMatmulDescSetAttribute)                                                                \
  X(cublasLtMatrixLayoutCreate)                                                                    \
  X(cublasLtMatrixLayoutDestroy)                                                                   \
  X(cublasLtMatrixLayoutSetAttribute)                                                              \
  X(cublasLtMatmulPreferenceCreate)                                                                \
  X(cublasLtMatmulPreferenceDestroy)                                                               \
  X(cublasLtMatmulPreferenceSetAttribute)                                                          \
  X(cublasLtMatmulAlgoGetHeuristic)                                                                \
  X(cublasLtMatmul)

struct CublasLt::Api {
#define EINRT_CUBLASLT_MEMBER(name) decltype(&::name) name = nullptr;
  EINRT_CUBLASLT_FUNCTIONS(EINRT_CUBLASLT_MEMBER)
#undef EINRT_CUBLASLT_MEMBER
};

/// One distinct call's descriptors and algorithm.
struct CublasLt::Prepared {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
};

/// Checks one cuBLASLt call: its Status.
#define EINC_LT(call) check(api->call, #call, __FILE__, __LINE__)

namespace {

cudaDataType_t cudaType(LtType t) {
  switch (t) {
  case LtType::BF16:
    return CUDA_R_16BF;
  case LtType::F16:
    return CUDA_R_16F;
  case LtType::F32:
    break;
  }
  return CUDA_R_32F;
}

cublasComputeType_t computeType(LtCompute c) {
  return c == LtCompute::F32FastTF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

cublasLtEpilogue_t epilogue(LtEpilogue e) {
  switch (e) {
  case LtEpilogue::Default:
    break;
  case LtEpilogue::Bias:
    return CUBLASLT_EPILOGUE_BIAS;
  case LtEpilogue::Relu:
    return CUBLASLT_EPILOGUE_RELU;
  case LtEpilogue::ReluBias:
    return CUBLASLT_EPILOGUE_RELU_BIAS;
  case LtEpilogue::Gelu:
    return CUBLASLT_EPILOGUE_GELU;
  case LtEpilogue::GeluBias:
    return CUBLASLT_EPILOGUE_GELU_BIAS;
  case LtEpilogue::GeluAux:
    return CUBLASLT_EPILOGUE_GELU_AUX;
  case LtEpilogue::GeluAuxBias:
    return CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

bool hasBias(LtEpilogue e) {
  return e == LtEpilogue::Bias || e == LtEpilogue::ReluBias || e == LtEpilogue::GeluBias ||
         e == LtEpilogue::GeluAuxBias;
}
bool hasAux(LtEpilogue e) { return e == LtEpilogue::GeluAux || e == LtEpilogue::GeluAuxBias; }

/// A device address of exactly `align` bytes' alignment, never dereferenced:
/// the heuristic reads the bias and aux pointers' alignment from their
/// values, and the real ones are set by run().
void *standIn(int32_t align) { return reinterpret_cast<void *>((uintptr_t(1) << 40) + align); }

/// EINC_CUBLASLT_NO_EPILOGUE_ALGORITHMS=1: the heuristic is taken to have no
/// algorithm for any fused epilogue (to try the fallback on a GPU).
bool noEpilogueAlgorithms() {
  const char *v = std::getenv("EINC_CUBLASLT_NO_EPILOGUE_ALGORITHMS");
  return v && std::string(v) == "1";
}

} // namespace

Status CublasLt::check(cublasStatus_t s, const char *call, const char *file, int line) const {
  if (s == CUBLAS_STATUS_SUCCESS)
    return Status::success();
  const char *name = api && api->cublasLtGetStatusName ? api->cublasLtGetStatusName(s) : nullptr;
  StatusCode code = s == CUBLAS_STATUS_ALLOC_FAILED      ? StatusCode::OutOfMemory
                    : s == CUBLAS_STATUS_NOT_INITIALIZED ? StatusCode::Unavailable
                                                         : StatusCode::Internal;
  return Status(code, std::string(projectRelativePath(file)) + ":" + std::to_string(line) + ": " +
                          call +
                          " failed: " + (name ? name : "cublasStatus_t " + std::to_string(int(s))));
}

Expected<std::unique_ptr<CublasLt>> CublasLt::load(const CublasLtOptions &options) {
  static_assert(CUBLAS_VER_MAJOR == 13, "cublasLtLibrary() names libcublasLt.so.13");
  Expected<OpenedCudaLibrary> opened =
      openCudaLibrary(cublasLtLibrary(), cudaLibrarySearch(cublasLtLibrary()));
  if (!opened.ok())
    return opened.takeStatus();
  void *lib = opened->handle;
  const std::string &name = opened->file;
  std::unique_ptr<CublasLt> lt(new CublasLt());
  lt->opts = options;
  lt->api = std::make_unique<Api>();
#define EINRT_CUBLASLT_RESOLVE(fn)                                                                 \
  lt->api->fn = reinterpret_cast<decltype(lt->api->fn)>(dlsym(lib, #fn));                          \
  if (!lt->api->fn)                                                                                \
    return Status(StatusCode::Unavailable, name + " has no " #fn);
  EINRT_CUBLASLT_FUNCTIONS(EINRT_CUBLASLT_RESOLVE)
#undef EINRT_CUBLASLT_RESOLVE
  EINRT_TRY(lt->check(lt->api->cublasLtCreate(&lt->handle), "cublasLtCreate(&handle)", __FILE__,
                      __LINE__));
  return lt;
}

void CublasLt::release(Prepared &p) {
  if (p.a)
    api->cublasLtMatrixLayoutDestroy(p.a);
  if (p.b)
    api->cublasLtMatrixLayoutDestroy(p.b);
  if (p.c)
    api->cublasLtMatrixLayoutDestroy(p.c);
  if (p.op)
    api->cublasLtMatmulDescDestroy(p.op);
  p = Prepared();
}

CublasLt::~CublasLt() {
  if (!api)
    return;
  for (auto &entry : cache)
    release(*entry.second);
  if (handle)
    api->cublasLtDestroy(handle);
}

size_t CublasLt::version() const { return api->cublasLtGetVersion(); }

Expected<LtHeuristic> CublasLt::make(const CublasLtCall &call, Prepared &p) {
  if (call.epilogue != LtEpilogue::Default && noEpilogueAlgorithms())
    return LtHeuristic::None;
  EINRT_TRY(EINC_LT(cublasLtMatmulDescCreate(&p.op, computeType(call.compute), CUDA_R_32F)));
  cublasOperation_t ta = call.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t tb = call.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasLtEpilogue_t ep = epilogue(call.epilogue);
  EINRT_TRY(
      EINC_LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta)));
  EINRT_TRY(
      EINC_LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb)));
  EINRT_TRY(
      EINC_LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep)));
  // The bias and aux pointers: stand-ins of their alignment for the
  // heuristic, the real ones set by run(); their types, the aux's leading
  // dimension and batch stride are the descriptor's.
  if (hasBias(call.epilogue)) {
    int32_t type = int32_t(cudaType(call.typeBias));
    void *bias = standIn(call.alignBias);
    EINRT_TRY(EINC_LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                                     &type, sizeof type)));
    EINRT_TRY(EINC_LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                     sizeof bias)));
  }
  if (hasAux(call.epilogue)) {
    int64_t ld = call.auxLd, stride = call.auxStride;
    void *aux = standIn(call.alignAux);
    EINRT_TRY(EINC_LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD,
                                                     &ld, sizeof ld)));
    EINRT_TRY(EINC_LT(cublasLtMatmulDescSetAttribute(
        p.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, &stride, sizeof stride)));
    EINRT_TRY(EINC_LT(cublasLtMatmulDescSetAttribute(
        p.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof aux)));
  }
  auto layout = [&](cublasLtMatrixLayout_t &l, LtType t, int64_t rows, int64_t cols, int64_t ld,
                    int64_t stride) {
    EINRT_TRY(
        EINC_LT(cublasLtMatrixLayoutCreate(&l, cudaType(t), uint64_t(rows), uint64_t(cols), ld)));
    if (call.batch == 1)
      return Status::success();
    int32_t count = int32_t(call.batch);
    EINRT_TRY(EINC_LT(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                       &count, sizeof count)));
    return EINC_LT(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                    &stride, sizeof stride));
  };
  EINRT_TRY(layout(p.a, call.typeA, call.rowsA, call.colsA, call.lda, call.strideA));
  EINRT_TRY(layout(p.b, call.typeB, call.rowsB, call.colsB, call.ldb, call.strideB));
  EINRT_TRY(layout(p.c, call.typeC, call.rowsC, call.colsC, call.ldc, call.strideC));

  cublasLtMatmulPreference_t pref = nullptr;
  EINRT_TRY(EINC_LT(cublasLtMatmulPreferenceCreate(&pref)));
  uint64_t bytes = workspaceBytes;
  uint32_t alignA = uint32_t(call.alignA), alignB = uint32_t(call.alignB),
           alignC = uint32_t(call.alignC);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  // The first failure stays in `asked`; the preference is destroyed after.
  Status asked;
  auto then = [&](Status next) {
    if (asked.ok())
      asked = std::move(next);
  };
  then(EINC_LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &bytes, sizeof bytes)));
  then(EINC_LT(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignA, sizeof alignA)));
  then(EINC_LT(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alignB, sizeof alignB)));
  then(EINC_LT(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alignC, sizeof alignC)));
  then(EINC_LT(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alignC, sizeof alignC)));
  if (asked.ok())
    asked = EINC_LT(
        cublasLtMatmulAlgoGetHeuristic(handle, p.op, p.a, p.b, p.c, p.c, pref, 1, &result, &found));
  api->cublasLtMatmulPreferenceDestroy(pref);
  EINRT_TRY(asked);
  if (found == 0 || result.state != CUBLAS_STATUS_SUCCESS)
    return LtHeuristic::None;
  p.algo = result.algo;
  p.workspace = result.workspaceSize;
  return LtHeuristic::Found;
}

Expected<LtHeuristic> CublasLt::ask(const CublasLtCall &call) {
  auto p = std::make_unique<Prepared>();
  Expected<LtHeuristic> answer = make(call, *p);
  if (answer.ok() && *answer == LtHeuristic::Found)
    cache.emplace(call.key(), std::move(p));
  else
    release(*p); // what was made before the failure
  return answer;
}

Expected<CublasLtPlan> CublasLt::plan(const GemmDesc &g, const std::vector<DType> *postTypes,
                                      const LtAlignments *bases) {
  Expected<CublasLtPlan> out = planner.plan(g, opts, postTypes, bases);
  if (!out.ok() && out.status().code() == StatusCode::Unavailable &&
      out.status().message().rfind("cuBLASLt's heuristic found no algorithm", 0) == 0)
    return Status(StatusCode::Unavailable, out.status().message() + " within " +
                                               std::to_string(workspaceBytes) +
                                               " bytes of workspace");
  return out;
}

Expected<const CublasLt::Prepared *> CublasLt::find(const CublasLtCall &call) {
  auto it = cache.find(call.key());
  if (it != cache.end())
    return static_cast<const Prepared *>(it->second.get());
  return Status::internal("internal error: " + describeLtCall(call) +
                          " was not planned (CublasLt::plan)");
}

Status CublasLt::run(const GemmDesc &g, const CublasLtPlan &plan, CUdeviceptr a, CUdeviceptr b,
                     CUdeviceptr c, CUstream stream, const CublasLtEpilogueAddresses *post) {
  if (plan.emptySum)
    return Status::success();
  const int64_t sizeA = g.b == DType::F32 ? 4 : 2, sizeB = g.a == DType::F32 ? 4 : 2,
                sizeC = g.c == DType::F32 ? 4 : 2;
  for (const CublasLtCall &call : plan.calls) {
    Expected<const Prepared *> found = find(call);
    if (!found.ok())
      return found.takeStatus();
    const Prepared &p = **found;
    // cuBLASLt's A is the step's B, its B the step's A.
    const void *pa = reinterpret_cast<const void *>(b + CUdeviceptr(call.offsetA * sizeA));
    const void *pb = reinterpret_cast<const void *>(a + CUdeviceptr(call.offsetB * sizeB));
    const CUdeviceptr at = CUdeviceptr(call.offsetC * sizeC);
    void *pc = reinterpret_cast<void *>(c + at), *pd = pc;
    if (call.separateD) { // a fused epilogue: C the residual (or D), D its result
      if (!post)
        return Status::internal("internal error: a fused GEMM epilogue run without its buffers");
      pc = reinterpret_cast<void *>(post->c + at);
      pd = reinterpret_cast<void *>(post->d + at);
      void *bias = reinterpret_cast<void *>(post->bias);
      void *aux = reinterpret_cast<void *>(post->aux + at);
      if (hasBias(call.epilogue))
        EINRT_TRY(EINC_LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                         &bias, sizeof bias)));
      if (hasAux(call.epilogue))
        EINRT_TRY(EINC_LT(cublasLtMatmulDescSetAttribute(
            p.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof aux)));
    }
    Status ran = EINC_LT(cublasLtMatmul(handle, p.op, &call.alpha, pa, p.a, pb, p.b, &call.beta, pc,
                                        p.c, pd, p.c, &p.algo, reinterpret_cast<void *>(workspace),
                                        workspaceBytes, stream));
    if (!ran.ok())
      return Status(ran.code(), ran.message() + " (" + describeLtCall(call) + ")");
  }
  return Status::success();
}

} // namespace einrt
