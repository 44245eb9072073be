//===- Bf16Gemm.h - bf16 x bf16 -> f32 GEMM through AVX-512 BF16 -*- C++ -*-===//
//
// One row-major matrix product C (m x n) = op(A) (m x k) · op(B) (k x n) of
// bf16 operands with f32 sums, two ways that give the same bits:
//   bf16Gemm       the instruction kernel: VDPBF16PS (_mm512_dpbf16_ps) in
//                  an 8-row x 32-column register block (16 zmm accumulators);
//                  compiled with __attribute__((target)) on its functions
//                  only, run only where cpuHasAvx512Bf16();
//   bf16GemmModel  its scalar model: the same packing, the same order of
//                  operations per output element, the instruction's rounding
//                  emulated in portable C++ (dpbf16Lane).
// The caller (CpuDevice::gemm) handles batches, outer loops and chunks: it
// packs each matrix once (packBf16A/B) and runs row blocks of it
// (bf16GemmRows) on its threads.
//
// VDPBF16PS zmm1, zmm2, zmm3 (Intel SDM vol. 2, "VDPBF16PS"): for each of
// the 16 dword lanes i, with src1/src2 holding bf16 pairs (element 2i in the
// low half of the dword, 2i+1 in the high half) and make_fp32(x) = x << 16:
//   dst[i] = dst[i] + make_fp32(src1[2i+1]) · make_fp32(src2[2i+1])
//   dst[i] = dst[i] + make_fp32(src1[2i])   · make_fp32(src2[2i])
// the high (odd) pair first; each line is an f32 fused multiply-add (the
// product of two bf16 values is exact in f32 anyway) rounded to nearest
// even, with denormal inputs read as zero (DAZ) and a denormal result
// flushed to zero (FTZ), whatever MXCSR says (it is neither read nor
// written). dpbf16Lane models one lane: tininess is detected after
// rounding, as x86 does; NaN payloads are not modelled (a NaN stays a NaN).
//
// The packed layouts (uint32 words, each a bf16 pair: element 2p in the low
// half, 2p+1 in the high half; an odd k's last pair has a zero high half):
//   A: blocks of kBf16BlockRows rows, each kp pairs x 8 rows (row fastest);
//   B: panels of kBf16PanelCols columns, each kp pairs x 32 columns;
// kp = ceil(k / 2); rows and columns past m and n are zero. Per output
// element the sum is one chain: acc = +0, then pairs p = 0 .. kp-1 in order
// (odd element first, as above); then C = acc (Store) or C = C + acc
// (Accumulate, an ordinary f32 add), and a bf16 C rounded once from that f32
// to nearest even (runtime/core/FloatFormats.h's narrowToBF16).
//
//===----------------------------------------------------------------------===//
#ifndef EINC_RUNTIME_BF16GEMM_H
#define EINC_RUNTIME_BF16GEMM_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <string>

namespace einrt {

/// The register block: rows of C per block of packed A, columns per panel
/// of packed B (two zmm registers of 16 floats).
constexpr int64_t kBf16BlockRows = 8;
constexpr int64_t kBf16PanelCols = 32;

/// One bf16 GEMM: C = op(A) · op(B) (or C += ...), leading dimensions in
/// elements; C is f32, or bf16 when `bf16Result`.
struct Bf16GemmShape {
  int64_t m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  int64_t lda = 1, ldb = 1, ldc = 1;
  bool accumulate = false;
  bool bf16Result = false;
};

/// Words of packed A / packed B, and of both (what bf16Gemm's workspace
/// holds).
int64_t bf16PackedAWords(const Bf16GemmShape &s);
int64_t bf16PackedBWords(const Bf16GemmShape &s);
int64_t bf16GemmWorkspaceWords(const Bf16GemmShape &s);

/// op(A) / op(B) into the packed layouts above (exact: bits are moved).
void packBf16A(const Bf16GemmShape &s, const uint16_t *a, uint32_t *packed);
void packBf16B(const Bf16GemmShape &s, const uint16_t *b, uint32_t *packed);

/// How a row block's sums are computed: the instruction or its model.
enum class Bf16Kernel : uint8_t { Avx512Bf16, Model };

/// Rows [r0, r1) of C from packed A and B. A block of rows that [r0, r1)
/// cuts is computed whole and stored in part (CpuDevice's chunks start at
/// multiples of 16 rows, so theirs never is). Avx512Bf16 only where
/// cpuHasAvx512Bf16(); else it aborts with a message (a caller's bug),
/// never a SIGILL.
void bf16GemmRows(Bf16Kernel kernel, const Bf16GemmShape &s, const uint32_t *packedA,
                  const uint32_t *packedB, void *c, int64_t r0, int64_t r1);

/// The whole GEMM: packs A and B into `workspace` (bf16GemmWorkspaceWords
/// words), then every row. bf16Gemm is Unavailable (no SIGILL) where
/// !cpuHasAvx512Bf16().
Status bf16Gemm(const Bf16GemmShape &s, const uint16_t *a, const uint16_t *b, void *c,
                uint32_t *workspace);
void bf16GemmModel(const Bf16GemmShape &s, const uint16_t *a, const uint16_t *b, void *c,
                   uint32_t *workspace);

/// The model's 8 x 32 tile of sums (Bf16GemmModel.cpp; bf16GemmRows calls
/// it for Bf16Kernel::Model): tile[r * 32 + q] is the chain above over the
/// kp pairs of row r of a packed A block and column q of a packed B panel.
void bf16ModelTile(const uint32_t *packedA, const uint32_t *packedB, int64_t kp, float *tile);

/// One lane of one VDPBF16PS, as above: `acc` plus the high pair's product,
/// then the low pair's, each rounded (RNE, DAZ, FTZ).
float dpbf16Lane(float acc, uint32_t a, uint32_t b);

/// Whether this CPU and its OS run the kernel: AVX-512 F/BW/VL (x86-64-v4,
/// whose check includes the OS saving the zmm and mask state) and
/// AVX512_BF16; and EINC_JIT_CPU, when set, names x86-64-v4. Below it
/// (scripts/as-avx2: an AVX2-only machine emulated on any one) einc runs no
/// AVX-512 code, this kernel's neither, so every path that needs it takes
/// the side of a CPU without it.
bool cpuHasAvx512Bf16();
/// "" where cpuHasAvx512Bf16(); else why not: the CPU (or its OS), or
/// EINC_JIT_CPU's target.
std::string whyNoAvx512Bf16();

/// How CpuDevice runs a GEMM whose A and B are bf16:
///   Emulate     widen both (exactly) to f32 and run cblas_sgemm;
///   Avx512Bf16  bf16Gemm's kernel;
///   OneDnn      oneDNN's matmul primitive (runtime/cpu/OneDnnMatmul.h) per
///               chunk, where its kernel is a brgemm of a bf16 ISA
///               (AVX512-BF16 or AMX: oneDnnBf16Isa);
///   Model       bf16GemmModel (slow; for tests: the instruction path's
///               bits on a CPU without it).
enum class Bf16GemmPath : uint8_t { Emulate, Avx512Bf16, OneDnn, Model };

/// "emulate", "avx512bf16", "onednn", "model": EINC_CPU_BF16's values.
const char *bf16GemmPathName(Bf16GemmPath path);
/// The name and the engine's ISA where there is one ("onednn
/// avx512_core_amx_bf16"), for the tools' banner lines.
std::string bf16GemmPathLabel(Bf16GemmPath path);
/// The label and what it runs, for the tools' info lines.
std::string bf16GemmPathDescription(Bf16GemmPath path);

/// This machine's path: EINC_CPU_BF16 when set (one of the names above;
/// "avx512bf16" on a CPU without it, or "onednn" where oneDNN is missing or
/// its bf16 kernel is not a bf16 ISA's brgemm, is an error; either where
/// !cpuHasAvx512Bf16()), else OneDnn where oneDNN runs bf16 on such a kernel
/// and cpuHasAvx512Bf16(), else Avx512Bf16 where cpuHasAvx512Bf16(), else
/// Emulate. Invalid for a bad value, Unavailable for a path this machine
/// lacks.
Expected<Bf16GemmPath> selectBf16GemmPath();

} // namespace einrt

#endif // EINC_RUNTIME_BF16GEMM_H
