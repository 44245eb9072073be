//===- InitTest.cpp - Seeded RNG and parameter initialisation -------------===//
#include "runtime/core/Init.h"
#include "runtime/core/FloatFormats.h"
#include "test/unit/StatusTesting.h"

#include "ProgramBuilder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

using namespace einrt;
using einrt::test::ProgramBuilder;

namespace {

Init normal(double mean, double std, double clip = 0) {
  Init i;
  i.kind = "normal";
  i.mean = mean;
  i.std = std;
  i.clip = clip;
  return i;
}

struct Moments {
  double mean = 0, std = 0, lo = 1e300, hi = -1e300;
};
Moments moments(const std::vector<double> &v) {
  Moments m;
  for (double x : v) {
    m.mean += x;
    m.lo = std::min(m.lo, x);
    m.hi = std::max(m.hi, x);
  }
  m.mean /= double(v.size());
  for (double x : v)
    m.std += (x - m.mean) * (x - m.mean);
  m.std = std::sqrt(m.std / double(v.size()));
  return m;
}

/// One Param buffer of `n` elements with `init`; returns its values.
std::vector<double> initOne(const Init &init, int64_t n, uint64_t seed, DType t = DType::F32,
                            Precision prec = Precision::F64) {
  ProgramBuilder b;
  int32_t w = b.buffer(t, {n}, BufferRole::Param, "w");
  b.p.buffers[w].init = init;
  b.p.arguments.push_back(w);
  auto ex = Executor::create(b.p, prec);
  EINC_EXPECT_OK(ex);
  if (!ex.ok())
    return {};
  EINC_EXPECT_OK(initParams(*ex, seed));
  return einrt::test::valuesOf(*ex, size_t(w));
}

} // namespace

TEST(Rng, DeterministicAndSeedSensitive) {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    differs |= x != c.next();
  }
  EXPECT_TRUE(differs);
}

TEST(Rng, StateSaveRestoreIsBitExact) {
  Rng a(7);
  a.normal(); // leaves a cached spare
  Rng::State st = a.state();
  std::vector<double> first;
  for (int i = 0; i < 10; ++i)
    first.push_back(a.normal());
  Rng b(0);
  b.setState(st);
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(b.normal(), first[i]);
}

TEST(Rng, UniformAndBelow) {
  Rng r(1);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 70000; ++i) {
    double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    uint64_t k = r.below(7);
    ASSERT_LT(k, 7u);
    counts[k]++;
  }
  for (int c : counts)
    EXPECT_NEAR(c, 10000, 500);
}

TEST(Init, NormalMoments) {
  std::vector<double> v = initOne(normal(0.5, 2.0), 200000, 1);
  Moments m = moments(v);
  EXPECT_NEAR(m.mean, 0.5, 0.03);
  EXPECT_NEAR(m.std, 2.0, 0.02);
  EXPECT_LT(m.lo, 0.5 - 8.0); // tails present without a clip
}

TEST(Init, TruncatedNormalBoundsAndMoments) {
  std::vector<double> v = initOne(normal(1.0, 0.02, 2.0), 200000, 9);
  Moments m = moments(v);
  EXPECT_GE(m.lo, 1.0 - 0.04);
  EXPECT_LE(m.hi, 1.0 + 0.04);
  EXPECT_NEAR(m.mean, 1.0, 0.0005);
  // The std of a normal truncated at ±2σ is σ·sqrt(1 - 4φ(2)/(2Φ(2)-1)).
  double phi2 = std::exp(-2.0) / std::sqrt(2 * 3.14159265358979323846);
  double mass = std::erf(2.0 / std::sqrt(2.0));
  double expected = 0.02 * std::sqrt(1 - 4 * phi2 / mass);
  EXPECT_NEAR(m.std, expected, 0.0003);
  EXPECT_GT(m.hi, 1.0 + 0.039); // the bounds are reached, not shrunk
}

TEST(Init, UniformZerosOnes) {
  Init u;
  u.kind = "uniform";
  u.low = -3;
  u.high = 1;
  Moments m = moments(initOne(u, 100000, 3));
  EXPECT_GE(m.lo, -3.0);
  EXPECT_LT(m.hi, 1.0);
  EXPECT_NEAR(m.mean, -1.0, 0.02);
  EXPECT_NEAR(m.std, 4 / std::sqrt(12.0), 0.01);
  Init z;
  z.kind = "zeros";
  EXPECT_EQ(initOne(z, 5, 1), std::vector<double>(5, 0.0));
  Init o;
  o.kind = "ones";
  EXPECT_EQ(initOne(o, 5, 1), std::vector<double>(5, 1.0));
}

TEST(Init, DeterministicPerSeedAndPerName) {
  EXPECT_EQ(initOne(normal(0, 1), 1000, 5), initOne(normal(0, 1), 1000, 5));
  EXPECT_NE(initOne(normal(0, 1), 1000, 5), initOne(normal(0, 1), 1000, 6));
  // Both precisions draw the same values (f32 storage rounds them).
  std::vector<double> d = initOne(normal(0, 1), 100, 5, DType::F32, Precision::F64);
  std::vector<double> f = initOne(normal(0, 1), 100, 5, DType::F32, Precision::F32);
  for (size_t i = 0; i < d.size(); ++i)
    EXPECT_EQ(float(d[i]), float(f[i]));
  // bf16 params are rounded to bf16.
  for (double x : initOne(normal(0, 1), 100, 5, DType::BF16))
    EXPECT_EQ(roundToBF16(x), x);

  // Two params with different names draw different streams; adding a
  // parameter leaves the others unchanged.
  ProgramBuilder b;
  int32_t a = b.buffer(DType::F32, {4}, BufferRole::Param, "a");
  int32_t c = b.buffer(DType::F32, {4}, BufferRole::Param, "c");
  b.p.buffers[a].init = normal(0, 1);
  b.p.buffers[c].init = normal(0, 1);
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(b.p, Precision::F64));
  EINC_ASSERT_OK(initParams(ex, 11));
  using einrt::test::valuesOf;
  EXPECT_NE(valuesOf(ex, a), valuesOf(ex, c));
  ProgramBuilder b2 = b;
  int32_t extra = b2.buffer(DType::F32, {4}, BufferRole::Param, "extra");
  b2.p.buffers[extra].init = normal(0, 1);
  std::swap(b2.p.buffers[0], b2.p.buffers[2]); // and reorder
  EINC_ASSERT_OK_AND_ASSIGN(auto ex2, Executor::create(b2.p, Precision::F64));
  EINC_ASSERT_OK(initParams(ex2, 11));
  EXPECT_EQ(valuesOf(ex2, 2), valuesOf(ex, a));
  EXPECT_EQ(valuesOf(ex2, 1), valuesOf(ex, c));
}

TEST(Init, RandomInputs) {
  ProgramBuilder b;
  int32_t tokens = b.arg(DType::I32, {4000}, "tokens");
  int32_t x = b.arg(DType::F32, {20000}, "x");
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(b.p, Precision::F32));
  EINC_ASSERT_OK(fillRandomInputs(ex, 3, 50));
  std::set<int32_t> seen;
  for (double t : einrt::test::valuesOf(ex, size_t(tokens))) {
    ASSERT_GE(t, 0);
    ASSERT_LT(t, 50);
    seen.insert(t);
  }
  EXPECT_EQ(seen.size(), 50u);
  Moments m = moments(einrt::test::valuesOf(ex, size_t(x)));
  EXPECT_NEAR(m.mean, 0, 0.03);
  EXPECT_NEAR(m.std, 1, 0.03);
  std::vector<double> before = einrt::test::valuesOf(ex, size_t(tokens));
  EINC_ASSERT_OK(fillRandomInts(ex, size_t(tokens), 3, 50));
  EXPECT_EQ(einrt::test::valuesOf(ex, size_t(tokens)), before); // reproducible
  EINC_EXPECT_STATUS(fillRandomInts(ex, size_t(tokens), 3, 0), StatusCode::Invalid,
                     "upper bound > 0");
  EINC_EXPECT_STATUS(fillRandomInts(ex, 99, 3, 5), StatusCode::Invalid, "");
}
