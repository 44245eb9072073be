//===- ExecutorTest.cpp - Reference kernels on hand-computed cases --------===//
#include "runtime/core/Executor.h"
#include "runtime/core/FloatFormats.h"
#include "runtime/core/ReferenceKernels.h"
#include "test/unit/StatusTesting.h"

#include "ProgramBuilder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace einrt;
using einrt::test::ProgramBuilder;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

/// Runs `p` with `args` (one vector per argument) and returns result 0, or
/// why creating or running the executor failed.
Expected<std::vector<double>> tryProgram(const Program &p, Precision prec,
                                         const std::vector<std::vector<double>> &args) {
  Expected<Executor> ex = Executor::create(p, prec);
  if (!ex.ok())
    return ex.takeStatus();
  for (size_t a = 0; a < args.size(); ++a)
    EINRT_TRY(ex->setArgument(a, args[a].data(), args[a].size()));
  EINRT_TRY(ex->run());
  return ex->getResult(0).values;
}

/// tryProgram's result 0; a failure fails the test and returns {}.
std::vector<double> runProgram(const Program &p, Precision prec,
                               const std::vector<std::vector<double>> &args) {
  Expected<std::vector<double>> values = tryProgram(p, prec, args);
  EINC_EXPECT_OK(values);
  return values.ok() ? values.take() : std::vector<double>{};
}

std::vector<double> iotaValues(int64_t n, double scale = 1, double offset = 0) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = offset + scale * double(i);
  return v;
}

class BothPrecisions : public ::testing::TestWithParam<Precision> {};

} // namespace

TEST_P(BothPrecisions, ContractBatchedMatmulMatchesNaive) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {2, 3, 4});
  int32_t y = b.arg(DType::F32, {2, 4, 5});
  int32_t z = b.step(StepKind::Contract, {x, y}, DType::F32, {2, 3, 5}, {{0}, {0}, {2}, {1}});
  b.result(z);
  std::vector<double> xs = iotaValues(24, 0.5, -3), ys = iotaValues(40, 0.25, -4);
  std::vector<double> r = runProgram(b.p, GetParam(), {xs, ys});
  ASSERT_EQ(r.size(), 30u);
  for (int bt = 0; bt < 2; ++bt)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j) {
        double acc = 0;
        for (int k = 0; k < 4; ++k)
          acc += xs[bt * 12 + i * 4 + k] * ys[bt * 20 + k * 5 + j];
        EXPECT_NEAR(r[bt * 15 + i * 5 + j], acc, 1e-4) << bt << i << j;
      }
}

TEST_P(BothPrecisions, ContractTransposedOperandsAndBatchInMiddle) {
  // lhs [k=4, b=2, i=3], rhs [j=5, b=2, k=4]: result [b, i, j].
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {4, 2, 3});
  int32_t y = b.arg(DType::F32, {5, 2, 4});
  int32_t z = b.step(StepKind::Contract, {x, y}, DType::F32, {2, 3, 5}, {{1}, {1}, {0}, {2}});
  b.result(z);
  std::vector<double> xs = iotaValues(24, 1, -7), ys = iotaValues(40, -1, 9);
  std::vector<double> r = runProgram(b.p, GetParam(), {xs, ys});
  ASSERT_EQ(r.size(), 30u);
  for (int bt = 0; bt < 2; ++bt)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j) {
        double acc = 0;
        for (int k = 0; k < 4; ++k)
          acc += xs[k * 6 + bt * 3 + i] * ys[j * 8 + bt * 4 + k];
        EXPECT_DOUBLE_EQ(r[bt * 15 + i * 5 + j], acc);
      }
}

TEST(Executor, ContractOuterProductAndFullDot) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {2});
  int32_t y = b.arg(DType::F32, {3});
  int32_t outer = b.step(StepKind::Contract, {x, y}, DType::F32, {2, 3}, {{}, {}, {}, {}});
  int32_t dot = b.step(StepKind::Contract, {x, x}, DType::F64, {}, {{}, {}, {0}, {0}});
  b.result(outer);
  b.result(dot);
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(b.p, Precision::F64));
  double xs[] = {2, 3}, ys[] = {1, 10, 100};
  EINC_ASSERT_OK(ex.setArgument(0, xs, 2));
  EINC_ASSERT_OK(ex.setArgument(1, ys, 3));
  EINC_ASSERT_OK(ex.run());
  EXPECT_EQ(ex.getResult(0).values, (std::vector<double>{2, 20, 200, 3, 30, 300}));
  EXPECT_EQ(ex.getResult(1).values, (std::vector<double>{13}));
  EXPECT_TRUE(ex.getResult(1).shape.empty());
  EXPECT_EQ(ex.getResult(0).name, "r0");
}

TEST_P(BothPrecisions, Transpose3D) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {2, 3, 4});
  int32_t t = b.step(StepKind::Transpose, {x}, DType::F32, {4, 2, 3}, {{2, 0, 1}});
  b.result(t);
  std::vector<double> xs = iotaValues(24);
  std::vector<double> r = runProgram(b.p, GetParam(), {xs});
  ASSERT_EQ(r.size(), 24u);
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        EXPECT_EQ(r[k * 6 + i * 3 + j], xs[i * 12 + j * 4 + k]);
}

TEST(Executor, TransposeI32AndI1) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::I32, {2, 3});
  int32_t t = b.step(StepKind::Transpose, {x}, DType::I32, {3, 2}, {{1, 0}});
  b.result(t);
  EXPECT_EQ(runProgram(b.p, Precision::F32, {{1, 2, 3, 4, 5, 6}}),
            (std::vector<double>{1, 4, 2, 5, 3, 6}));
  ProgramBuilder c;
  int32_t m = c.arg(DType::I1, {2, 2});
  c.result(c.step(StepKind::Transpose, {m}, DType::I1, {2, 2}, {{1, 0}}));
  EXPECT_EQ(runProgram(c.p, Precision::F32, {{1, 0, 0, 0}}), (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(runProgram(c.p, Precision::F32, {{0, 1, 0, 0}}), (std::vector<double>{0, 0, 1, 0}));
}

TEST(Executor, BroadcastNewAndSizeOneDims) {
  ProgramBuilder b;
  int32_t v = b.arg(DType::F32, {3});
  int32_t row = b.step(StepKind::Broadcast, {v}, DType::F32, {2, 3}, {{1}});
  b.result(row);
  EXPECT_EQ(runProgram(b.p, Precision::F32, {{1, 2, 3}}), (std::vector<double>{1, 2, 3, 1, 2, 3}));

  ProgramBuilder c; // [3, 1] → [3, 4] through a size-1 dim
  int32_t col = c.arg(DType::F32, {3, 1});
  c.result(c.step(StepKind::Broadcast, {col}, DType::F32, {3, 4}, {{0, 1}}));
  EXPECT_EQ(runProgram(c.p, Precision::F64, {{1, 2, 3}}),
            (std::vector<double>{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));

  ProgramBuilder d; // [2, 1] → [2, 3, 2] placing dims 0 and 2
  int32_t m = d.arg(DType::I32, {2, 1});
  d.result(d.step(StepKind::Broadcast, {m}, DType::I32, {2, 3, 2}, {{0, 2}}));
  EXPECT_EQ(runProgram(d.p, Precision::F32, {{7, 8}}),
            (std::vector<double>{7, 7, 7, 7, 7, 7, 8, 8, 8, 8, 8, 8}));

  ProgramBuilder e; // scalar → [2, 2]
  int32_t s = e.arg(DType::F32, {});
  e.result(e.step(StepKind::Broadcast, {s}, DType::F32, {2, 2}, {{}}));
  EXPECT_EQ(runProgram(e.p, Precision::F32, {{5}}), (std::vector<double>{5, 5, 5, 5}));
}

TEST_P(BothPrecisions, ReduceSumMaxMin) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {2, 3, 2});
  b.result(b.step(StepKind::ReduceSum, {x}, DType::F32, {3}, {{0, 2}}));
  std::vector<double> xs = iotaValues(12); // x[i][j][k] = 6i + 2j + k
  EXPECT_EQ(runProgram(b.p, GetParam(), {xs}),
            (std::vector<double>{0 + 1 + 6 + 7, 2 + 3 + 8 + 9, 4 + 5 + 10 + 11}));

  ProgramBuilder c;
  int32_t y = c.arg(DType::F32, {2, 3});
  c.result(c.step(StepKind::ReduceMax, {y}, DType::F32, {2}, {{1}}));
  EXPECT_EQ(runProgram(c.p, GetParam(), {{1, -5, 3, -1, -2, -3}}), (std::vector<double>{3, -1}));
  std::vector<double> r = runProgram(c.p, GetParam(), {{1, kNaN, 3, -1, -2, -3}});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TRUE(std::isnan(r[0])); // NaN propagates
  EXPECT_EQ(r[1], -1);

  ProgramBuilder d;
  int32_t z = d.arg(DType::F32, {2, 3});
  d.result(d.step(StepKind::ReduceMin, {z}, DType::F32, {3}, {{0}}));
  EXPECT_EQ(runProgram(d.p, GetParam(), {{1, -5, 3, -1, -2, 4}}), (std::vector<double>{-1, -5, 3}));

  ProgramBuilder e; // reduce everything; and over nothing
  int32_t w = e.arg(DType::I32, {2, 2});
  e.result(e.step(StepKind::ReduceSum, {w}, DType::I32, {}, {{0, 1}}));
  EXPECT_EQ(runProgram(e.p, GetParam(), {{1, 2, 3, 4}}), (std::vector<double>{10}));
  ProgramBuilder f;
  int32_t u = f.arg(DType::F32, {2});
  f.result(f.step(StepKind::ReduceSum, {u}, DType::F32, {2}, {{}}));
  EXPECT_EQ(runProgram(f.p, GetParam(), {{4, 5}}), (std::vector<double>{4, 5}));
}

TEST(Executor, ReduceOfEmptyDimGivesIdentity) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {0, 2});
  b.result(b.step(StepKind::ReduceMax, {x}, DType::F32, {2}, {{0}}));
  EXPECT_EQ(runProgram(b.p, Precision::F32, {{}}), (std::vector<double>{-kInf, -kInf}));
}

TEST_P(BothPrecisions, UnaryOps) {
  std::vector<double> xs = {0.25, 1, 4};
  auto unary = [&](StepKind k) {
    ProgramBuilder b;
    int32_t x = b.arg(DType::F32, {3});
    b.result(b.step(k, {x}, DType::F32, {3}));
    return runProgram(b.p, GetParam(), {xs});
  };
  double tol = GetParam() == Precision::F32 ? 1e-6 : 1e-15;
  auto near = [&](const std::vector<double> &got, const std::vector<double> &want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i])));
  };
  near(unary(StepKind::Neg), {-0.25, -1, -4});
  near(unary(StepKind::Exp), {std::exp(0.25), std::exp(1.0), std::exp(4.0)});
  near(unary(StepKind::Log), {std::log(0.25), 0, std::log(4.0)});
  near(unary(StepKind::Tanh), {std::tanh(0.25), std::tanh(1.0), std::tanh(4.0)});
  near(unary(StepKind::Sqrt), {0.5, 1, 2});
  near(unary(StepKind::Rsqrt), {2, 1, 0.5});
  near(unary(StepKind::Softplus),
       {std::log1p(std::exp(0.25)), std::log1p(std::exp(1.0)), std::log1p(std::exp(4.0))});
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {3});
  b.result(b.step(StepKind::Abs, {x}, DType::F32, {3}));
  EXPECT_EQ(runProgram(b.p, GetParam(), {{-2, 0, 3}}), (std::vector<double>{2, 0, 3}));
}

// softplus as max(x, 0) + log1p(e^-|x|): log(1 + e^x) computed directly
// would give 0 at -20 (1 + 2e-9 rounds to 1) and inf at 100 (e^100
// overflows f32).
TEST_P(BothPrecisions, SoftplusIsStable) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {5});
  b.result(b.step(StepKind::Softplus, {x}, DType::F32, {5}));
  std::vector<double> got = runProgram(b.p, GetParam(), {{-20, 0, 20, 100, -kInf}});
  std::vector<double> want = {2.061153620314381e-9, std::log(2.0), 20 + 2.061153620314381e-9, 100,
                              0};
  double tol = GetParam() == Precision::F32 ? 1e-6 : 1e-13;
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * std::fabs(want[i])) << i;
}

TEST(Executor, IntegerUnaryWraps) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::I32, {3});
  b.result(b.step(StepKind::Neg, {x}, DType::I32, {3}));
  double lo = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(runProgram(b.p, Precision::F32, {{5, -7, lo}}), (std::vector<double>{-5, 7, lo}));
}

TEST_P(BothPrecisions, BinaryOps) {
  std::vector<double> xs = {1, -2, 9, 2}, ys = {4, 3, -3, 0.5};
  auto binary = [&](StepKind k) {
    ProgramBuilder b;
    int32_t x = b.arg(DType::F32, {4});
    int32_t y = b.arg(DType::F32, {4});
    b.result(b.step(k, {x, y}, DType::F32, {4}));
    return runProgram(b.p, GetParam(), {xs, ys});
  };
  EXPECT_EQ(binary(StepKind::Add), (std::vector<double>{5, 1, 6, 2.5}));
  EXPECT_EQ(binary(StepKind::Sub), (std::vector<double>{-3, -5, 12, 1.5}));
  EXPECT_EQ(binary(StepKind::Mul), (std::vector<double>{4, -6, -27, 1}));
  std::vector<double> d = binary(StepKind::Div);
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0], 0.25);
  EXPECT_NEAR(d[1], -2.0 / 3.0, 1e-7);
  EXPECT_EQ(d[2], -3);
  EXPECT_EQ(d[3], 4);
  EXPECT_EQ(binary(StepKind::Max), (std::vector<double>{4, 3, 9, 2}));
  EXPECT_EQ(binary(StepKind::Min), (std::vector<double>{1, -2, -3, 0.5}));
  std::vector<double> p = binary(StepKind::Pow);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0], 1);
  EXPECT_EQ(p[1], -8);
  EXPECT_NEAR(p[2], 1.0 / 729.0, 1e-9);
  EXPECT_NEAR(p[3], std::sqrt(2.0), 1e-6);
}

TEST(Executor, MaxMinPropagateNaN) {
  for (StepKind k : {StepKind::Max, StepKind::Min}) {
    ProgramBuilder b;
    int32_t x = b.arg(DType::F32, {3});
    int32_t y = b.arg(DType::F32, {3});
    b.result(b.step(k, {x, y}, DType::F32, {3}));
    std::vector<double> r = runProgram(b.p, Precision::F32, {{kNaN, 1, kNaN}, {1, kNaN, kNaN}});
    ASSERT_EQ(r.size(), 3u);
    for (double v : r)
      EXPECT_TRUE(std::isnan(v)) << stepKindName(k);
  }
}

TEST(Executor, IntegerDivisionByZeroIsAnError) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::I32, {3});
  int32_t y = b.arg(DType::I32, {3});
  b.result(b.step(StepKind::Div, {x, y}, DType::I32, {3}, {}, 0, "ein.div at t.ein:3:4"));
  EXPECT_EQ(runProgram(b.p, Precision::F32, {{7, -7, 6}, {2, 2, -4}}),
            (std::vector<double>{3, -3, -1})); // truncation toward zero
  Status failed = tryProgram(b.p, Precision::F32, {{7, 1, 6}, {2, 0, 1}}).takeStatus();
  EINC_EXPECT_STATUS(failed, StatusCode::Invalid, "step 0 (div, ein.div at t.ein:3:4)");
  EINC_EXPECT_STATUS(failed, StatusCode::Invalid, "division by zero at element 1");
}

TEST(Executor, IntegerAddWraps) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::I32, {1});
  b.result(b.step(StepKind::Add, {x, x}, DType::I32, {1}));
  EXPECT_EQ(runProgram(b.p, Precision::F32, {{2147483647}}), (std::vector<double>{-2}));
}

TEST_P(BothPrecisions, CompareOps) {
  std::vector<double> xs = {1, 2, 3}, ys = {2, 2, 2};
  struct Case {
    StepKind k;
    std::vector<double> want;
  } cases[] = {{StepKind::CmpEq, {0, 1, 0}}, {StepKind::CmpNe, {1, 0, 1}},
               {StepKind::CmpLt, {1, 0, 0}}, {StepKind::CmpLe, {1, 1, 0}},
               {StepKind::CmpGt, {0, 0, 1}}, {StepKind::CmpGe, {0, 1, 1}}};
  for (const Case &c : cases) {
    ProgramBuilder b;
    int32_t x = b.arg(DType::F32, {3});
    int32_t y = b.arg(DType::F32, {3});
    int32_t r = b.step(c.k, {x, y}, DType::I1, {3});
    b.result(r);
    EXPECT_EQ(runProgram(b.p, GetParam(), {xs, ys}), c.want) << stepKindName(c.k);
    ProgramBuilder bi;
    int32_t xi = bi.arg(DType::I32, {3});
    int32_t yi = bi.arg(DType::I32, {3});
    bi.result(bi.step(c.k, {xi, yi}, DType::I1, {3}));
    EXPECT_EQ(runProgram(bi.p, GetParam(), {xs, ys}), c.want) << stepKindName(c.k);
  }
  ProgramBuilder n; // NaN compares unequal to everything
  int32_t x = n.arg(DType::F32, {1});
  n.result(n.step(StepKind::CmpNe, {x, x}, DType::I1, {1}));
  EXPECT_EQ(runProgram(n.p, GetParam(), {{kNaN}}), (std::vector<double>{1}));
}

TEST(Executor, Select) {
  ProgramBuilder b;
  int32_t c = b.arg(DType::I1, {4});
  int32_t x = b.arg(DType::F32, {4});
  int32_t y = b.arg(DType::F32, {4});
  b.result(b.step(StepKind::Select, {c, x, y}, DType::F32, {4}));
  EXPECT_EQ(runProgram(b.p, Precision::F64, {{1, 0, 0, 1}, {1, 2, 3, 4}, {-1, -2, -3, -4}}),
            (std::vector<double>{1, -2, -3, 4}));
}

TEST(Executor, Iota) {
  ProgramBuilder b;
  b.result(b.step(StepKind::Iota, {}, DType::I32, {3, 4}, {}, 1));
  EXPECT_EQ(runProgram(b.p, Precision::F32, {}),
            (std::vector<double>{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}));
  ProgramBuilder c;
  c.result(c.step(StepKind::Iota, {}, DType::F32, {3, 2}, {}, 0));
  EXPECT_EQ(runProgram(c.p, Precision::F64, {}), (std::vector<double>{0, 0, 1, 1, 2, 2}));
}

TEST_P(BothPrecisions, GatherWithRepeatedIds) {
  ProgramBuilder b;
  int32_t table = b.arg(DType::F32, {5, 2});
  int32_t ids = b.arg(DType::I32, {2, 3});
  b.result(b.step(StepKind::Gather, {table, ids}, DType::F32, {2, 3, 2}));
  std::vector<double> t = iotaValues(10, 1, 100); // row r = [100+2r, 101+2r]
  EXPECT_EQ(runProgram(b.p, GetParam(), {t, {4, 0, 4, 1, 1, 2}}),
            (std::vector<double>{108, 109, 100, 101, 108, 109, 102, 103, 102, 103, 104, 105}));
}

TEST(Executor, GatherOutOfRangeIsAnError) {
  ProgramBuilder b;
  int32_t table = b.arg(DType::F32, {5, 2});
  int32_t ids = b.arg(DType::I32, {3});
  b.result(b.step(StepKind::Gather, {table, ids}, DType::F32, {3, 2}, {}, 0,
                  "ein.gather at gpt.ein:10:3"));
  for (double bad : {5.0, -1.0, 2147483647.0}) {
    Status failed = tryProgram(b.p, Precision::F32, {iotaValues(10), {0, bad, 1}}).takeStatus();
    EINC_EXPECT_STATUS(failed, StatusCode::Invalid, "step 0 (gather, ein.gather at gpt.ein:10:3)");
    EINC_EXPECT_STATUS(failed, StatusCode::Invalid,
                       "index " + std::to_string(int64_t(bad)) +
                           " at position 1 is out of range [0, 5)");
  }
}

TEST_P(BothPrecisions, ScatterAddAccumulatesRepeatedIds) {
  ProgramBuilder b;
  int32_t upd = b.arg(DType::F32, {4, 2});
  int32_t ids = b.arg(DType::I32, {4});
  b.result(b.step(StepKind::ScatterAdd, {upd, ids}, DType::F32, {3, 2}));
  EXPECT_EQ(runProgram(b.p, GetParam(), {{1, 2, 10, 20, 100, 200, 1000, 2000}, {2, 0, 2, 2}}),
            (std::vector<double>{10, 20, 0, 0, 1101, 2202}));
  Status failed = tryProgram(b.p, GetParam(), {iotaValues(8), {0, 3, 0, 0}}).takeStatus();
  EINC_EXPECT_STATUS(failed, StatusCode::Invalid, "scatter_add");
  EINC_EXPECT_STATUS(failed, StatusCode::Invalid, "index 3 at position 1");
}

TEST(Executor, ScatterAddIsTheTransposeOfGather) {
  // <gather(T, ids), U> == <T, scatter_add(U, ids)> for random-ish data.
  ProgramBuilder b;
  int32_t table = b.arg(DType::F32, {4, 3});
  int32_t ids = b.arg(DType::I32, {2, 3});
  int32_t upd = b.arg(DType::F32, {2, 3, 3});
  int32_t g = b.step(StepKind::Gather, {table, ids}, DType::F32, {2, 3, 3});
  int32_t s = b.step(StepKind::ScatterAdd, {upd, ids}, DType::F32, {4, 3});
  int32_t lhs =
      b.step(StepKind::Contract, {g, upd}, DType::F32, {}, {{}, {}, {0, 1, 2}, {0, 1, 2}});
  int32_t rhs = b.step(StepKind::Contract, {table, s}, DType::F32, {}, {{}, {}, {0, 1}, {0, 1}});
  b.result(lhs);
  b.result(rhs);
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(b.p, Precision::F64));
  std::vector<double> t = iotaValues(12, 0.7, -3), u = iotaValues(18, -0.3, 2);
  std::vector<int32_t> i = {3, 1, 3, 0, 0, 2};
  EINC_ASSERT_OK(ex.setArgument(0, t.data(), t.size()));
  EINC_ASSERT_OK(ex.setArgument(1, i.data(), i.size()));
  EINC_ASSERT_OK(ex.setArgument(2, u.data(), u.size()));
  EINC_ASSERT_OK(ex.run());
  EXPECT_NEAR(ex.getResult(0).values[0], ex.getResult(1).values[0], 1e-12);
}

TEST(Executor, CastRules) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {7});
  b.result(b.step(StepKind::Cast, {x}, DType::I32, {7}));
  EXPECT_EQ(runProgram(b.p, Precision::F32, {{2.7, -2.7, 0.5, -0.5, kNaN, 1e10, -1e10}}),
            (std::vector<double>{2, -2, 0, 0, 0, 2147483647, -2147483648.0}));

  ProgramBuilder c;
  int32_t y = c.arg(DType::F32, {4});
  c.result(c.step(StepKind::Cast, {y}, DType::I1, {4}));
  EXPECT_EQ(runProgram(c.p, Precision::F32, {{0, -0.0, 0.1, -3}}),
            (std::vector<double>{0, 0, 1, 1}));

  ProgramBuilder d;
  int32_t z = d.arg(DType::I32, {2});
  d.result(d.step(StepKind::Cast, {z}, DType::F32, {2}));
  EXPECT_EQ(runProgram(d.p, Precision::F64, {{-3, 16777217}}),
            (std::vector<double>{-3, 16777217})); // f64 storage: exact
  EXPECT_EQ(runProgram(d.p, Precision::F32, {{-3, 16777217}}),
            (std::vector<double>{-3, 16777216})); // f32 storage rounds

  ProgramBuilder e;
  int32_t m = e.arg(DType::I1, {2});
  e.result(e.step(StepKind::Cast, {m}, DType::F32, {2}));
  EXPECT_EQ(runProgram(e.p, Precision::F32, {{1, 0}}), (std::vector<double>{1, 0}));
}

TEST_P(BothPrecisions, CastToBF16RoundsToNearestEven) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {6});
  b.result(b.step(StepKind::Cast, {x}, DType::BF16, {6}));
  double up = 1 + std::ldexp(1, -8) + std::ldexp(1, -20); // just above a tie
  std::vector<double> in = {1 + std::ldexp(1, -8),        // tie → even (1)
                            1 + 3 * std::ldexp(1, -8),    // tie → even (1+2^-6)
                            up,                           // → 1+2^-7
                            3.4e38,                       // overflow → inf
                            -1.0 / 3.0,
                            1e-40}; // bf16 subnormal
  std::vector<double> r = runProgram(b.p, GetParam(), {in});
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(r[0], 1.0);
  EXPECT_EQ(r[1], 1 + std::ldexp(1, -6));
  EXPECT_EQ(r[2], 1 + std::ldexp(1, -7));
  EXPECT_EQ(r[3], kInf);
  EXPECT_EQ(r[4], -0.333984375); // 0xBEAB
  EXPECT_EQ(r[5], roundToBF16(float(1e-40)));
  EXPECT_NE(r[5], 0);

  ProgramBuilder c;
  int32_t y = c.arg(DType::F32, {3});
  c.result(c.step(StepKind::Cast, {y}, DType::F16, {3}));
  std::vector<double> h = runProgram(c.p, GetParam(), {{65519, 65520, 0.1}});
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0], 65504);
  EXPECT_EQ(h[1], kInf);
  EXPECT_EQ(h[2], 0.0999755859375);
}

TEST(Executor, ReshapeCopyAndConstants) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {2, 3});
  int32_t k = b.constant(DType::F32, {6}, {2});     // splat
  int32_t k2 = b.constant(DType::I32, {2}, {5, 6}); // full
  int32_t r = b.step(StepKind::Reshape, {x}, DType::F32, {6});
  int32_t m = b.step(StepKind::Mul, {r, k}, DType::F32, {6});
  int32_t c = b.step(StepKind::Copy, {m}, DType::F32, {6});
  int32_t c2 = b.step(StepKind::Copy, {k2}, DType::I32, {2});
  b.result(c);
  b.result(c2);
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(b.p, Precision::F32));
  std::vector<float> xs = {1, 2, 3, 4, 5, 6};
  EINC_ASSERT_OK(ex.setArgument(0, xs.data(), xs.size()));
  EINC_ASSERT_OK(ex.run());
  EXPECT_EQ(ex.getResult(0).values, (std::vector<double>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(ex.getResult(0).shape, (std::vector<int64_t>{6}));
  EXPECT_EQ(ex.getResult(1).values, (std::vector<double>{5, 6}));
  EXPECT_EQ(ex.getResult(1).dtype, DType::I32);
  EXPECT_EQ(ex.elementCount(size_t(b.p.results[0])), 6);
  EXPECT_EQ(ex.storageOf(size_t(b.p.results[0])), StorageType::F32);
  EXPECT_EQ(ex.findBuffer("arg0"), 0);
  EXPECT_EQ(ex.findBuffer("nope"), -1);
}

// Executor::run's observer on a host device: after each step, in order,
// with the step's output already in memory (what the data-parallel ring
// reads while the rest of the run goes on); profiling runs call it too.
TEST(Executor, RunCallsTheObserverAfterEachStep) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {4});
  int32_t y = b.step(StepKind::Add, {x, x}, DType::F32, {4});
  int32_t z = b.step(StepKind::Mul, {y, y}, DType::F32, {4});
  b.result(y);
  b.result(z);
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(b.p, Precision::F32));
  std::vector<float> xs = {1, 2, 3, 4};
  EINC_ASSERT_OK(ex.setArgument(0, xs.data(), xs.size()));
  for (bool profiling : {false, true}) {
    ex.setProfiling(profiling);
    std::vector<size_t> seen;
    std::vector<float> yAfter0, zAfter0;
    auto observe = [&](size_t step) {
      seen.push_back(step);
      if (step == 0) { // y is in place, z not yet computed this run
        const auto *yp = static_cast<const float *>(ex.deviceData(size_t(y)));
        const auto *zp = static_cast<const float *>(ex.deviceData(size_t(z)));
        yAfter0.assign(yp, yp + 4);
        zAfter0.assign(zp, zp + 4);
      }
    };
    std::fill_n(static_cast<float *>(ex.deviceData(size_t(z))), 4, -1.0f);
    EINC_ASSERT_OK(ex.run(observe));
    EXPECT_EQ(seen, (std::vector<size_t>{0, 1}));
    EXPECT_EQ(yAfter0, (std::vector<float>{2, 4, 6, 8}));
    EXPECT_EQ(zAfter0, (std::vector<float>{-1, -1, -1, -1}));
    EXPECT_EQ(ex.getResult(1).values, (std::vector<double>{4, 16, 36, 64}));
  }
}

TEST(Executor, ArgumentsAreCheckedAndRoundedToBF16) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::BF16, {2});
  b.result(b.step(StepKind::Copy, {x}, DType::BF16, {2}));
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(b.p, Precision::F64));
  double three[] = {1, 2, 3};
  EINC_EXPECT_STATUS(ex.setArgument(0, three, 3), StatusCode::Invalid,
                     "has 2 elements, got 3 values");
  EINC_EXPECT_STATUS(ex.setArgument(1, three, 2), StatusCode::Invalid,
                     "argument index 1 out of range");
  double v[] = {1 + std::ldexp(1, -9), 0.1};
  EINC_ASSERT_OK(ex.setArgument(0, v, 2));
  EINC_ASSERT_OK(ex.run());
  EXPECT_EQ(ex.getResult(0).values, (std::vector<double>{1, roundToBF16(0.1)}));
}

TEST(Executor, EveryStepRoundsBF16Outputs) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::BF16, {1});
  int32_t y = b.arg(DType::BF16, {1});
  b.result(b.step(StepKind::Add, {x, y}, DType::BF16, {1}));
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(b.p, Precision::F32));
  double one = 1, tiny = std::ldexp(1, -9);
  EINC_ASSERT_OK(ex.setArgument(0, &one, 1));
  EINC_ASSERT_OK(ex.setArgument(1, &tiny, 1));
  EINC_ASSERT_OK(ex.run());
  EXPECT_EQ(ex.getResult(0).values[0], 1.0); // 1 + 2^-9 computed in f32, rounded
  ex.setRoundLowPrecision(false);            // bf16 buffers as plain floats
  EINC_ASSERT_OK(ex.run());
  EXPECT_EQ(ex.getResult(0).values[0], 1 + tiny);
}

TEST(Executor, CreateRejectsInvalidPrograms) {
  ProgramBuilder b;
  int32_t x = b.arg(DType::F32, {2});
  b.result(b.step(StepKind::Exp, {x}, DType::F32, {3}));
  b.p.name = "forward";
  Expected<Executor> ex = Executor::create(b.p, Precision::F32);
  ASSERT_FALSE(ex.ok());
  EXPECT_EQ(ex.status().code(), StatusCode::Invalid);
  EXPECT_NE(ex.status().message().find("invalid program 'forward': step 0 (exp"), std::string::npos)
      << ex.status().message();
}

// Each failure says what kind it is (runtime/base/Status.h), so a caller can
// act on it without reading the text.
TEST(Executor, FailuresCarryTheirKind) {
  HostDevice host;
  Expected<DeviceMemory> huge = host.allocate(int64_t(1) << 60, "a test's buffer");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::OutOfMemory);
  EXPECT_NE(huge.status().message().find("a test's buffer needs"), std::string::npos)
      << huge.status().message();
  Expected<DeviceMemory> none = host.allocate(0, "nothing");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->data, nullptr);

  // A step the device has no runner for never reaches the device: create
  // refuses it; the device's default says so as a broken promise.
  GemmDesc g;
  Status gemm = host.gemm(g, nullptr, nullptr, nullptr);
  EXPECT_EQ(gemm.code(), StatusCode::Internal);
  EXPECT_EQ(gemm.message(), "the reference device has no GEMM library");
  EXPECT_EQ(HostDevice(Precision::F64).addInOrder(nullptr, nullptr, 0, 0, 0).code(),
            StatusCode::Unavailable);

  // A bad index is the input's fault, named with its step.
  ProgramBuilder b;
  int32_t table = b.arg(DType::F32, {3, 2});
  int32_t ids = b.arg(DType::I32, {2});
  b.result(b.step(StepKind::Gather, {table, ids}, DType::F32, {2, 2}));
  Expected<Executor> ex = Executor::create(b.p, Precision::F32);
  ASSERT_TRUE(ex.ok()) << ex.status().message();
  const int32_t bad[] = {0, 7};
  ASSERT_TRUE(ex->setArgument(1, bad, 2).ok());
  Status run = ex->run();
  EXPECT_EQ(run.code(), StatusCode::Invalid);
  EXPECT_NE(run.message().find("step 0 (gather"), std::string::npos) << run.message();
  EXPECT_NE(run.message().find("index 7 at position 1 is out of range [0, 3)"), std::string::npos)
      << run.message();
  EXPECT_EQ(ex->readScalar(5).status().code(), StatusCode::Invalid);
  EXPECT_EQ(ex->write(size_t(table), nullptr, 1).code(), StatusCode::Invalid);
}

TEST(Executor, ExportImportBuffers) {
  ProgramBuilder b;
  int32_t w = b.buffer(DType::BF16, {2}, BufferRole::Param, "w");
  int32_t i = b.buffer(DType::I32, {2}, BufferRole::Param, "i");
  b.p.arguments = {w, i};
  b.result(b.step(StepKind::Copy, {w}, DType::BF16, {2}));
  EINC_ASSERT_OK_AND_ASSIGN(auto ex, Executor::create(b.p, Precision::F32));
  double v[] = {0.5, -3}, v3[] = {1, 2, 3};
  EINC_ASSERT_OK(ex.write(size_t(w), v, 2));
  TensorData t;
  EINC_ASSERT_OK_AND_ASSIGN(t, ex.exportBuffer(size_t(w)));
  EXPECT_EQ(t.name, "w");
  EXPECT_EQ(t.dtype, DType::BF16);
  ASSERT_EQ(t.bytes.size(), 4u);
  EXPECT_EQ(t.bytes[0] | (t.bytes[1] << 8), 0x3F00); // 0.5
  EXPECT_EQ(t.bytes[2] | (t.bytes[3] << 8), 0xC040); // -3
  EINC_ASSERT_OK(ex.importBuffer(size_t(w), TensorData::fromDoubles("w", DType::F32, {2}, v)));
  EINC_EXPECT_STATUS(ex.importBuffer(size_t(w), TensorData::fromDoubles("w", DType::F32, {3}, v3)),
                     StatusCode::Invalid, "shapes differ");
  EINC_EXPECT_STATUS(ex.importBuffer(size_t(i), TensorData::fromDoubles("i", DType::F32, {2}, v)),
                     StatusCode::Invalid, "cannot load");
}

INSTANTIATE_TEST_SUITE_P(Precisions, BothPrecisions,
                         ::testing::Values(Precision::F32, Precision::F64), [](const auto &info) {
                           return info.param == Precision::F32 ? "F32" : "F64";
                         });
