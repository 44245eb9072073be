//===- StepPredictionTest.cpp - A step's roofline and the profile table ---===//
//
// runtime/core/StepPrediction.h on a hand-made Program: a GEMM's FLOPs and the
// bytes of every distinct buffer it touches (C read again when it
// accumulates, an epilogue's operands and outputs), a kernel's bytes at
// each buffer's own width, the bound, and the table's groups and worst-
// predicted order.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/StepPrediction.h"

#include <gtest/gtest.h>

using namespace einrt;

namespace {

Buffer buffer(const char *name, DType t, std::vector<int64_t> shape) {
  Buffer b;
  b.name = name;
  b.dtype = t;
  b.shape = std::move(shape);
  return b;
}

/// A [4,8] x B [8,16] -> C [4,16] (f32), then a kernel C -> D (bf16),
/// then C += A·B again with an epilogue reading a bias E [16] into F [4,16].
Program sample() {
  Program p;
  p.name = "f";
  p.buffers = {buffer("A", DType::F32, {4, 8}),  buffer("B", DType::F32, {8, 16}),
               buffer("C", DType::F32, {4, 16}), buffer("D", DType::BF16, {4, 16}),
               buffer("E", DType::F32, {16}),    buffer("F", DType::F32, {4, 16})};
  GemmDesc g;
  g.m = 4, g.n = 16, g.k = 8, g.lda = 8, g.ldb = 16, g.ldc = 16;
  p.steps.push_back(Step(StepKind::Matmul, {0, 1}, 2, g, "the first gemm"));
  p.steps.push_back(Step(StepKind::Kernel, {2}, 3, KernelLaunch{0, {}}, "a cast"));
  GemmDesc acc = g;
  acc.epilogue = GemmEpilogue::Accumulate;
  acc.post.kernel = 1;
  acc.post.operands = {2, 4};
  acc.post.outputs = {5};
  p.steps.push_back(Step(StepKind::Matmul, {0, 1}, 2, acc, "the second gemm"));
  return p;
}

} // namespace

TEST(StepPrediction, BytesFlopsAndTheBound) {
  Program p = sample();
  StepRoofline r{1000.0, 1000.0}; // 1000 FLOP/s, 1000 B/s: seconds are readable
  StepPrediction gemm = predictStep(p, 0, r);
  EXPECT_EQ(gemm.flops, 2 * 4 * 16 * 8);
  EXPECT_EQ(gemm.bytes, (32 + 128 + 64) * 4);
  EXPECT_TRUE(gemm.computeBound);
  EXPECT_DOUBLE_EQ(gemm.seconds, 1.024);

  StepPrediction cast = predictStep(p, 1, r);
  EXPECT_EQ(cast.flops, 0);
  EXPECT_EQ(cast.bytes, 64 * 4 + 64 * 2); // f32 in, bf16 out
  EXPECT_FALSE(cast.computeBound);
  EXPECT_DOUBLE_EQ(cast.seconds, 0.384);

  // A, B, C (written, and read again: accumulate), E, F.
  StepPrediction acc = predictStep(p, 2, r);
  EXPECT_EQ(acc.bytes, (32 + 128 + 64 + 64 + 16 + 64) * 4);
  EXPECT_EQ(acc.flops, 1024);
  EXPECT_FALSE(acc.computeBound);
  EXPECT_DOUBLE_EQ(acc.seconds, 1.472);

  // No device figures: no prediction, not a division by zero.
  EXPECT_EQ(predictStep(p, 0, StepRoofline{}).seconds, 0.0);
}

TEST(StepPrediction, TheTableOrdersTheWorstPredictedFirst) {
  Program p = sample();
  StepRoofline r{1000.0, 1000.0};
  // Two runs: measured 2.048 s, 0.384 s and 6 s in all (per run: 1.024,
  // 0.192, 3.0): the second gemm is 1.53 s off, the first exact, the cast
  // 0.192 s off.
  std::string table = formatPredictedProfile(p, {2.048, 0.384, 6.0}, 2, r, 3);
  EXPECT_NE(table.find("roofline: 1e-09 TFLOP/s matrix, 1e-06 GB/s"), std::string::npos) << table;
  EXPECT_NE(table.find("matmul+epilogue"), std::string::npos) << table;
  size_t worst = table.find("worst predicted");
  ASSERT_NE(worst, std::string::npos) << table;
  size_t second = table.find("the second gemm", worst), cast = table.find("a cast", worst),
         first = table.find("the first gemm", worst);
  ASSERT_NE(second, std::string::npos) << table;
  EXPECT_LT(second, cast) << table;
  EXPECT_LT(cast, first) << table;
  EXPECT_NE(table.find("3000.000 ms measured  1472.000 predicted    2.04x memory"),
            std::string::npos)
      << table;
  // The whole run: 1.024 + 0.384 + 1.472 predicted, 1.024 + 0.192 + 3.0 measured.
  EXPECT_NE(table.find("the whole run               3    2880.000    4216.000     1.46"),
            std::string::npos)
      << table;
}
