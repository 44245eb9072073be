//===- Bf16GemmTest.cpp - The VDPBF16PS GEMM, its model and its selection -===//
//
// runtime/cpu/Bf16Gemm.h three ways: the model's lane against the instruction's
// documented arithmetic (order, DAZ, FTZ with tininess after rounding, RNE);
// the model's GEMM against an f64 dot of the bf16 values within fp32
// rounding bounds over random shapes (odd k, m/n remainders, transposes,
// padded leading dimensions, Accumulate, bf16 results), also through
// CpuDevice::gemm (batches, outer loops, row-block chunks, two threads) on
// the model path and the widen + sgemm path; the kernel against the model
// bit for bit, which runs only on a CPU with AVX-512 BF16 (elsewhere it
// skips; Bf16GemmObjectTest.cpp checks there that the kernel is compiled in
// and guarded); and the EINC_CPU_BF16 override.
//
//===----------------------------------------------------------------------===//
#include "Bf16GemmCases.h"
#include "runtime/cpu/OneDnnMatmul.h"
#include "test/unit/StatusTesting.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

using namespace einrt;
using namespace einrt::testing;

namespace {

float f32(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, 4);
  return x;
}
uint32_t bitsOf(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
uint32_t pair(uint16_t hi, uint16_t lo) { return uint32_t(hi) << 16 | lo; }

TEST(Bf16Gemm, LaneModelsTheInstruction) {
  const uint16_t one = 0x3F80, minusOne = 0xBF80;
  // The high (odd) pair first: 1 + (-1·1) = 0, then + 2^-30 = 2^-30. The
  // low pair first would give (1 + 2^-30) - 1 = 0.
  EXPECT_EQ(dpbf16Lane(1.0f, pair(minusOne, 0x3080), pair(one, one)), 0x1p-30f);
  // Each step rounds to nearest even: 1 + 2^-24 is a tie (to 1), and
  // (1 + 2^-23) + 2^-24 a tie to 1 + 2^-22.
  EXPECT_EQ(dpbf16Lane(1.0f, pair(0x3380, 0), pair(one, 0)), 1.0f);
  EXPECT_EQ(dpbf16Lane(1.0f + 0x1p-23f, pair(0x3380, 0), pair(one, 0)), 1.0f + 0x1p-22f);
  // The product is exact (a fused multiply-add): (1 + 2^-7)^2 = 1 + 2^-6 +
  // 2^-14, kept whole, not rounded to bf16 first.
  EXPECT_EQ(dpbf16Lane(0.0f, pair(0x3F81, 0), pair(0x3F81, 0)), 1.0f + 0x1p-6f + 0x1p-14f);
  // DAZ: a denormal bf16 (2^-127) times 2^10 counts as zero, not 2^-117.
  EXPECT_EQ(bitsOf(dpbf16Lane(0.0f, pair(0x0040, 0), pair(0x4480, 0))), 0u);
  // FTZ: 2^-70 · 2^-70 = 2^-140 is denormal: flushed, with its sign (in
  // the low pair: a later + 0·0 would make -0 into +0).
  EXPECT_EQ(bitsOf(dpbf16Lane(0.0f, pair(0, 0x1C80), pair(0, 0x1C80))), 0u);
  EXPECT_EQ(bitsOf(dpbf16Lane(0.0f, pair(0, 0x9C80), pair(0, 0x1C80))), 0x80000000u);
  EXPECT_EQ(bitsOf(dpbf16Lane(0.0f, pair(0x9C80, 0), pair(0x1C80, 0))), 0u);
  // Tininess after rounding: 2^-126 - 2^-150 is a 24-bit value below the
  // smallest normal, so flushed (gradual underflow would round it up to
  // 2^-126); 2^-126 - 2^-151 rounds (to even) to 2^-126 at 24 bits, so kept.
  const float minNormal = 0x1p-126f;
  EXPECT_EQ(bitsOf(dpbf16Lane(minNormal, pair(0x9A00, 0), pair(0x1A00, 0))), 0u);
  EXPECT_EQ(dpbf16Lane(minNormal, pair(0x9A00, 0), pair(0x1980, 0)), minNormal);
  // Overflow to infinity; infinities and NaNs propagate.
  EXPECT_EQ(dpbf16Lane(0x1.fffffep127f, pair(0x7F7F, 0), pair(0x3F80, 0)), INFINITY);
  EXPECT_TRUE(std::isnan(dpbf16Lane(0.0f, pair(0x7F80, 0), pair(0, 0))));
  // Exact cancellation gives +0 (RNE), and -0 + -0 stays -0.
  EXPECT_EQ(bitsOf(dpbf16Lane(1.0f, pair(minusOne, 0), pair(one, 0))), 0u);
  EXPECT_EQ(bitsOf(dpbf16Lane(-0.0f, pair(0x8000, 0x8000), pair(one, one))), 0x80000000u);
  // A denormal accumulator (2^-127) is read as zero (DAZ on every input):
  // + 2^-63 · 2^-63 gives 2^-126, not 1.5 · 2^-126.
  EXPECT_EQ(dpbf16Lane(f32(0x00400000), pair(0x2000, 0), pair(0x2000, 0)), 0x1p-126f);
}

TEST(Bf16Gemm, ModelIsWithinFp32RoundingOfExact) {
  std::mt19937 gen(12);
  for (int trial = 0; trial < 300; ++trial) {
    Case c = randomCase(gen);
    std::vector<uint8_t> out = runOn(c, bf16GemmModel);
    expectWithinRounding(c, out.data(), c.c32, "model, trial " + std::to_string(trial));
    // Padding columns of C (ldc > n) are never written.
    for (int64_t i = 0; i < c.s.m; ++i)
      for (int64_t j = c.s.n; j < c.s.ldc; ++j) {
        if (c.s.bf16Result)
          EXPECT_EQ(reinterpret_cast<const uint16_t *>(out.data())[i * c.s.ldc + j],
                    c.c16[size_t(i * c.s.ldc + j)]);
        else
          EXPECT_EQ(bitsOf(reinterpret_cast<const float *>(out.data())[i * c.s.ldc + j]),
                    bitsOf(c.c32[size_t(i * c.s.ldc + j)]));
      }
  }
}

TEST(Bf16Gemm, PackingPairsOddKWithZero) {
  Bf16GemmShape s;
  s.m = 3, s.n = 2, s.k = 3, s.lda = 3, s.ldb = 2;
  const std::vector<uint16_t> a = {1, 2, 3, 4, 5, 6, 7, 8, 9}, b = {1, 2, 3, 4, 5, 6};
  std::vector<uint32_t> pa(size_t(bf16PackedAWords(s))), pb(size_t(bf16PackedBWords(s)));
  ASSERT_EQ(pa.size(), size_t(kBf16BlockRows * 2));
  ASSERT_EQ(pb.size(), size_t(kBf16PanelCols * 2));
  packBf16A(s, a.data(), pa.data());
  packBf16B(s, b.data(), pb.data());
  // Pair 0 of row 1: elements 0 (low) and 1 (high); pair 1: element 2 and 0.
  EXPECT_EQ(pa[1], pair(5, 4));
  EXPECT_EQ(pa[kBf16BlockRows + 1], pair(0, 6));
  EXPECT_EQ(pa[3], 0u); // rows past m are zero
  EXPECT_EQ(pb[1], pair(4, 2));
  EXPECT_EQ(pb[kBf16PanelCols + 0], pair(0, 5));
  EXPECT_EQ(pb[2], 0u); // columns past n are zero
}

TEST(Bf16Gemm, RowRangesGiveTheWholeGemmsBits) {
  std::mt19937 gen(9);
  for (int trial = 0; trial < 40; ++trial) {
    Case c = randomCase(gen);
    std::vector<uint8_t> whole = runOn(c, bf16GemmModel);
    // The same rows in three ranges cut anywhere, blocks of 8 included.
    const int64_t cut1 = std::uniform_int_distribution<int64_t>(0, c.s.m)(gen);
    const int64_t cut2 = std::uniform_int_distribution<int64_t>(cut1, c.s.m)(gen);
    std::vector<uint8_t> parts = runOn(c, [&](const Bf16GemmShape &s, const uint16_t *a,
                                              const uint16_t *b, void *out, uint32_t *ws) {
      uint32_t *pa = ws, *pb = ws + bf16PackedAWords(s);
      packBf16A(s, a, pa);
      packBf16B(s, b, pb);
      bf16GemmRows(Bf16Kernel::Model, s, pa, pb, out, cut2, s.m);
      bf16GemmRows(Bf16Kernel::Model, s, pa, pb, out, 0, cut1);
      bf16GemmRows(Bf16Kernel::Model, s, pa, pb, out, cut1, cut2);
    });
    EXPECT_EQ(whole, parts) << "trial " << trial << ": cuts at " << cut1 << ", " << cut2;
  }
}

TEST(Bf16Gemm, KernelEqualsModelBitForBit) {
  if (!cpuHasAvx512Bf16())
    GTEST_SKIP() << "this CPU does not run AVX-512 BF16: the kernel is checked against its model "
                    "only on one that does (Bf16GemmObjectTest checks it is compiled and guarded)";
  std::mt19937 gen(7);
  for (int trial = 0; trial < 300; ++trial) {
    Case c = randomCase(gen);
    // Some trials with the edges of the arithmetic: tiny, huge, denormal.
    if (trial % 3 == 0)
      for (uint16_t &x : c.a)
        x = uint16_t(std::uniform_int_distribution<int>(0, 0xFFFF)(gen) & 0xFF7F);
    std::vector<uint8_t> kernel =
        runOn(c, [&](auto &&...args) { EINC_EXPECT_OK(bf16Gemm(args...)); });
    std::vector<uint8_t> model = runOn(c, bf16GemmModel);
    ASSERT_EQ(kernel.size(), model.size());
    for (size_t i = 0; i < kernel.size(); ++i)
      if (kernel[i] != model[i]) {
        ADD_FAILURE() << "trial " << trial << ": kernel and model differ at byte " << i;
        break;
      }
  }
}

// --- Through CpuDevice::gemm ---

TEST(Bf16Gemm, CpuDeviceModelPathIsTheModelPerMatrix) {
  std::mt19937 gen(3);
  struct Shape {
    int64_t batch, outer, m, n, k;
    bool ta, tb, accumulate, bf16;
  };
  // Small steps run as one chunk; 3 x 2 matrices of 300 x 96 x 81 are cut
  // into row blocks (runtime/cpu/ParallelChunks.h), run on two threads.
  const Shape shapes[] = {
      {3, 2, 13, 37, 9, false, true, false, false},   {2, 3, 9, 33, 16, true, false, true, true},
      {1, 1, 300, 96, 81, false, false, false, true}, {3, 2, 300, 40, 81, true, true, true, false},
      {2, 1, 5, 7, 0, false, false, false, false},
  };
  for (const Shape &sh : shapes) {
    DeviceCase d =
        deviceCase(sh.batch, sh.outer, sh.m, sh.n, sh.k, sh.ta, sh.tb, sh.accumulate, sh.bf16, gen);
    std::vector<uint8_t> model = onDevice(d, Bf16GemmPath::Model, 2);
    std::vector<uint8_t> emulate = onDevice(d, Bf16GemmPath::Emulate, 2);
    const size_t elem = sh.bf16 ? 2 : 4;
    for (int64_t i = 0; i < d.g.matrices(); ++i) {
      Case c = matrixOf(d, i);
      std::vector<uint8_t> alone = runOn(c, bf16GemmModel);
      EXPECT_EQ(0, std::memcmp(alone.data(), model.data() + i * d.g.strideC * elem, alone.size()))
          << "matrix " << i << " of " << sh.m << "x" << sh.n << "x" << sh.k;
      expectWithinRounding(c, emulate.data() + i * d.g.strideC * elem, c.c32,
                           "emulate path, matrix " + std::to_string(i));
      expectWithinRounding(c, model.data() + i * d.g.strideC * elem, c.c32,
                           "model path, matrix " + std::to_string(i));
    }
    // One thread gives the same bits.
    EXPECT_EQ(model, onDevice(d, Bf16GemmPath::Model, 1));
  }
}

TEST(Bf16Gemm, PackedWorkspaceIsPlanned) {
  std::mt19937 gen(5);
  DeviceCase d = deviceCase(2, 3, 10, 40, 7, false, false, false, false, gen);
  Program p;
  p.steps.push_back(Step(StepKind::Matmul, {}, -1, d.g));
  // 6 matrices, each A in 16 rows x 4 pairs and B in 64 columns x 4 pairs.
  EXPECT_EQ(CpuDevice::gemmWorkspaceBytes(p, Bf16GemmPath::Model), 6 * (16 * 4 + 64 * 4) * 4);
  // The widen path: A, B and their extents as f32, C is f32 already.
  EXPECT_GT(CpuDevice::gemmWorkspaceBytes(p, Bf16GemmPath::Emulate), 0);
  CpuDevice dev;
  dev.setBf16GemmPath(Bf16GemmPath::Model);
  std::vector<float> c(size_t(d.g.matrices() * d.g.strideC));
  EINC_EXPECT_STATUS(dev.gemm(d.g, d.a.data(), d.b.data(), c.data()), StatusCode::Internal,
                     "packed bf16 workspace");
}

TEST(Bf16Gemm, OverrideSelectsThePathAndRefusesAMissingInstruction) {
  Bf16GemmPath path;
  {
    // oneDNN's bf16 brgemm where it has one (OneDnnMatmulTest.cpp), else
    // the kernel where the CPU runs it, else the emulation.
    EnvOverride env(nullptr);
    EINC_ASSERT_OK_AND_ASSIGN(path, selectBf16GemmPath());
    EXPECT_EQ(path, cpuHasAvx512Bf16() && oneDnnBf16Isa().ok() ? Bf16GemmPath::OneDnn
                    : cpuHasAvx512Bf16()                       ? Bf16GemmPath::Avx512Bf16
                                                               : Bf16GemmPath::Emulate);
  }
  {
    // EINC_JIT_CPU below x86-64-v4 (scripts/as-avx2) is a CPU without
    // AVX-512 BF16 on any machine: the default is the emulation and both
    // AVX-512 paths are refused, naming it; x86-64-v4 changes nothing.
    EnvOverride avx2("x86-64-v3", "EINC_JIT_CPU");
    EnvOverride unset(nullptr);
    EINC_ASSERT_OK_AND_ASSIGN(path, selectBf16GemmPath());
    EXPECT_EQ(path, Bf16GemmPath::Emulate);
    const std::string why = whyNoAvx512Bf16();
    ASSERT_FALSE(why.empty());
    EnvOverride kernel("avx512bf16");
    Expected<Bf16GemmPath> missing = selectBf16GemmPath();
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.status().message(),
              "EINC_CPU_BF16=avx512bf16, but " + why + "; unset it, or use EINC_CPU_BF16=emulate");
    EXPECT_EQ(missing.status().code(), StatusCode::Unavailable);
    EnvOverride onednn("onednn");
    EINC_EXPECT_STATUS(selectBf16GemmPath(), StatusCode::Unavailable, "EINC_CPU_BF16=onednn, but ");
  }
  {
    EnvOverride unset(nullptr, "EINC_JIT_CPU");
    const bool has = cpuHasAvx512Bf16();
    EnvOverride v4("x86-64-v4", "EINC_JIT_CPU");
    EXPECT_EQ(cpuHasAvx512Bf16(), has);
  }
  {
    EnvOverride env("emulate");
    EINC_ASSERT_OK_AND_ASSIGN(path, selectBf16GemmPath());
    EXPECT_EQ(path, Bf16GemmPath::Emulate);
  }
  {
    EnvOverride env("model");
    EINC_ASSERT_OK_AND_ASSIGN(path, selectBf16GemmPath());
    EXPECT_EQ(path, Bf16GemmPath::Model);
  }
  {
    EnvOverride env("avx512");
    Expected<Bf16GemmPath> bad = selectBf16GemmPath();
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().message(),
              "EINC_CPU_BF16=avx512: expected emulate, avx512bf16, onednn or model");
    EXPECT_EQ(bad.status().code(), StatusCode::Invalid); // a bad value, not a missing path
  }
  {
    // On a CPU without the instruction: an error from prepare, never a
    // SIGILL; with it, the kernel path.
    EnvOverride env("avx512bf16");
    std::mt19937 gen(1);
    DeviceCase d = deviceCase(1, 1, 4, 4, 4, false, false, false, false, gen);
    Program p;
    p.steps.push_back(Step(StepKind::Matmul, {}, -1, d.g));
    CpuDevice dev;
    Status prepared = dev.prepare(p);
    EXPECT_EQ(prepared.ok(), cpuHasAvx512Bf16()) << ::testing::PrintToString(prepared);
    if (!prepared.ok()) {
      EINC_EXPECT_STATUS(prepared, StatusCode::Unavailable, whyNoAvx512Bf16());
      EXPECT_FALSE(dev.bf16GemmPath().has_value());
    } else {
      EXPECT_EQ(dev.bf16GemmPath(), Bf16GemmPath::Avx512Bf16);
    }
  }
}

} // namespace
