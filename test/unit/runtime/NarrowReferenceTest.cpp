//===- NarrowReferenceTest.cpp - bf16/f16 semantics on the reference backend ===//
//
// The narrow-float contract of ir/EinOps.td as the reference kernels run it:
// one rounding per op, a narrow sum folded in its own type, f32 sums in
// contractions, and ein.stochastic_round (deterministic, unbiased, only the
// two neighbours).
//
//===----------------------------------------------------------------------===//
#include "ProgramBuilder.h"
#include "test/unit/StatusTesting.h"

#include "runtime/core/FloatFormats.h"

#include <cmath>
#include <set>

using namespace einrt;
using namespace einrt::test;

namespace {

/// Runs `pb` on the reference device (float storage) with `args` and returns
/// every result, in order.
std::vector<std::vector<double>> runReference(ProgramBuilder &pb,
                                              const std::vector<std::vector<double>> &args,
                                              Precision precision = Precision::F32) {
  auto ex = Executor::create(pb.p, precision);
  EINC_EXPECT_OK(ex);
  if (!ex.ok())
    return {};
  for (size_t a = 0; a < args.size(); ++a)
    EINC_EXPECT_OK(ex->setArgument(a, args[a].data(), args[a].size()));
  EINC_EXPECT_OK(ex->run());
  std::vector<std::vector<double>> out;
  for (int32_t r : pb.p.results)
    out.push_back(valuesOf(*ex, size_t(r)));
  return out;
}

TEST(NarrowReference, ElementwiseResultsAreRoundedOnce) {
  for (Precision prec : {Precision::F32, Precision::F64}) {
    ProgramBuilder pb;
    int32_t a = pb.arg(DType::BF16, {2}), b = pb.arg(DType::BF16, {2});
    pb.result(pb.op(StepKind::Add, {a, b}, DType::BF16, {2}, NoPayload{}));
    int32_t h = pb.arg(DType::F16, {1});
    pb.result(pb.op(StepKind::Mul, {h, h}, DType::F16, {1}, NoPayload{}));
    pb.result(pb.op(StepKind::Exp, {h}, DType::F16, {1}, NoPayload{}));
    auto r = runReference(pb, {{1024, 1024}, {1, 5}, {300}}, prec);
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[0], (std::vector<double>{1024, 1032})); // the lecture's bf16 facts
    EXPECT_TRUE(std::isinf(r[1][0]));                   // 90000 overflows f16
    EXPECT_EQ(r[2][0], roundToF16(double(std::exp(300.0f)))) << "exp of 300 is +inf in f16";
  }
}

TEST(NarrowReference, NarrowSumFoldsInItsType) {
  // 10000 x 0.01 summed in a bf16 accumulator stops where 0.01 is below half
  // an ulp; the f32 sum of the same bf16 values is ~100.
  const int n = 10000;
  ProgramBuilder pb;
  int32_t x = pb.arg(DType::BF16, {n});
  pb.result(pb.op(StepKind::ReduceSum, {x}, DType::BF16, {}, AxisList{{0}}));
  int32_t wide = pb.op(StepKind::Cast, {x}, DType::F32, {n}, NoPayload{});
  pb.result(pb.op(StepKind::ReduceSum, {wide}, DType::F32, {}, AxisList{{0}}));
  auto r = runReference(pb, {std::vector<double>(n, 0.01)});
  ASSERT_EQ(r.size(), 2u);
  double fold = 0, item = roundToBF16(0.01);
  for (int i = 0; i < n; ++i)
    fold = roundToBF16(double(float(fold) + float(item)));
  EXPECT_EQ(r[0][0], fold);
  EXPECT_GT(r[0][0], 3.0);
  EXPECT_LT(r[0][0], 5.0);
  EXPECT_NEAR(r[1][0], n * item, 0.01);
}

TEST(NarrowReference, NarrowReductionFoldsRowMajorOverEveryReducedDim) {
  // Rows of [big, small, small, ...]: in order, each small addend is lost
  // against the big one; a sum in another order would keep them.
  ProgramBuilder pb;
  int32_t x = pb.arg(DType::BF16, {2, 3, 4});
  pb.result(pb.op(StepKind::ReduceSum, {x}, DType::BF16, {3}, AxisList{{0, 2}}));
  std::vector<double> v(24, 1.0);
  for (int j = 0; j < 3; ++j)
    v[size_t(j * 4)] = 256; // element (0, j, 0) comes first in its fold
  auto r = runReference(pb, {v});
  ASSERT_EQ(r.size(), 1u);
  // 256 + 1 = 256 in bf16 (ulp 2), seven times: the fold stays at 256.
  EXPECT_EQ(r[0], (std::vector<double>{256, 256, 256}));
}

TEST(NarrowReference, ScatterAddRoundsEveryAddition) {
  ProgramBuilder pb;
  int32_t u = pb.arg(DType::BF16, {4, 1});
  int32_t ids = pb.arg(DType::I32, {4});
  pb.result(pb.op(StepKind::ScatterAdd, {u, ids}, DType::BF16, {2, 1}, NoPayload{}));
  auto r = runReference(pb, {{256, 1, 1, 3}, {0, 0, 0, 1}});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0], (std::vector<double>{256, 3}));
}

TEST(NarrowReference, ContractionSumsInF32AndRoundsOnce) {
  // [256, 1, 1] . [1, 1, 1]: the f32 sum 258 is a bf16 value; a bf16
  // accumulator would have kept 256.
  ProgramBuilder pb;
  int32_t a = pb.arg(DType::BF16, {1, 3}), b = pb.arg(DType::BF16, {3, 1});
  pb.result(pb.op(StepKind::Contract, {a, b}, DType::BF16, {1, 1}, ContractDims{{}, {}, {1}, {0}}));
  pb.result(pb.op(StepKind::Contract, {a, b}, DType::F32, {1, 1}, ContractDims{{}, {}, {1}, {0}}));
  auto r = runReference(pb, {{256, 1, 1}, {1, 1, 1.0078125}});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1][0], 258.0078125); // exact in f32
  EXPECT_EQ(r[0][0], 258.0);       // one rounding to bf16
}

/// ein.stochastic_round of `x` (count values) under `seed`, as `dtype`.
std::vector<double> stochastic(const std::vector<double> &x, int32_t seed, DType dtype) {
  ProgramBuilder pb;
  int64_t n = int64_t(x.size());
  int32_t in = pb.arg(DType::F32, {n});
  int32_t s = pb.arg(DType::I32, {});
  int32_t seeds = pb.op(StepKind::Broadcast, {s}, DType::I32, {n}, AxisList{{}});
  pb.result(pb.op(StepKind::StochasticRound, {in, seeds}, dtype, {n}, NoPayload{}));
  auto r = runReference(pb, {x, {double(seed)}});
  return r.empty() ? std::vector<double>{} : r[0];
}

TEST(NarrowReference, StochasticRoundIsUnbiasedAndPicksANeighbour) {
  const int n = 1 << 16;
  struct Case {
    DType dtype;
    double x, lower, upper;
  } cases[] = {
      {DType::BF16, 1 + std::ldexp(1, -10), 1, 1 + std::ldexp(1, -7)},
      {DType::F16, 1 + std::ldexp(1, -13), 1, 1 + std::ldexp(1, -10)},
      {DType::BF16, -(3 + std::ldexp(1, -9)), -(3 + std::ldexp(1, -6)), -3},
      {DType::F16, std::ldexp(1.25, -24), std::ldexp(1, -24), std::ldexp(2, -24)}, // subnormal
  };
  for (const Case &c : cases) {
    std::vector<double> r = stochastic(std::vector<double>(n, c.x), 7, c.dtype);
    ASSERT_EQ(r.size(), size_t(n));
    double sum = 0;
    for (double v : r) {
      ASSERT_TRUE(v == c.lower || v == c.upper) << v << " for " << c.x;
      sum += v;
    }
    double p = (c.x - c.lower) / (c.upper - c.lower);
    double sigma = (c.upper - c.lower) * std::sqrt(p * (1 - p) / n);
    EXPECT_NEAR(sum / n, c.x, 4 * sigma) << dtypeName(c.dtype) << " " << c.x;
    // Deterministic: the same seed gives the same bits; another seed others.
    EXPECT_EQ(stochastic(std::vector<double>(n, c.x), 7, c.dtype), r);
    EXPECT_NE(stochastic(std::vector<double>(n, c.x), 8, c.dtype), r);
  }
}

TEST(NarrowReference, StochasticRoundKeepsValuesOfItsTypeAndSpecials) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> x = {1.0, -0.5, 0.0, -0.0, inf, -inf, 65504, 3.140625, std::nan("")};
  for (DType t : {DType::BF16, DType::F16}) {
    std::vector<double> r = stochastic(x, 123, t);
    ASSERT_EQ(r.size(), x.size());
    for (size_t i = 0; i + 1 < x.size(); ++i) {
      double expect = t == DType::BF16 ? roundToBF16(x[i]) : roundToF16(x[i]);
      if (expect == x[i])
        EXPECT_EQ(r[i], x[i]) << dtypeName(t) << " " << x[i];
    }
    EXPECT_TRUE(std::isnan(r.back()));
    EXPECT_TRUE(std::signbit(r[3]));
  }
}

TEST(NarrowReference, SmallUpdatesSurviveStochasticRoundingNotNearest) {
  // w = round(w + 1e-4) a hundred times from 1.0 in bf16 (ulp 2^-7 there):
  // nearest rounding loses every update, stochastic rounding keeps them on
  // average (llm.c's bf16 parameter updates).
  const int n = 1024, steps = 100;
  ProgramBuilder pb;
  int32_t w = pb.arg(DType::BF16, {n});
  int32_t s = pb.arg(DType::I32, {});
  int32_t wide = pb.op(StepKind::Cast, {w}, DType::F32, {n}, NoPayload{});
  int32_t step = pb.constant(DType::F32, {n}, {1e-4});
  int32_t sum = pb.op(StepKind::Add, {wide, step}, DType::F32, {n}, NoPayload{});
  int32_t seeds = pb.op(StepKind::Broadcast, {s}, DType::I32, {n}, AxisList{{}});
  pb.result(pb.op(StepKind::StochasticRound, {sum, seeds}, DType::BF16, {n}, NoPayload{}));
  pb.result(pb.op(StepKind::Cast, {sum}, DType::BF16, {n}, NoPayload{}));
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(pb.p, Precision::F32));
  std::vector<double> sr(n, 1.0), rne(n, 1.0);
  for (int t = 0; t < steps; ++t) {
    for (int which = 0; which < 2; ++which) {
      std::vector<double> &v = which ? rne : sr;
      double seed = t;
      EINC_ASSERT_OK(ex.setArgument(0, v.data(), v.size()));
      EINC_ASSERT_OK(ex.setArgument(1, &seed, 1));
      EINC_ASSERT_OK(ex.run());
      v = valuesOf(ex, size_t(pb.p.results[size_t(which)]));
    }
  }
  double mean = 0;
  for (double v : sr)
    mean += v / n;
  EXPECT_NEAR(mean, 1 + steps * 1e-4, 0.002);
  for (double v : rne)
    ASSERT_EQ(v, 1.0);
}

TEST(NarrowReference, StochasticBitsAreAFunctionOfSeedAndIndex) {
  // Distinct for distinct indices under one seed (the hash is a bijection
  // of the low 32 index bits), and they move with the seed.
  std::set<uint32_t> seen;
  for (int64_t i = 0; i < 4096; ++i)
    seen.insert(stochasticBits(5, i));
  EXPECT_EQ(seen.size(), 4096u);
  int same = 0;
  for (int64_t i = 0; i < 4096; ++i)
    same += stochasticBits(5, i) == stochasticBits(6, i);
  EXPECT_LE(same, 1);
  EXPECT_NE(stochasticBits(5, 1), stochasticBits(5, int64_t(1) << 32 | 1));
}

} // namespace
