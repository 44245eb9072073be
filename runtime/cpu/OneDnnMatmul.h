//===- OneDnnMatmul.h - oneDNN's matmul primitive, one thread per call -*- C++ -*-===//
//
// One row-major matrix product C (m x n) = op(A) (m x k) · op(B) (k x n),
// or C += ..., through oneDNN's matmul primitive (its C API), with leading
// dimensions (strided memory descriptors) and the element types
//   f32 x f32 -> f32, bf16 x bf16 -> f32 or bf16, f16 x f16 -> f32 or f16
// (f16 only where this oneDNN implements it on this CPU; elsewhere `get`
// refuses). The sums are f32; Accumulate is oneDNN's sum post-op (C + sum,
// one f32 addition, a bf16/f16 C rounded once from it).
//
// libdnnl.so.2 is opened with dlopen on first use (EINC_ONEDNN_LIBRARY
// names another file: tests point it at none to run as where oneDNN is
// missing), so einc and its executables run without it; dnnl.h gives the
// types only, every function comes from dlsym.
//
// A primitive is created once per shape and kept for the process
// (thread-safe; CpuDevice warms the cache when it prepares a Program), and
// `run` executes it on the calling thread, single-threaded: einc's own
// threads call GEMMs on disjoint chunks, so oneDNN must not start a pool
// of its own. Debian's oneDNN runs on OpenMP: each thread that creates or
// runs a primitive sets its OpenMP thread count to one first (a primitive
// created for one thread also plans its blocking for one, so the blocking,
// and so the bits, never depend on the caller's thread count). A oneDNN
// built on TBB or a threadpool is refused. A call's result depends only on
// its operands and its shape.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_ONEDNNMATMUL_H
#define EINC_RUNTIME_ONEDNNMATMUL_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <string>

namespace einrt {

enum class MatmulType : uint8_t { F32, BF16, F16 };

/// One matmul call's shape: C (m x n, ldc) = op(A) · op(B) (+ C where
/// `accumulate`), row-major, op a transpose where trans* is set.
struct MatmulShape {
  int64_t m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  int64_t lda = 0, ldb = 0, ldc = 0;
  MatmulType ab = MatmulType::F32; // A and B
  MatmulType c = MatmulType::F32;
  bool accumulate = false;
};

/// The oneDNN library, opened on first use: its handle, or Unavailable
/// (not installed, a symbol missing, a threading runtime einc cannot hold
/// to one thread). GemmLibrary's "onednn" opens it here too.
Expected<void *> oneDnnLibrary();
/// "2.6.3" ("" when it does not load).
std::string oneDnnVersion();

/// The created primitive of one shape.
class OneDnnMatmul {
public:
  /// `s`'s primitive, created on first use and cached; Unavailable where
  /// oneDNN does not load or implements no matmul for it (an f16 matmul on
  /// a CPU without f16 kernels), Invalid for m or n of 0.
  static Expected<const OneDnnMatmul *> get(const MatmulShape &s);

  /// The product on the calling thread (one thread): A, B and C as the
  /// shape says. A failure only where oneDNN reports one.
  Status run(const void *a, const void *b, void *c) const;

  const MatmulShape &shape() const { return shape_; }
  /// oneDNN's name of the implementation it chose: "brg:avx512_core_bf16",
  /// "brg:avx512_core_amx_bf16", "gemm:jit", "ref:any", ...
  const std::string &implementation() const { return impl_; }

  struct Handles; // the primitive and its scratchpad size (OneDnnMatmul.cpp)
  explicit OneDnnMatmul(const MatmulShape &s, std::string impl, Handles *h)
      : shape_(s), impl_(std::move(impl)), handles_(h) {}

private:
  MatmulShape shape_;
  std::string impl_;
  Handles *handles_;
};

/// The ISA of a brgemm implementation name ("brg:avx512_core_amx_bf16" ->
/// "avx512_core_amx_bf16"); "" for any other implementation.
std::string brgemmIsa(const std::string &implementation);

/// Whether oneDNN runs bf16 x bf16 -> f32 matmuls here on a brgemm kernel
/// of a bf16 ISA (AVX512-BF16 or AMX), judged on a 256 x 256 x 256 probe:
/// that ISA ("avx512_core_bf16", "avx512_core_amx_bf16"), or Unavailable
/// saying why not (no oneDNN; its kernel is gemm:jit, a reference, or an
/// ISA without bf16 instructions, as under DNNL_MAX_CPU_ISA=AVX512_CORE).
Expected<std::string> oneDnnBf16Isa();

} // namespace einrt

#endif // EINC_RUNTIME_ONEDNNMATMUL_H
