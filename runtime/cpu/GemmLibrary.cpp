//===- GemmLibrary.cpp - OpenBLAS, oneDNN and BLIS behind one sgemm -------===//
#include "runtime/cpu/GemmLibrary.h"
#include "runtime/cpu/OneDnnMatmul.h"

#include <cblas.h>
#include <dlfcn.h>

#include <map>
#include <mutex>

namespace einrt {

namespace {

// ----- OpenBLAS (linked) -----------------------------------------------------
void openblasSgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
                   const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                   int64_t ldc) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
              int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

// ----- oneDNN (dlopen, runtime/cpu/OneDnnMatmul.h) ------------------------------
// onednn-sgemm: dnnl_sgemm (row-major, 64-bit dims; it returns a status that
// is success for valid arguments, and the CPU device passes only valid ones).
using DnnlSgemm = int (*)(char, char, int64_t, int64_t, int64_t, float, const float *, int64_t,
                          const float *, int64_t, float, float *, int64_t);
DnnlSgemm dnnlSgemm = nullptr;
void (*ompSetNumThreads)(int) = nullptr;

void onednnDnnlSgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
                     const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                     int64_t ldc) {
  // Debian's oneDNN runs on OpenMP: one thread on each calling thread.
  thread_local bool single = false;
  if (!single && ompSetNumThreads) {
    ompSetNumThreads(1);
    single = true;
  }
  dnnlSgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// onednn: C = op(A)·op(B) and C += op(A)·op(B), the calls the CPU device
// makes, on the matmul primitive of their shape (created on first use and
// cached); any other alpha or beta, or a shape oneDNN refuses, on dnnl_sgemm.
void onednnSgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
                 const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                 int64_t ldc) {
  if (alpha == 1.0f && (beta == 0.0f || beta == 1.0f)) {
    MatmulShape s;
    s.m = m, s.n = n, s.k = k;
    s.transA = transA, s.transB = transB;
    s.lda = lda, s.ldb = ldb, s.ldc = ldc;
    s.accumulate = beta == 1.0f;
    if (Expected<const OneDnnMatmul *> mm = OneDnnMatmul::get(s);
        mm.ok() && (*mm)->run(a, b, c).ok())
      return;
  }
  onednnDnnlSgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// ----- BLIS (dlopen) ---------------------------------------------------------
using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float *, int, const float *,
                            int, float, float *, int);
CblasSgemm blisCblasSgemm = nullptr;

void blisSgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
               const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
               int64_t ldc) {
  // CBLAS's enum values (RowMajor 101, NoTrans 111, Trans 112) are fixed
  // by the CBLAS standard.
  blisCblasSgemm(101, transA ? 112 : 111, transB ? 112 : 111, int(m), int(n), int(k), alpha, a,
                 int(lda), b, int(ldb), beta, c, int(ldc));
}

/// `name` of `lib` into `out`; Unavailable naming it when it is missing.
template <class F> Status symbol(void *lib, const char *name, F &out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out)
    return Status(StatusCode::Unavailable, std::string(name) + " is missing");
  return Status::success();
}

Expected<void *> open(const char *file) {
  void *lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    return Status(StatusCode::Unavailable, e ? e : std::string(file) + " not found");
  }
  return lib;
}

Status loadOneDnn(GemmLibrary &out, bool primitive) {
  Expected<void *> lib = oneDnnLibrary();
  if (!lib.ok())
    return lib.takeStatus();
  EINRT_TRY(symbol(*lib, "dnnl_sgemm", dnnlSgemm));
  out.version = oneDnnVersion() + (primitive ? " matmul" : " sgemm");
  ompSetNumThreads = reinterpret_cast<void (*)(int)>(dlsym(*lib, "omp_set_num_threads"));
  if (!ompSetNumThreads)
    ompSetNumThreads = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  out.sgemm = primitive ? onednnSgemm : onednnDnnlSgemm;
  return Status::success();
}

Status loadBlis(GemmLibrary &out) {
  Expected<void *> lib = open("libblis.so.4");
  if (!lib.ok())
    return lib.takeStatus();
  EINRT_TRY(symbol(*lib, "cblas_sgemm", blisCblasSgemm));
  // Optional: an older BLIS without them still runs.
  void (*setThreads)(int64_t) = nullptr;
  if (symbol(*lib, "bli_thread_set_num_threads", setThreads).ok())
    setThreads(1);
  const char *(*version)() = nullptr;
  if (symbol(*lib, "bli_info_get_version_str", version).ok() && version())
    out.version = version();
  out.sgemm = blisSgemm;
  return Status::success();
}

struct Loaded {
  bool tried = false;
  GemmLibrary library;
  Status status; // why it did not load
};

} // namespace

const std::vector<std::string> &gemmLibraryNames() {
  static const std::vector<std::string> names = {"openblas", "onednn", "onednn-sgemm", "blis"};
  return names;
}

Expected<const GemmLibrary *> gemmLibrary(const std::string &name) {
  static std::mutex mutex;
  static std::map<std::string, Loaded> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  Loaded &l = loaded[name];
  if (!l.tried) {
    l.tried = true;
    l.library.name = name;
    auto missing = [](const char *what, const Status &why, const char *package) {
      return Status(StatusCode::Unavailable, std::string(what) + " is not available (" +
                                                 why.message() + "; Debian: apt-get install " +
                                                 package + ")");
    };
    if (name == "openblas") {
      l.library.sgemm = openblasSgemm;
      const char *config = openblas_get_config();
      l.library.version = config ? config : "";
    } else if (name == "onednn" || name == "onednn-sgemm") {
      if (Status st = loadOneDnn(l.library, name == "onednn"); !st.ok())
        l.status = missing("oneDNN", st, "libdnnl-dev");
    } else if (name == "blis") {
      if (Status st = loadBlis(l.library); !st.ok())
        l.status = missing("BLIS", st, "libblis-dev");
    } else {
      l.status = Status::invalid("no GEMM library named '" + name +
                                 "' (openblas, onednn, onednn-sgemm, blis)");
    }
  }
  if (!l.status.ok())
    return l.status;
  return &l.library;
}

std::vector<const GemmLibrary *> availableGemmLibraries() {
  std::vector<const GemmLibrary *> out;
  for (const std::string &name : gemmLibraryNames()) {
    if (Expected<const GemmLibrary *> l = gemmLibrary(name); l.ok())
      out.push_back(*l);
  }
  return out;
}

} // namespace einrt
