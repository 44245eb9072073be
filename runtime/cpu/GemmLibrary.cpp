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
    std::string error;
    if (const OneDnnMatmul *mm = OneDnnMatmul::get(s, error); mm && mm->run(a, b, c, error))
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

template <class F> bool symbol(void *lib, const char *name, F &out, std::string &error) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out)
    error = std::string(name) + " is missing";
  return out != nullptr;
}

void *open(const char *file, std::string &error) {
  void *lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    error = e ? e : std::string(file) + " not found";
  }
  return lib;
}

bool loadOneDnn(GemmLibrary &out, std::string &error, bool primitive) {
  void *lib = oneDnnLibrary(error);
  if (!lib || !symbol(lib, "dnnl_sgemm", dnnlSgemm, error))
    return false;
  out.version = oneDnnVersion() + (primitive ? " matmul" : " sgemm");
  ompSetNumThreads = reinterpret_cast<void (*)(int)>(dlsym(lib, "omp_set_num_threads"));
  if (!ompSetNumThreads)
    ompSetNumThreads = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  out.sgemm = primitive ? onednnSgemm : onednnDnnlSgemm;
  error.clear();
  return true;
}

bool loadBlis(GemmLibrary &out, std::string &error) {
  void *lib = open("libblis.so.4", error);
  if (!lib || !symbol(lib, "cblas_sgemm", blisCblasSgemm, error))
    return false;
  void (*setThreads)(int64_t) = nullptr;
  if (symbol(lib, "bli_thread_set_num_threads", setThreads, error))
    setThreads(1);
  const char *(*version)() = nullptr;
  if (symbol(lib, "bli_info_get_version_str", version, error) && version())
    out.version = version();
  out.sgemm = blisSgemm;
  error.clear();
  return true;
}

struct Loaded {
  bool tried = false;
  bool ok = false;
  GemmLibrary library;
  std::string error;
};

} // namespace

const std::vector<std::string> &gemmLibraryNames() {
  static const std::vector<std::string> names = {"openblas", "onednn", "onednn-sgemm", "blis"};
  return names;
}

const GemmLibrary *gemmLibrary(const std::string &name, std::string &error) {
  static std::mutex mutex;
  static std::map<std::string, Loaded> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  Loaded &l = loaded[name];
  if (!l.tried) {
    l.tried = true;
    l.library.name = name;
    if (name == "openblas") {
      l.library.sgemm = openblasSgemm;
      const char *config = openblas_get_config();
      l.library.version = config ? config : "";
      l.ok = true;
    } else if (name == "onednn" || name == "onednn-sgemm") {
      l.ok = loadOneDnn(l.library, l.error, name == "onednn");
      if (!l.ok)
        l.error = "oneDNN is not available (" + l.error + "; Debian: apt-get install libdnnl-dev)";
    } else if (name == "blis") {
      l.ok = loadBlis(l.library, l.error);
      if (!l.ok)
        l.error = "BLIS is not available (" + l.error + "; Debian: apt-get install libblis-dev)";
    } else {
      l.error = "no GEMM library named '" + name + "' (openblas, onednn, onednn-sgemm, blis)";
    }
  }
  if (!l.ok)
    error = l.error;
  return l.ok ? &l.library : nullptr;
}

std::vector<const GemmLibrary *> availableGemmLibraries() {
  std::vector<const GemmLibrary *> out;
  for (const std::string &name : gemmLibraryNames()) {
    std::string ignored;
    if (const GemmLibrary *l = gemmLibrary(name, ignored))
      out.push_back(l);
  }
  return out;
}

} // namespace einrt
