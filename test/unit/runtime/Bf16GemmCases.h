//===- Bf16GemmCases.h - Random bf16 GEMMs and their rounding bound -*- C++ -*-===//
//
// What the tests of the CPU device's bf16 GEMM paths share (Bf16GemmTest.cpp,
// OneDnnMatmulTest.cpp): random single GEMMs and strided, batched GemmDescs
// of bf16 values, the check of a result against an f64 dot of them within
// f32 rounding (docs/determinism.md's bf16 contract), running a GemmDesc
// through CpuDevice on one path, and an environment override for one scope.
//
//===----------------------------------------------------------------------===//
#ifndef EINC_TEST_UNIT_RUNTIME_BF16GEMMCASES_H
#define EINC_TEST_UNIT_RUNTIME_BF16GEMMCASES_H

#include "runtime/core/FloatFormats.h"
#include "runtime/cpu/Bf16Gemm.h"
#include "runtime/cpu/CpuDevice.h"
#include "test/unit/StatusTesting.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

namespace einrt::testing {

inline std::vector<uint16_t> randomBf16(int64_t n, std::mt19937 &gen) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<uint16_t> v(size_t(std::max<int64_t>(n, 1)));
  for (uint16_t &x : v)
    x = bf16Bits(u(gen));
  return v;
}

struct Case {
  Bf16GemmShape s;
  std::vector<uint16_t> a, b;
  std::vector<float> c32;    // f32 C (initial value for Accumulate)
  std::vector<uint16_t> c16; // bf16 C
};

inline Case randomCase(std::mt19937 &gen) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  Case c;
  Bf16GemmShape &s = c.s;
  s.m = pick(1, 29);
  s.n = pick(1, 75);
  s.k = pick(0, 9) == 0 ? pick(0, 3) : pick(1, 70);
  s.transA = pick(0, 1), s.transB = pick(0, 1);
  s.lda = std::max<int64_t>(1, (s.transA ? s.m : s.k) + pick(0, 3));
  s.ldb = std::max<int64_t>(1, (s.transB ? s.k : s.n) + pick(0, 3));
  s.ldc = s.n + pick(0, 2);
  s.accumulate = pick(0, 1);
  s.bf16Result = pick(0, 1);
  c.a = randomBf16((s.transA ? s.k : s.m) * s.lda, gen);
  c.b = randomBf16((s.transB ? s.n : s.k) * s.ldb, gen);
  c.c16 = randomBf16(s.m * s.ldc, gen);
  c.c32.resize(c.c16.size());
  widenBF16(c.c16.data(), c.c32.data(), int64_t(c.c16.size()));
  return c;
}

inline double valueA(const Case &c, int64_t i, int64_t p) {
  return bf16FromBits(c.s.transA ? c.a[size_t(p * c.s.lda + i)] : c.a[size_t(i * c.s.lda + p)]);
}
inline double valueB(const Case &c, int64_t p, int64_t j) {
  return bf16FromBits(c.s.transB ? c.b[size_t(j * c.s.ldb + p)] : c.b[size_t(p * c.s.ldb + j)]);
}

/// Checks C (f32 or bf16, as `s` says) against an f64 dot of the bf16
/// values, with `c0` the initial C. The bound, per element: the chain makes
/// k roundings (the pad products are exact zeros) and Accumulate one more,
/// each of relative error <= u = 2^-24 of its partial sum, so |error| <=
/// gamma(k + 1) · (sum |a·b| + |c0|), gamma(n) = n·u / (1 - n·u); a bf16 C
/// adds its own rounding, <= 2^-8 of its value. Plus 2^-126 for flushed
/// denormals (none with these inputs).
inline void expectWithinRounding(const Case &c, const void *result, const std::vector<float> &c0,
                                 const std::string &what) {
  const Bf16GemmShape &s = c.s;
  const double u = 0x1p-24, gamma = (s.k + 1) * u / (1 - (s.k + 1) * u);
  int64_t bad = 0;
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double exact = 0, size = 0;
      for (int64_t p = 0; p < s.k; ++p) {
        exact += valueA(c, i, p) * valueB(c, p, j);
        size += std::fabs(valueA(c, i, p) * valueB(c, p, j));
      }
      const double start = s.accumulate ? double(c0[size_t(i * s.ldc + j)]) : 0.0;
      exact += start;
      double bound = gamma * (size + std::fabs(start)) + 0x1p-126;
      double got;
      if (s.bf16Result) {
        got = bf16FromBits(static_cast<const uint16_t *>(result)[i * s.ldc + j]);
        bound += 0x1p-8 * (std::fabs(exact) + bound);
      } else {
        got = static_cast<const float *>(result)[i * s.ldc + j];
      }
      if (!(std::fabs(got - exact) <= bound) && bad++ < 5)
        ADD_FAILURE() << what << ": C[" << i << "][" << j << "] = " << got << ", exact " << exact
                      << ", bound " << bound << " (m " << s.m << " n " << s.n << " k " << s.k
                      << (s.transA ? " transA" : "") << (s.transB ? " transB" : "")
                      << (s.accumulate ? " accumulate" : "") << (s.bf16Result ? " bf16" : "")
                      << ")";
    }
}

/// Runs `fn(s, a, b, c, workspace)` on a copy of c's C; returns the C.
template <class Fn> std::vector<uint8_t> runOn(const Case &c, Fn fn) {
  const size_t bytes = c.s.bf16Result ? c.c16.size() * 2 : c.c32.size() * 4;
  std::vector<uint8_t> out(bytes);
  std::memcpy(out.data(), c.s.bf16Result ? static_cast<const void *>(c.c16.data()) : c.c32.data(),
              bytes);
  std::vector<uint32_t> workspace(size_t(std::max<int64_t>(1, bf16GemmWorkspaceWords(c.s))));
  fn(c.s, c.a.data(), c.b.data(), out.data(), workspace.data());
  return out;
}

/// A GemmDesc of bf16 matrices in batches inside an outer loop.
struct DeviceCase {
  GemmDesc g;
  std::vector<uint16_t> a, b;
  std::vector<uint16_t> c16;
  std::vector<float> c32;
};

inline DeviceCase deviceCase(int64_t batch, int64_t outer, int64_t m, int64_t n, int64_t k, bool ta,
                             bool tb, bool accumulate, bool bf16Result, std::mt19937 &gen) {
  DeviceCase d;
  GemmDesc &g = d.g;
  g.a = g.b = DType::BF16;
  g.c = bf16Result ? DType::BF16 : DType::F32;
  g.batch = batch, g.m = m, g.n = n, g.k = k, g.transA = ta, g.transB = tb;
  g.lda = (ta ? m : k) + 1, g.ldb = (tb ? k : n) + 2, g.ldc = n;
  g.strideA = (ta ? k : m) * g.lda, g.strideB = (tb ? n : k) * g.ldb, g.strideC = m * n;
  if (outer > 1)
    g.outer.push_back({outer, batch * g.strideA, batch * g.strideB, batch * g.strideC});
  g.epilogue = accumulate ? GemmEpilogue::Accumulate : GemmEpilogue::Store;
  d.a = randomBf16(g.matrices() * g.strideA, gen);
  d.b = randomBf16(g.matrices() * g.strideB, gen);
  d.c16 = randomBf16(g.matrices() * g.strideC, gen);
  d.c32.resize(d.c16.size());
  widenBF16(d.c16.data(), d.c32.data(), int64_t(d.c16.size()));
  return d;
}

/// C after CpuDevice::gemm on `path` with `threads` threads.
inline std::vector<uint8_t> onDevice(const DeviceCase &d, Bf16GemmPath path, int threads) {
  CpuDevice dev({}, threads);
  dev.setBf16GemmPath(path);
  Program p;
  p.steps.push_back(Step(StepKind::Matmul, {}, -1, d.g));
  EINC_EXPECT_OK(dev.prepare(p));
  EXPECT_EQ(dev.gemmWorkspaceBytes(), CpuDevice::gemmWorkspaceBytes(p, path));
  const bool bf16 = d.g.c == DType::BF16;
  std::vector<uint8_t> out(bf16 ? d.c16.size() * 2 : d.c32.size() * 4);
  std::memcpy(out.data(), bf16 ? static_cast<const void *>(d.c16.data()) : d.c32.data(),
              out.size());
  EINC_EXPECT_OK(dev.gemm(d.g, d.a.data(), d.b.data(), out.data()));
  return out;
}

/// Matrix i of `d` as a Case (its operands copied out of the strided ones).
inline Case matrixOf(const DeviceCase &d, int64_t i) {
  const GemmDesc &g = d.g;
  Case c;
  c.s.m = g.m, c.s.n = g.n, c.s.k = g.k, c.s.transA = g.transA, c.s.transB = g.transB;
  c.s.lda = g.lda, c.s.ldb = g.ldb, c.s.ldc = g.ldc;
  c.s.accumulate = g.epilogue == GemmEpilogue::Accumulate;
  c.s.bf16Result = g.c == DType::BF16;
  // The test's matrices are consecutive: the outer loop's strides continue
  // the batch's.
  c.a.assign(d.a.begin() + i * g.strideA, d.a.begin() + (i + 1) * g.strideA);
  c.b.assign(d.b.begin() + i * g.strideB, d.b.begin() + (i + 1) * g.strideB);
  c.c16.assign(d.c16.begin() + i * g.strideC, d.c16.begin() + (i + 1) * g.strideC);
  c.c32.assign(d.c32.begin() + i * g.strideC, d.c32.begin() + (i + 1) * g.strideC);
  return c;
}

/// Sets EINC_CPU_BF16 (or `name`) for one scope; null: unset.
struct EnvOverride {
  explicit EnvOverride(const char *value, const char *name = "EINC_CPU_BF16") : name(name) {
    if (const char *old = std::getenv(name))
      saved = old, had = true;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~EnvOverride() {
    if (had)
      setenv(name, saved.c_str(), 1);
    else
      unsetenv(name);
  }
  const char *name;
  std::string saved;
  bool had = false;
};

} // namespace einrt::testing

#endif // EINC_TEST_UNIT_RUNTIME_BF16GEMMCASES_H
