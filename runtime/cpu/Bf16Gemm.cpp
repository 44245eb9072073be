//===- Bf16Gemm.cpp - bf16 x bf16 -> f32 GEMM through AVX-512 BF16 --------===//
//
// Packing, the row-block driver and the epilogue are portable and shared by
// the kernel and its model (Bf16GemmModel.cpp), which differ only in how an
// 8 x 32 tile of sums is computed. Only the tile kernel is compiled for
// AVX-512 BF16 (a target attribute on it alone), so the rest of the runtime
// runs on any x86-64 and the kernel is called only after cpuHasAvx512Bf16().
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Bf16Gemm.h"
#include "runtime/cpu/OneDnnMatmul.h"

#include "runtime/core/FloatFormats.h"
#include "runtime/cpu/CpuTarget.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define EINC_BF16_KERNEL 1
#endif

namespace einrt {

namespace {

constexpr int64_t kRows = kBf16BlockRows, kCols = kBf16PanelCols;

int64_t pairs(int64_t k) { return (k + 1) / 2; }
int64_t roundUp(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

/// op(A)(i, p) and op(B)(p, j) as stored.
uint16_t elementA(const Bf16GemmShape &s, const uint16_t *a, int64_t i, int64_t p) {
  return s.transA ? a[p * s.lda + i] : a[i * s.lda + p];
}
uint16_t elementB(const Bf16GemmShape &s, const uint16_t *b, int64_t p, int64_t j) {
  return s.transB ? b[j * s.ldb + p] : b[p * s.ldb + j];
}

#ifdef EINC_BF16_KERNEL
/// The 8 x 32 tile of sums of one row block of packed A and one panel of
/// packed B: 16 accumulators, one VDPBF16PS each per pair of k.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void
kernelTile(const uint32_t *pa, const uint32_t *pb, int64_t kp, float *tile) {
  __m512 acc[kRows][2];
  for (int r = 0; r < kRows; ++r)
    acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kp; ++p) {
    const __m512bh b0 = (__m512bh)_mm512_loadu_si512(pb + p * kCols);
    const __m512bh b1 = (__m512bh)_mm512_loadu_si512(pb + p * kCols + 16);
    const uint32_t *ap = pa + p * kRows;
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m512bh av = (__m512bh)_mm512_set1_epi32(int(ap[r]));
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], av, b0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], av, b1);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    _mm512_storeu_ps(tile + r * kCols, acc[r][0]);
    _mm512_storeu_ps(tile + r * kCols + 16, acc[r][1]);
  }
}
#endif

/// Rows [r, r + rows) and columns [j, j + cols) of C from the tile: the
/// Store or Accumulate epilogue, in f32 or rounded once to bf16.
void storeTile(const Bf16GemmShape &s, const float *tile, void *c, int64_t r, int64_t j,
               int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    const float *t = tile + i * kCols;
    const int64_t at = (r + i) * s.ldc + j;
    if (!s.bf16Result) {
      float *out = static_cast<float *>(c) + at;
      if (s.accumulate)
        for (int64_t q = 0; q < cols; ++q)
          out[q] = out[q] + t[q];
      else
        std::memcpy(out, t, size_t(cols) * sizeof(float));
      continue;
    }
    uint16_t *out = static_cast<uint16_t *>(c) + at;
    float sum[kCols];
    if (s.accumulate) {
      widenBF16(out, sum, cols);
      for (int64_t q = 0; q < cols; ++q)
        sum[q] = sum[q] + t[q];
    } else {
      std::memcpy(sum, t, size_t(cols) * sizeof(float));
    }
    narrowToBF16(sum, out, cols);
  }
}

} // namespace

int64_t bf16PackedAWords(const Bf16GemmShape &s) { return roundUp(s.m, kRows) * pairs(s.k); }
int64_t bf16PackedBWords(const Bf16GemmShape &s) { return roundUp(s.n, kCols) * pairs(s.k); }
int64_t bf16GemmWorkspaceWords(const Bf16GemmShape &s) {
  return bf16PackedAWords(s) + bf16PackedBWords(s);
}

void packBf16A(const Bf16GemmShape &s, const uint16_t *a, uint32_t *packed) {
  const int64_t kp = pairs(s.k), blocks = roundUp(s.m, kRows) / kRows;
  for (int64_t blk = 0; blk < blocks; ++blk)
    for (int64_t r = 0; r < kRows; ++r) {
      const int64_t i = blk * kRows + r;
      uint32_t *out = packed + blk * kp * kRows + r;
      for (int64_t p = 0; p < kp; ++p) {
        uint32_t lo = 0, hi = 0;
        if (i < s.m) {
          lo = elementA(s, a, i, 2 * p);
          hi = 2 * p + 1 < s.k ? elementA(s, a, i, 2 * p + 1) : 0;
        }
        out[p * kRows] = lo | hi << 16;
      }
    }
}

void packBf16B(const Bf16GemmShape &s, const uint16_t *b, uint32_t *packed) {
  const int64_t kp = pairs(s.k), panels = roundUp(s.n, kCols) / kCols;
  for (int64_t panel = 0; panel < panels; ++panel)
    for (int64_t p = 0; p < kp; ++p) {
      uint32_t *out = packed + (panel * kp + p) * kCols;
      for (int64_t q = 0; q < kCols; ++q) {
        const int64_t j = panel * kCols + q;
        uint32_t lo = 0, hi = 0;
        if (j < s.n) {
          lo = elementB(s, b, 2 * p, j);
          hi = 2 * p + 1 < s.k ? elementB(s, b, 2 * p + 1, j) : 0;
        }
        out[q] = lo | hi << 16;
      }
    }
}

void bf16GemmRows(Bf16Kernel kernel, const Bf16GemmShape &s, const uint32_t *packedA,
                  const uint32_t *packedB, void *c, int64_t r0, int64_t r1) {
  r1 = std::min(r1, s.m);
  if (r1 <= r0 || s.n <= 0)
    return;
  if (s.k == 0) { // an empty sum: C = 0, or C unchanged
    if (!s.accumulate)
      for (int64_t r = r0; r < r1; ++r) {
        if (s.bf16Result)
          std::fill_n(static_cast<uint16_t *>(c) + r * s.ldc, s.n, uint16_t(0));
        else
          std::fill_n(static_cast<float *>(c) + r * s.ldc, s.n, 0.0f);
      }
    return;
  }
  void (*tileFn)(const uint32_t *, const uint32_t *, int64_t, float *) = bf16ModelTile;
  if (kernel == Bf16Kernel::Avx512Bf16) {
    if (!cpuHasAvx512Bf16()) {
      std::fputs("einc: internal error: the AVX-512 BF16 GEMM kernel called on a CPU "
                 "without it\n",
                 stderr);
      std::abort();
    }
#ifdef EINC_BF16_KERNEL
    tileFn = kernelTile;
#endif
  }
  const int64_t kp = pairs(s.k);
  alignas(64) float tile[kRows * kCols];
  // Panel-outer: one panel of B (kp x 32 words) is reused by every row
  // block of the range.
  for (int64_t j = 0; j < s.n; j += kCols) {
    const uint32_t *pb = packedB + (j / kCols) * kp * kCols;
    const int64_t cols = std::min(kCols, s.n - j);
    for (int64_t block = r0 / kRows * kRows; block < r1; block += kRows) {
      tileFn(packedA + (block / kRows) * kp * kRows, pb, kp, tile);
      const int64_t first = std::max(block, r0), last = std::min(block + kRows, r1);
      storeTile(s, tile + (first - block) * kCols, c, first, j, last - first, cols);
    }
  }
}

namespace {
void wholeGemm(Bf16Kernel kernel, const Bf16GemmShape &s, const uint16_t *a, const uint16_t *b,
               void *c, uint32_t *workspace) {
  if (s.m <= 0 || s.n <= 0)
    return;
  uint32_t *pa = workspace, *pb = workspace + bf16PackedAWords(s);
  packBf16A(s, a, pa);
  packBf16B(s, b, pb);
  bf16GemmRows(kernel, s, pa, pb, c, 0, s.m);
}
} // namespace

Status bf16Gemm(const Bf16GemmShape &s, const uint16_t *a, const uint16_t *b, void *c,
                uint32_t *workspace) {
  if (!cpuHasAvx512Bf16())
    return Status(StatusCode::Unavailable,
                  "the AVX-512 BF16 GEMM kernel cannot run here: " + whyNoAvx512Bf16());
  wholeGemm(Bf16Kernel::Avx512Bf16, s, a, b, c, workspace);
  return Status::success();
}

void bf16GemmModel(const Bf16GemmShape &s, const uint16_t *a, const uint16_t *b, void *c,
                   uint32_t *workspace) {
  wholeGemm(Bf16Kernel::Model, s, a, b, c, workspace);
}

namespace {
bool hardwareRunsAvx512Bf16() {
#ifdef EINC_BF16_KERNEL
  // cpuRuns initialises the CPU model; x86-64-v4 covers AVX-512 F/BW/VL
  // and the OS-saved zmm state, libgcc's avx512bf16 bit the instruction.
  static const bool has = cpuRuns("x86-64-v4") && __builtin_cpu_supports("avx512bf16");
  return has;
#else
  return false;
#endif
}

// EINC_JIT_CPU when it names a target other than x86-64-v4 (read on every
// call: tests set it for a scope), else null.
const char *jitTargetBelowV4() {
  const char *jit = std::getenv("EINC_JIT_CPU");
  return jit && *jit && std::strcmp(jit, "x86-64-v4") != 0 ? jit : nullptr;
}
} // namespace

bool cpuHasAvx512Bf16() { return hardwareRunsAvx512Bf16() && !jitTargetBelowV4(); }

std::string whyNoAvx512Bf16() {
  if (!hardwareRunsAvx512Bf16())
    return "this CPU (or its OS) does not run AVX-512 BF16 (it needs avx512f, avx512bw, avx512vl "
           "and avx512_bf16, with the zmm state saved)";
  if (const char *jit = jitTargetBelowV4())
    return std::string("EINC_JIT_CPU=") + jit + " runs no AVX-512 code";
  return "";
}

const char *bf16GemmPathName(Bf16GemmPath path) {
  switch (path) {
  case Bf16GemmPath::Emulate:
    return "emulate";
  case Bf16GemmPath::Avx512Bf16:
    return "avx512bf16";
  case Bf16GemmPath::OneDnn:
    return "onednn";
  case Bf16GemmPath::Model:
    return "model";
  }
  return "?";
}

std::string bf16GemmPathLabel(Bf16GemmPath path) {
  std::string label = bf16GemmPathName(path);
  if (path == Bf16GemmPath::OneDnn) {
    Expected<std::string> isa = oneDnnBf16Isa();
    label += " " + (isa.ok() ? *isa : std::string());
  }
  return label;
}

std::string bf16GemmPathDescription(Bf16GemmPath path) {
  const std::string what = path == Bf16GemmPath::Emulate      ? "widened to f32, cblas_sgemm"
                           : path == Bf16GemmPath::Avx512Bf16 ? "the VDPBF16PS kernel"
                           : path == Bf16GemmPath::OneDnn
                               ? "oneDNN " + oneDnnVersion() + " matmul primitives"
                               : "the VDPBF16PS kernel's scalar model";
  return bf16GemmPathLabel(path) + " (" + what + ")";
}

Expected<Bf16GemmPath> selectBf16GemmPath() {
  const bool has = cpuHasAvx512Bf16();
  const char *env = std::getenv("EINC_CPU_BF16");
  const std::string want = env ? env : "";
  if (want.empty()) {
    // oneDNN's bf16 brgemm is AVX-512 code too (AVX512-BF16 or AMX, whose
    // CPUs have AVX512_BF16): not where EINC_JIT_CPU rules that out.
    return has && oneDnnBf16Isa().ok() ? Bf16GemmPath::OneDnn
           : has                       ? Bf16GemmPath::Avx512Bf16
                                       : Bf16GemmPath::Emulate;
  }
  const std::string remedy = "; unset it, or use EINC_CPU_BF16=emulate";
  for (Bf16GemmPath p :
       {Bf16GemmPath::Emulate, Bf16GemmPath::Avx512Bf16, Bf16GemmPath::OneDnn, Bf16GemmPath::Model})
    if (want == bf16GemmPathName(p)) {
      if (p == Bf16GemmPath::Avx512Bf16 && !has)
        return Status(StatusCode::Unavailable,
                      "EINC_CPU_BF16=avx512bf16, but " + whyNoAvx512Bf16() + remedy);
      if (p == Bf16GemmPath::OneDnn) {
        if (Expected<std::string> isa = oneDnnBf16Isa(); !isa.ok())
          return Status(StatusCode::Unavailable,
                        "EINC_CPU_BF16=onednn, but " + isa.status().message() + remedy);
        if (!has)
          return Status(StatusCode::Unavailable,
                        "EINC_CPU_BF16=onednn, but " + whyNoAvx512Bf16() + remedy);
      }
      return p;
    }
  return Status::invalid("EINC_CPU_BF16=" + want +
                         ": expected emulate, avx512bf16, onednn or model");
}

} // namespace einrt
