//===- StridedGemmTest.cpp - GEMMs on a transpose's strides, every library ===//
//
// gpt's attention as the CPU lowering plans it with its transposes folded
// (codegen/CpuLayoutFolds.h): q·kᵀ reading q and k in place from the qkv
// GEMM's [batch ctx (three heads hd)] output (lda = ldb = 3·heads·hd, the
// heads a batch of stride hd, the batch an outer loop), and att·v writing y
// straight into [batch ctx (heads hd)] (ldc = heads·hd, C's batch strided
// too). Each is checked against a triple loop on every f32 GEMM library
// this machine loads and every bf16 path it runs, and at 1 and 2 threads
// for the same bits.
//
//===----------------------------------------------------------------------===//
#include "runtime/Bf16Gemm.h"
#include "runtime/CpuDevice.h"
#include "runtime/FloatFormats.h"
#include "runtime/GemmLibrary.h"
#include "runtime/GemmTable.h"
#include "runtime/OneDnnMatmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace einrt;

namespace {

constexpr int64_t B = 2, T = 40, H = 3, D = 16, E = 3 * H * D; // qkv rows: E elements

/// The two attention GEMMs on a qkv buffer of [B, T, 3, H, D] and a score
/// buffer att of [B, H, T, T].
GemmDesc scores() { // att[b,h] = q[b,:,h,:] · k[b,:,h,:]^T (k: qkv + H·D)
  GemmDesc g;
  g.batch = H, g.m = T, g.n = T, g.k = D, g.transB = true;
  g.lda = E, g.ldb = E, g.ldc = T;
  g.strideA = D, g.strideB = D, g.strideC = T * T;
  g.outer.push_back({B, T * E, T * E, H * T * T});
  return g;
}
GemmDesc values() { // y[b,:,h,:] = att[b,h] · v[b,:,h,:] (v: qkv + 2·H·D), y [B, T, H, D]
  GemmDesc g;
  g.batch = H, g.m = T, g.n = D, g.k = T;
  g.lda = T, g.ldb = E, g.ldc = H * D;
  g.strideA = T * T, g.strideB = D, g.strideC = D;
  g.outer.push_back({B, H * T * T, T * E, T * H * D});
  return g;
}

/// C of `g` by loops, from operands as doubles, at C's strided places.
std::vector<double> naive(const GemmDesc &g, const std::vector<double> &a, int64_t offA,
                          const std::vector<double> &b, int64_t offB, int64_t cSize) {
  std::vector<double> c(size_t(cSize), 0.0);
  for (int64_t o = 0; o < g.outer[0].count; ++o)
    for (int64_t z = 0; z < g.batch; ++z) {
      const int64_t oa = offA + o * g.outer[0].strideA + z * g.strideA;
      const int64_t ob = offB + o * g.outer[0].strideB + z * g.strideB;
      const int64_t oc = o * g.outer[0].strideC + z * g.strideC;
      for (int64_t i = 0; i < g.m; ++i)
        for (int64_t j = 0; j < g.n; ++j) {
          double s = 0;
          for (int64_t p = 0; p < g.k; ++p)
            s += a[oa + (g.transA ? p * g.lda + i : i * g.lda + p)] *
                 b[ob + (g.transB ? j * g.ldb + p : p * g.ldb + j)];
          c[oc + i * g.ldc + j] = s;
        }
    }
  return c;
}

std::vector<float> randomFloats(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(static_cast<size_t>(n));
  for (float &x : v)
    x = u(gen);
  return v;
}

/// Both GEMMs on `dev`, f32 or bf16 operands (C f32): {att, y}.
std::pair<std::vector<float>, std::vector<float>>
run(CpuDevice &dev, DType operands, const std::vector<float> &qkv, std::string &error) {
  GemmDesc s = scores(), v = values();
  s.a = s.b = v.a = v.b = operands;
  Program p;
  p.steps.push_back(Step(StepKind::Matmul, {}, -1, s));
  p.steps.push_back(Step(StepKind::Matmul, {}, -1, v));
  std::vector<float> att(size_t(B * H * T * T)), y(size_t(B * T * H * D));
  if (!dev.prepare(p, error))
    return {};
  if (operands == DType::F32) {
    if (!dev.gemm(s, qkv.data(), qkv.data() + H * D, att.data(), error) ||
        !dev.gemm(v, att.data(), qkv.data() + 2 * H * D, y.data(), error))
      return {};
    return {att, y};
  }
  std::vector<uint16_t> qkv16(qkv.size()), att16(att.size());
  narrowToBF16(qkv.data(), qkv16.data(), int64_t(qkv.size()));
  if (!dev.gemm(s, qkv16.data(), qkv16.data() + H * D, att.data(), error))
    return {};
  narrowToBF16(att.data(), att16.data(), int64_t(att.size()));
  if (!dev.gemm(v, att16.data(), qkv16.data() + 2 * H * D, y.data(), error))
    return {};
  return {att, y};
}

/// The largest |got - want| over the largest |want|.
double relativeError(const std::vector<float> &got, const std::vector<double> &want) {
  double err = 0, scale = 1e-30;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::abs(double(got[i]) - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return err / scale;
}

/// `values` rounded to bf16 and back, as doubles.
std::vector<double> viaBf16(const std::vector<float> &values) {
  std::vector<uint16_t> narrow(values.size());
  std::vector<float> wide(values.size());
  narrowToBF16(values.data(), narrow.data(), int64_t(values.size()));
  widenBF16(narrow.data(), wide.data(), int64_t(values.size()));
  return std::vector<double>(wide.begin(), wide.end());
}

TEST(StridedGemm, AttentionLayoutsOnEveryLibrary) {
  const std::vector<float> qkv = randomFloats(B * T * E, 7);
  const std::vector<double> q(qkv.begin(), qkv.end());
  const std::vector<double> att = naive(scores(), q, 0, q, H * D, B * H * T * T);
  std::vector<float> att32(att.begin(), att.end());
  const std::vector<double> y = naive(values(), std::vector<double>(att32.begin(), att32.end()), 0,
                                      q, 2 * H * D, B * T * H * D);
  for (const GemmLibrary *lib : availableGemmLibraries()) {
    SCOPED_TRACE(lib->name);
    std::vector<float> results[2][2];
    for (int threads : {1, 2}) {
      CpuDevice dev({}, threads);
      dev.setGemmChooser(std::make_shared<GemmChooser>(lib));
      std::string error;
      auto [a, o] = run(dev, DType::F32, qkv, error);
      ASSERT_TRUE(error.empty()) << error;
      EXPECT_LT(relativeError(a, att), 1e-5);
      EXPECT_LT(relativeError(o, y), 1e-5);
      results[threads - 1][0] = a, results[threads - 1][1] = o;
    }
    EXPECT_EQ(results[0][0], results[1][0]);
    EXPECT_EQ(results[0][1], results[1][1]);
  }
}

TEST(StridedGemm, AttentionLayoutsOnEveryBf16Path) {
  const std::vector<float> qkv = randomFloats(B * T * E, 8);
  const std::vector<double> q = viaBf16(qkv);
  const std::vector<double> att = naive(scores(), q, 0, q, H * D, B * H * T * T);
  std::string ignored;
  std::vector<Bf16GemmPath> paths = {Bf16GemmPath::Emulate, Bf16GemmPath::Model};
  if (cpuHasAvx512Bf16())
    paths.push_back(Bf16GemmPath::Avx512Bf16);
  MatmulShape probe; // oneDNN with a bf16 matmul here
  probe.m = probe.n = probe.k = probe.lda = probe.ldb = probe.ldc = 8;
  probe.ab = MatmulType::BF16;
  if (OneDnnMatmul::get(probe, ignored))
    paths.push_back(Bf16GemmPath::OneDnn);
  for (Bf16GemmPath path : paths) {
    SCOPED_TRACE(bf16GemmPathName(path));
    std::vector<float> results[2][2];
    for (int threads : {1, 2}) {
      CpuDevice dev({}, threads);
      dev.setBf16GemmPath(path);
      std::string error;
      auto [a, o] = run(dev, DType::BF16, qkv, error);
      ASSERT_TRUE(error.empty()) << error;
      // f32 sums of bf16 products: f32 rounding only.
      EXPECT_LT(relativeError(a, att), 1e-5);
      // y from att as the GEMM rounded it to bf16.
      std::vector<double> y = naive(values(), viaBf16(a), 0, q, 2 * H * D, B * T * H * D);
      EXPECT_LT(relativeError(o, y), 1e-5);
      results[threads - 1][0] = a, results[threads - 1][1] = o;
    }
    EXPECT_EQ(results[0][0], results[1][0]);
    EXPECT_EQ(results[0][1], results[1][1]);
  }
}

} // namespace
