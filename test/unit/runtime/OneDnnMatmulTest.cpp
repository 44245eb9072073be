//===- OneDnnMatmulTest.cpp - oneDNN's matmul primitive as an engine ------===//
//
// runtime/cpu/OneDnnMatmul.h: bf16 x bf16 -> f32/bf16 and f32 products within
// f32 rounding of an f64 dot (docs/determinism.md's bf16 contract) over
// random shapes (odd m/n/k, transposes, padded leading dimensions,
// Accumulate, bf16 C; the padding of C never written); an f16 product
// exact or cleanly refused; one primitive per shape; calls on several
// threads at once give each call's bits; the CPU device's onednn path per
// chunk within the bound, the same bits at one and two threads; and the
// gate: the default is onednn exactly where oneDNN's bf16 kernel is a bf16
// ISA's brgemm, and forcing it elsewhere is one clear error. Where oneDNN
// is not installed or has no bf16 matmul on this CPU the checks of the
// refusal run instead (test/e2e/cpu-bf16-gemm-onednn.test simulates both
// on every CPU).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/OneDnnMatmul.h"
#include "Bf16GemmCases.h"
#include "test/unit/StatusTesting.h"

#include <gtest/gtest.h>

#include <thread>

using namespace einrt;
using namespace einrt::testing;

namespace {

MatmulShape shapeOf(const Bf16GemmShape &s, MatmulType ab) {
  MatmulShape m;
  m.m = s.m, m.n = s.n, m.k = s.k;
  m.transA = s.transA, m.transB = s.transB;
  m.lda = s.lda, m.ldb = s.ldb, m.ldc = s.ldc;
  m.ab = ab;
  m.c = s.bf16Result ? ab : MatmulType::F32;
  m.accumulate = s.accumulate;
  return m;
}

/// Runs `mm` on a copy of c's C (its operands as given); returns the C.
std::vector<uint8_t> runMatmul(const OneDnnMatmul &mm, const Case &c, const void *a,
                               const void *b) {
  return runOn(c, [&](const Bf16GemmShape &, const uint16_t *, const uint16_t *, void *out,
                      uint32_t *) { EINC_EXPECT_OK(mm.run(a, b, out)); });
}

void expectPaddingKept(const Case &c, const std::vector<uint8_t> &out, const std::string &what) {
  const size_t elem = c.s.bf16Result ? 2 : 4;
  for (int64_t i = 0; i < c.s.m; ++i)
    for (int64_t j = c.s.n; j < c.s.ldc; ++j) {
      const void *was = c.s.bf16Result ? static_cast<const void *>(&c.c16[size_t(i * c.s.ldc + j)])
                                       : &c.c32[size_t(i * c.s.ldc + j)];
      EXPECT_EQ(0, std::memcmp(out.data() + (i * c.s.ldc + j) * elem, was, elem))
          << what << ": padding C[" << i << "][" << j << "] written";
    }
}

/// Whether oneDNN runs a bf16 matmul here; else why not.
Status bf16Runs() {
  MatmulShape probe;
  probe.m = probe.n = probe.k = probe.lda = probe.ldb = probe.ldc = 8;
  probe.ab = MatmulType::BF16;
  return OneDnnMatmul::get(probe).takeStatus();
}

TEST(OneDnnMatmul, Bf16IsWithinFp32RoundingOfExact) {
  Status runs = bf16Runs();
  if (!runs.ok()) {
    const std::string &why = runs.message();
    // No oneDNN, or none with a bf16 matmul here: a clear refusal.
    EXPECT_TRUE(why.find("oneDNN is not available") != std::string::npos ||
                why.find("oneDNN implements no matmul") != std::string::npos)
        << why;
    GTEST_SKIP() << why;
  }
  std::mt19937 gen(21);
  for (int trial = 0; trial < 300; ++trial) {
    Case c = randomCase(gen);
    EINC_ASSERT_OK_AND_ASSIGN(const OneDnnMatmul *mm,
                              OneDnnMatmul::get(shapeOf(c.s, MatmulType::BF16)));
    const std::string what = "trial " + std::to_string(trial) + " on " + mm->implementation();
    std::vector<uint8_t> out = runMatmul(*mm, c, c.a.data(), c.b.data());
    expectWithinRounding(c, out.data(), c.c32, what);
    expectPaddingKept(c, out, what);
  }
}

TEST(OneDnnMatmul, F32IsWithinFp32RoundingOfExact) {
  if (Status loaded = oneDnnLibrary().takeStatus(); !loaded.ok())
    GTEST_SKIP() << loaded.message();
  std::mt19937 gen(22);
  for (int trial = 0; trial < 200; ++trial) {
    Case c = randomCase(gen);
    c.s.bf16Result = false; // f32 operands make an f32 C
    // The bf16 values as f32: their products are exact, as in the bf16 case.
    std::vector<float> a(c.a.size()), b(c.b.size());
    widenBF16(c.a.data(), a.data(), int64_t(a.size()));
    widenBF16(c.b.data(), b.data(), int64_t(b.size()));
    EINC_ASSERT_OK_AND_ASSIGN(const OneDnnMatmul *mm,
                              OneDnnMatmul::get(shapeOf(c.s, MatmulType::F32)));
    const std::string what = "trial " + std::to_string(trial) + " on " + mm->implementation();
    std::vector<uint8_t> out = runMatmul(*mm, c, a.data(), b.data());
    expectWithinRounding(c, out.data(), c.c32, what);
    expectPaddingKept(c, out, what);
  }
}

TEST(OneDnnMatmul, F16IsExactOrRefused) {
  if (Status loaded = oneDnnLibrary().takeStatus(); !loaded.ok())
    GTEST_SKIP() << loaded.message();
  MatmulShape s;
  s.m = 5, s.n = 7, s.k = 9, s.lda = 9, s.ldb = 7, s.ldc = 7;
  s.ab = MatmulType::F16;
  Expected<const OneDnnMatmul *> found = OneDnnMatmul::get(s);
  if (!found.ok()) {
    EINC_EXPECT_STATUS_EQ(found, StatusCode::Unavailable,
                          "f16 x f16 -> f32 NN 5x7x9 lda=9 ldb=7 ldc=7: oneDNN implements no "
                          "matmul for it on this CPU");
    return;
  }
  const OneDnnMatmul *mm = *found;
  // Small integers: exact in f16, their sums exact in f32.
  std::vector<float> a(45), b(63), c(35, 0.0f);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float(int(i % 7) - 3);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = float(int(i % 5) - 2);
  std::vector<uint16_t> a16(a.size()), b16(b.size());
  narrowToF16(a.data(), a16.data(), int64_t(a.size()));
  narrowToF16(b.data(), b16.data(), int64_t(b.size()));
  EINC_ASSERT_OK(mm->run(a16.data(), b16.data(), c.data()));
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 7; ++j) {
      float exact = 0;
      for (int64_t p = 0; p < 9; ++p)
        exact += a[size_t(i * 9 + p)] * b[size_t(p * 7 + j)];
      EXPECT_EQ(c[size_t(i * 7 + j)], exact) << mm->implementation();
    }
}

TEST(OneDnnMatmul, OnePrimitivePerShape) {
  if (Status loaded = oneDnnLibrary().takeStatus(); !loaded.ok())
    GTEST_SKIP() << loaded.message();
  MatmulShape s;
  s.m = 64, s.n = 48, s.k = 32, s.lda = 32, s.ldb = 48, s.ldc = 48;
  EINC_ASSERT_OK_AND_ASSIGN(const OneDnnMatmul *first, OneDnnMatmul::get(s));
  EINC_ASSERT_OK_AND_ASSIGN(const OneDnnMatmul *again, OneDnnMatmul::get(s));
  EXPECT_EQ(again, first);
  EXPECT_FALSE(first->implementation().empty());
  s.accumulate = true;
  EINC_ASSERT_OK_AND_ASSIGN(const OneDnnMatmul *accumulating, OneDnnMatmul::get(s));
  EXPECT_NE(accumulating, first);
  EXPECT_TRUE(accumulating->shape().accumulate);
  // An f32 product is never rounded to a narrow C; an empty C is no call.
  s.c = MatmulType::BF16;
  EINC_EXPECT_STATUS(OneDnnMatmul::get(s), StatusCode::Invalid, "f32 operands make an f32 result");
  s.c = MatmulType::F32, s.m = 0;
  EINC_EXPECT_STATUS(OneDnnMatmul::get(s), StatusCode::Invalid, "");
}

TEST(OneDnnMatmul, ConcurrentCallsGiveEachCallsBits) {
  if (Status runs = bf16Runs(); !runs.ok())
    GTEST_SKIP() << runs.message();
  // One primitive, four threads at once on their own operands: each C is
  // the one a call alone on this thread gives.
  std::mt19937 gen(23);
  Case base = randomCase(gen);
  base.s.m = 96, base.s.n = 80, base.s.k = 70, base.s.lda = 72, base.s.ldb = 80;
  base.s.ldc = 80, base.s.transA = base.s.transB = false;
  std::vector<Case> cases;
  for (int t = 0; t < 4; ++t) {
    Case c = base;
    c.a = randomBf16(c.s.m * c.s.lda, gen);
    c.b = randomBf16(c.s.k * c.s.ldb, gen);
    c.c16 = randomBf16(c.s.m * c.s.ldc, gen);
    c.c32.resize(c.c16.size());
    widenBF16(c.c16.data(), c.c32.data(), int64_t(c.c16.size()));
    cases.push_back(c);
  }
  EINC_ASSERT_OK_AND_ASSIGN(const OneDnnMatmul *mm,
                            OneDnnMatmul::get(shapeOf(base.s, MatmulType::BF16)));
  std::vector<std::vector<uint8_t>> alone, together(cases.size());
  for (const Case &c : cases)
    alone.push_back(runMatmul(*mm, c, c.a.data(), c.b.data()));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < cases.size(); ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep)
        together[t] = runMatmul(*mm, cases[t], cases[t].a.data(), cases[t].b.data());
    });
  for (std::thread &t : threads)
    t.join();
  for (size_t t = 0; t < cases.size(); ++t)
    EXPECT_EQ(alone[t], together[t]) << "thread " << t;
}

TEST(OneDnnMatmul, CpuDevicePathIsWithinRoundingAtEveryThreadCount) {
  std::mt19937 gen(24);
  struct Shape {
    int64_t batch, outer, m, n, k;
    bool ta, tb, accumulate, bf16;
  };
  // Small steps run as one chunk; 3 x 2 matrices of 300 x 96 x 81 and one
  // of 700 x 130 x 77 are cut into row blocks of two heights
  // (runtime/cpu/ParallelChunks.h).
  const Shape shapes[] = {
      {3, 2, 13, 37, 9, false, true, false, false},   {2, 3, 9, 33, 16, true, false, true, true},
      {1, 1, 300, 96, 81, false, false, false, true}, {3, 2, 300, 40, 81, true, true, true, false},
      {1, 1, 700, 130, 77, true, false, true, true},  {2, 1, 5, 7, 0, false, false, false, false},
  };
  const Status bf16 = bf16Runs();
  const bool runs = bf16.ok();
  const std::string &why = bf16.message();
  for (const Shape &sh : shapes) {
    DeviceCase d =
        deviceCase(sh.batch, sh.outer, sh.m, sh.n, sh.k, sh.ta, sh.tb, sh.accumulate, sh.bf16, gen);
    if (!runs) { // the device refuses when it prepares, with oneDNN's reason
      if (sh.k == 0)
        continue; // an empty sum needs no kernel
      CpuDevice dev;
      dev.setBf16GemmPath(Bf16GemmPath::OneDnn);
      Program p;
      p.steps.push_back(Step(StepKind::Matmul, {}, -1, d.g));
      EINC_EXPECT_STATUS(dev.prepare(p), StatusCode::Unavailable, why.substr(why.find(':') + 1));
      continue;
    }
    std::vector<uint8_t> two = onDevice(d, Bf16GemmPath::OneDnn, 2);
    EXPECT_EQ(two, onDevice(d, Bf16GemmPath::OneDnn, 1)) << sh.m << "x" << sh.n << "x" << sh.k;
    const size_t elem = sh.bf16 ? 2 : 4;
    for (int64_t i = 0; i < d.g.matrices(); ++i) {
      Case c = matrixOf(d, i);
      expectWithinRounding(c, two.data() + i * d.g.strideC * elem, c.c32,
                           "onednn path, matrix " + std::to_string(i));
    }
  }
  if (!runs)
    GTEST_SKIP() << why;
}

TEST(OneDnnMatmul, TheGateDecidesTheDefaultAndRefusesAForcedPath) {
  EXPECT_EQ(brgemmIsa("brg:avx512_core_amx_bf16"), "avx512_core_amx_bf16");
  EXPECT_EQ(brgemmIsa("brg:avx512_core_bf16"), "avx512_core_bf16");
  EXPECT_EQ(brgemmIsa("gemm:jit"), "");
  EXPECT_EQ(brgemmIsa("ref:any"), "");
  Expected<std::string> found = oneDnnBf16Isa();
  if (found.ok())
    EXPECT_FALSE(found->empty());
  else
    EXPECT_EQ(found.status().code(), StatusCode::Unavailable);
  const std::string isa = found.ok() ? *found : "", why = found.status().message();
  Bf16GemmPath path;
  {
    EnvOverride env(nullptr);
    EINC_ASSERT_OK_AND_ASSIGN(path, selectBf16GemmPath());
    EXPECT_EQ(path == Bf16GemmPath::OneDnn, !isa.empty() && cpuHasAvx512Bf16());
  }
  EnvOverride env("onednn");
  if (isa.empty()) {
    EINC_EXPECT_STATUS_EQ(selectBf16GemmPath(), StatusCode::Unavailable,
                          "EINC_CPU_BF16=onednn, but " + why +
                              "; unset it, or use EINC_CPU_BF16=emulate");
  } else if (!cpuHasAvx512Bf16()) { // EINC_JIT_CPU below x86-64-v4
    EINC_EXPECT_STATUS_EQ(selectBf16GemmPath(), StatusCode::Unavailable,
                          "EINC_CPU_BF16=onednn, but " + whyNoAvx512Bf16() +
                              "; unset it, or use EINC_CPU_BF16=emulate");
  } else {
    EINC_ASSERT_OK_AND_ASSIGN(path, selectBf16GemmPath());
    EXPECT_EQ(path, Bf16GemmPath::OneDnn);
    EXPECT_EQ(bf16GemmPathLabel(path), "onednn " + isa);
    EXPECT_NE(isa.find("bf16"), std::string::npos) << isa;
  }
}

} // namespace
